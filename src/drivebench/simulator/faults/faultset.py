"""``FaultSet``: the faults a simulator is running with, and every decision they make.

The simulator holds one ``FaultSet`` (``sim.faults``). With no fault active every method here is a
no-op that returns its input unchanged (or ``False``/empty/``None``), so a clean server takes the
same code path as before faults existed. Each hook is named after its fault:

=================  ===============================================================================
fault              hook (caller)
=================  ===============================================================================
leaky-acl          ``leaky_acl_docs`` (``recall.recall_as``: widen the visible set, skip re-check)
stale-acl          ``hold_stale_policy`` (``PolicyEngines.engine``: keep the previous engine)
stale-index        ``index_frozen`` (``Simulator.sync_index``), ``served_versions`` (visibility)
cad-blind          ``extract_config`` (ingestion); switching it re-ingests dxf documents
citation-drop      ``drop_citation`` (``simulator.answer``)
wrong-citation     ``misattribute`` (``simulator.answer``)
permission-outage  ``permission_outage`` (``Simulator.visible_chunks``: the permission check raises)
latency/errors/    ``request_fault`` (the API's fault middleware and the MCP tools)
throttle
answer-unfiltered- ``answer_unfiltered`` (``recall.answer_context``: compose from an unfiltered search)
context
role-from-body     ``identity_from_body`` (``Simulator.principal_for``: the body names who acts)
shared-answer-     ``shared_answer`` / ``keep_shared_answer`` (``server.api.answer.answer_for``)
cache
post-filter        ``post_filter_fetch_k`` (``recall.recall_as``: unfiltered top fetch_k, then the filter)
=================  ===============================================================================

Decisions are hashes (``unit``) of the fault's seed and what is decided about, never ``random``:
the same requests give the same faults. Request-level faults also hash the attempt number of a
request key (the n-th identical request), so a retried request gets a fresh, still reproducible,
draw whatever the interleaving of other requests.

A recall asks the hooks of the faults that change a recall (``RECALL_FAULTS``) only while one of them is on
(``FaultSet.touches_recall``, a plain attribute recomputed whenever the faults are switched): a clean recall
calls nothing here.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from drivebench.drive.clock import to_us
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.simulator.faults.catalog import FAULT_DEFS, Fault

if TYPE_CHECKING:
    from drivebench.drive.model import VersionRec
    from drivebench.drive.permissions import PermissionEngine, Principal
    from drivebench.drive.permissions.pointintime import Policies
    from drivebench.drive.state import Drive
    from drivebench.extract import ExtractConfig
    from drivebench.search.index.chunk_store import ChunkStore
    from drivebench.search.index.embedders import Embedder
    from drivebench.search.index.embedding_cache import EmbeddingCache
    from drivebench.simulator.config import SimConfig

log = logging.getLogger("drivebench.faults")
_MAX_ATTEMPT_KEYS = 100_000
# the faults whose hooks a recall asks (recall.recall_as, Simulator.principal_for, Simulator.visible_chunks)
RECALL_FAULTS = frozenset({"leaky-acl", "permission-outage", "post-filter", "role-from-body"})


def unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from ``parts`` (sha256; stable across processes)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


@dataclass(frozen=True)
class RequestFault:
    """What to do to one API request: wait ``delay_s``, then (if ``status``) answer that error."""

    delay_s: float = 0.0
    status: int | None = None
    retry_after_s: float | None = None
    fault: str | None = None  # the fault that set ``status``

    @property
    def message(self) -> str:
        if self.status == 429:
            return f"throttled by the injected fault 'throttle': retry after {self.retry_after_s:g} s"
        return f"injected fault '{self.fault}': the server answered {self.status}"


class Reindexable(Protocol):
    """What the fault set's owner offers for re-indexing one file type (``reingest_file_type``): the drive, the
    index, the caches and the configuration it was built with. A ``Simulator`` is one; written against this
    narrow view, the faults never import the simulator that holds them."""

    _index_lock: threading.Lock
    store: ChunkStore
    embedder: Embedder
    cache: EmbeddingCache
    config: SimConfig
    faults: FaultSet
    index_version: int

    @property
    def drive(self) -> Drive: ...


class FaultSet:
    def __init__(self, faults: Iterable[Fault] = (), owner: Reindexable | None = None) -> None:
        self._faults: dict[str, Fault] = {}
        self._lock = threading.RLock()
        self._owner = owner
        self.generation = 0
        self.touches_recall = False  # a fault of RECALL_FAULTS is on: the recall path asks its hooks
        self.injected: Counter[str] = Counter()
        self._attempts: Counter[tuple[str, str]] = Counter()
        self._stale_since: tuple[int, float] | None = None
        self._leak_cache: OrderedDict[tuple[object, ...], frozenset[str]] = OrderedDict()
        self._answers: OrderedDict[str, Any] = OrderedDict()  # shared-answer-cache: request body -> answer
        if faults:
            self.replace(faults)

    # ------------------------------------------------------------------ the set
    def __bool__(self) -> bool:
        return bool(self._faults)

    def __contains__(self, name: object) -> bool:
        return name in self._faults

    def get(self, name: str) -> Fault | None:
        return self._faults.get(name)

    @property
    def active(self) -> list[Fault]:
        return list(self._faults.values())

    def replace(self, faults: Iterable[Fault]) -> None:
        """Run with exactly ``faults`` from now on (an empty iterable: a clean server). Setting faults
        (even the same ones again) restarts the request-attempt counters, so a run can be replayed."""
        new = {f.name: f for f in faults}
        with self._lock:
            old = self._faults
            self._attempts.clear()
            if new == old:
                return
            self._faults = new
            self.touches_recall = not RECALL_FAULTS.isdisjoint(new)
            self.generation += 1
            self._leak_cache.clear()
            self._answers.clear()
            if "stale-acl" not in new:
                self._stale_since = None
        log.warning("faults now: %s", ", ".join(f.spec() for f in new.values()) or "none (clean)")
        if ("cad-blind" in old) != ("cad-blind" in new) and self._owner is not None:
            reingest_file_type(self._owner, "dxf")

    def enable(self, fault: Fault | str, **params: Any) -> Fault:
        f = fault if isinstance(fault, Fault) else Fault.make(fault, params)
        self.replace([*(x for x in self._faults.values() if x.name != f.name), f])
        return f

    def disable(self, name: str) -> None:
        self.replace(x for x in self._faults.values() if x.name != name)

    def clear(self) -> None:
        self.replace([])

    def header_value(self) -> str:
        """The ``X-Drivebench-Faults`` response header: every active fault as ``name:key=value...``
        with all its parameters (seeds included), comma-separated; ``none`` on a clean server."""
        return ",".join(f.full_spec() for f in self._faults.values()) or "none"

    def summary(self) -> dict[str, Any]:
        """What ``/_sim/stats`` reports: the active faults (names, full parameters, seeds), their
        specs, the generation and how often each fault fired."""
        return {
            "active": [f.as_dict() for f in self._faults.values()],
            "specs": [f.full_spec() for f in self._faults.values()],
            "generation": self.generation,
            "injected": dict(sorted(self.injected.items())),
        }

    def describe(self) -> dict[str, Any]:
        return {
            "active": [f.as_dict() for f in self._faults.values()],
            "generation": self.generation,
            "injected": dict(sorted(self.injected.items())),
            "available": [
                {"name": d.name, "description": d.description, "defaults": d.defaults, "damages": d.damages}
                for d in FAULT_DEFS.values()
            ],
        }

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.injected[name] += n

    def _decide(self, fault: Fault, *key: object) -> bool:
        return unit(fault.get("seed"), fault.name, *key) < fault.num("share")

    # ------------------------------------------------------------------ cad-blind
    def extract_config(self, base: ExtractConfig) -> ExtractConfig:
        """The extraction config ingestion uses: ``base``, with dxf ``filename-only`` under cad-blind."""
        return replace(base, dxf="filename-only") if "cad-blind" in self._faults else base

    # ------------------------------------------------------------------ stale-index
    def index_frozen(self) -> bool:
        """stale-index: the index does not follow the change feed (``sync_index`` returns early)."""
        if "stale-index" in self._faults:
            self._count("stale-index")
            return True
        return False

    def served_versions(self, versions: list[VersionRec], store: ChunkStore) -> list[VersionRec]:
        """The versions whose succession decides which one is current in search. Clean: all of them.
        stale-index: only indexed ones, so the last indexed version stays current (a stale hit)."""
        if "stale-index" not in self._faults:
            return versions
        return [v for v in versions if v.version_id in store.by_version]

    # ------------------------------------------------------------------ stale-acl
    def hold_stale_policy(self, engine: PermissionEngine, drive: Drive) -> bool:
        """stale-acl: True while the engine built before a policy change must still be served.

        The delay starts when the change is first seen (the first engine access after it); after
        ``delay_s`` the engine catches up with every change made so far."""
        fault = self._faults.get("stale-acl")
        if fault is None:
            return False
        now = time.monotonic() if fault.get("clock") == "wall" else to_us(drive.clock.now()) / 1e6
        with self._lock:
            if self._stale_since is None or self._stale_since[0] != engine.policy_version:
                self._stale_since = (engine.policy_version, now)
            if now - self._stale_since[1] < fault.num("delay_s"):
                self.injected["stale-acl"] += 1
                return True
            self._stale_since = None
            return False

    # ------------------------------------------------------------------ leaky-acl
    def leaky_acl_docs(self, policies: Policies, principal: Principal, query: str, at: datetime) -> frozenset[str]:
        """leaky-acl: documents the principal may NOT preview that this query lets through anyway.

        Candidates are documents the principal may only ``list`` and documents someone in another
        department may preview; each (query, document) pair leaks with probability ``share``."""
        fault = self._faults.get("leaky-acl")
        if fault is None:
            return frozenset()
        candidates = self._leak_candidates(policies, principal, at)
        chosen = frozenset(d for d in candidates if self._decide(fault, query, principal.subject, d))
        if chosen:
            self._count("leaky-acl")
        return chosen

    def _leak_candidates(self, policies: Policies, principal: Principal, at: datetime) -> frozenset[str]:
        engine, drive = policies.engine, policies.drive
        key = (principal.subject, principal.clearance, principal.department, engine.policy_version, to_us(at))
        with self._lock:
            if key in self._leak_cache:
                return self._leak_cache[key]
        own = engine.allowed_mask(principal, "preview", at)
        others = np.zeros_like(own)
        for user in drive.users.values():
            if user.department != principal.department:
                others |= engine.allowed_mask(engine.user_principal(user.user_id), "preview", at)
        out = {engine.doc_ids[i] for i in np.flatnonzero(others & ~own)}
        for i in np.flatnonzero(~own):
            doc_id = engine.doc_ids[i]
            if doc_id in out or doc_id not in drive.documents:
                continue
            if engine.enforce(principal, doc_obj(doc_id), "list", at, engine.drive.doc(doc_id).secret_level):
                out.add(doc_id)
        result = frozenset(out)
        with self._lock:
            self._leak_cache[key] = result
            while len(self._leak_cache) > 256:
                self._leak_cache.popitem(last=False)
        return result

    # ------------------------------------------------------------------ permission-outage
    def permission_outage(self) -> bool:
        """permission-outage: the permission engine is down, so the caller's permission check must raise
        (recall turns that into ``PermissionCheckFailed``: a 503, never results)."""
        if "permission-outage" in self._faults:
            self._count("permission-outage")
            return True
        return False

    # ------------------------------------------------------------------ answers
    def drop_citation(self, query: str, doc_id: str) -> bool:
        """citation-drop: leave this document's citation out of the answer to ``query``."""
        fault = self._faults.get("citation-drop")
        if fault is None or not self._decide(fault, query, doc_id):
            return False
        self._count("citation-drop")
        return True

    def misattribute(self, query: str, doc_id: str, candidates: Sequence[str]) -> str | None:
        """wrong-citation: the document to cite instead of ``doc_id`` (None: cite it correctly)."""
        fault = self._faults.get("wrong-citation")
        others = [c for c in candidates if c != doc_id]
        if fault is None or not others or not self._decide(fault, query, doc_id):
            return None
        self._count("wrong-citation")
        seed = fault.get("seed")
        return min(others, key=lambda c: (unit(seed, "wrong-citation-pick", query, doc_id, c), c))

    def answer_unfiltered(self) -> bool:
        """answer-unfiltered-context: compose answers from a search without the permission filter."""
        if "answer-unfiltered-context" in self._faults:
            self._count("answer-unfiltered-context")
            return True
        return False

    def shared_answer(self, body_key: str) -> Any | None:
        """shared-answer-cache: the answer cached for this request body, whoever asked it (None: none yet, or
        the fault is off)."""
        if "shared-answer-cache" not in self._faults:
            return None
        with self._lock:
            cached = self._answers.get(body_key)
            if cached is not None:
                self._answers.move_to_end(body_key)
                self.injected["shared-answer-cache"] += 1
            return cached

    def keep_shared_answer(self, body_key: str, answer: Any) -> None:
        """shared-answer-cache: remember ``answer`` for this request body (the oldest beyond max_entries go)."""
        fault = self._faults.get("shared-answer-cache")
        if fault is None:
            return
        with self._lock:
            self._answers[body_key] = answer
            while len(self._answers) > int(fault.get("max_entries")):
                self._answers.popitem(last=False)

    # ------------------------------------------------------------------ identity and retrieval
    def identity_from_body(self, names_someone: bool) -> bool:
        """role-from-body: the request body's user_id / user_role / department (``names_someone``) say who
        acts, not the token."""
        if names_someone and "role-from-body" in self._faults:
            self._count("role-from-body")
            return True
        return False

    def post_filter_fetch_k(self, top_k: int) -> int | None:
        """post-filter: how many results to fetch without the permission filter before filtering (None: the
        fault is off, the filter is applied inside the search)."""
        fault = self._faults.get("post-filter")
        if fault is None:
            return None
        self._count("post-filter")
        return int(fault.get("fetch_k")) or top_k

    # ------------------------------------------------------------------ latency / errors / throttle
    def request_fault(self, key: str) -> RequestFault | None:
        """What to inject into the request identified by ``key`` (method, path and body hash)."""
        names = [n for n in ("throttle", "errors", "latency") if n in self._faults]
        if not names:
            return None
        with self._lock:
            if len(self._attempts) > _MAX_ATTEMPT_KEYS:
                self._attempts.clear()
            attempt = {}
            for name in names:
                attempt[name] = self._attempts[(name, key)]
                self._attempts[(name, key)] += 1
        delay, status, retry_after, by = 0.0, None, None, None
        latency = self._faults.get("latency")
        if latency is not None and self._decide(latency, "share", key, attempt["latency"]):
            u = unit(latency.get("seed"), "latency", key, attempt["latency"])
            delay = (latency.num("delay_ms") + latency.num("jitter_ms") * u) / 1000.0
            self._count("latency")
        throttle = self._faults.get("throttle")
        errors = self._faults.get("errors")
        if throttle is not None and self._decide(throttle, key, attempt["throttle"]):
            status, retry_after, by = 429, throttle.num("retry_after_s"), "throttle"
        elif errors is not None and self._decide(errors, key, attempt["errors"]):
            status, by = int(errors.get("status")), "errors"
        if by is not None:
            self._count(by)
        if status is None and delay == 0.0:
            return None
        return RequestFault(delay, status, retry_after, by)


def request_key(*parts: object) -> str:
    """The identity of a request for request-level faults: a hash of what it asks."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:32]


def reingest_file_type(sim: Reindexable, file_type: str) -> int:
    """Re-extract and re-index every indexed version of ``file_type`` documents with the extraction
    config now in force (cad-blind switches dxf between ``entities+titleblock`` and ``filename-only``).
    Returns the number of versions re-indexed."""
    from drivebench.search.ingest import ingest

    with sim._index_lock, sim.drive.lock:
        items = [
            (d, v)
            for d in sim.drive.documents.values()
            if d.file_type == file_type
            for v in d.versions
            if v.version_id in sim.store.by_version
        ]
        if not items:
            return 0
        config = sim.faults.extract_config(sim.config.extract)
        report = ingest(sim.drive, items, sim.store, sim.embedder, sim.cache, config, sim.config.chunking)
        for r in report.rejected:  # what a fresh ingest with this config would not index
            sim.store.remove_version(r.version_id)
        sim.index_version += 1
        log.warning("re-ingested %d %s versions with %s=%s", report.versions, file_type, file_type, config.dxf)
        return report.versions
