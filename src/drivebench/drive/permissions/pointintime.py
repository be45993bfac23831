"""Point-in-time (``as_of``) visibility: the one place every surface asks "may this principal see
this document (or folder) as of T?".

The rule (docs/permissions.md, "Point in time"):

* **A principal acting as itself** (a user token, ``evaluated_as`` False) sees at ``as_of`` T what it
  could preview at T **and** may still preview now: what it could see then, minus what has been taken
  away since (a revoked or expired grant, a new deny, a move out of its reach, a lowered clearance).
  A revocation therefore takes effect at once, for every ``as_of``.
* **The evaluation token** (``evaluate-as`` scope, ``evaluated_as`` True) sees exactly what the named
  principal could preview at T, with the permissions in force at T: replaying a past evaluation needs
  it. Every such request is audited (``Simulator.principal_for``).
* **The drive at T**: the version current at T, the trash at T, the folder tree at T (paths, the folder
  a filter names) apply on every surface; the permission half of "now" uses today's tree, so a move
  out of reach is a removal like any other.
* ``as_of`` after the simulated clock is a 400 (the future is not known); ``as_of`` out of the
  representable range is a 400 too (``drivebench.drive.clock.checked_utc``).

Recall, answer, the MCP tools and resources, the drive API, the permissions API and the change feed all
call these functions; none re-implements the rule.

The rule has the engine's two verbs (``engine.py``), each the conjunction of the engine's verb at ``at``
(``policies.engine_at(at)``) and, for a principal acting as itself in the past, the current engine's at now:

* ``enforce(policies, principal, obj, act, at, now)`` -- **the reference**: ``PermissionEngine.enforce``
  (Casbin) at ``at`` and now, for one document or folder.
* ``allowed_mask(policies, principal, act, at, now)`` -- **the fast path**: ``PermissionEngine.allowed_mask``
  at ``at`` and now, over ``engine_at(at).doc_ids``. Proven equal to ``enforce`` document by document over
  random grant, tree and trash histories by ``test_point_in_time_fast_path_equals_enforce`` of
  ``tests/permissions/test_perm_properties.py``; recall built on it is proven equal to an oracle that reads
  the drive's records (no Casbin) by ``tests/security/test_pit_properties.py``.

Recall re-checks every hit with ``PermissionEngine.decide`` at ``at`` and now (``intersects_now``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import numpy as np

from drivebench.drive.clock import as_utc, checked_utc
from drivebench.drive.errors import InvalidRequest, PermissionCheckFailed
from drivebench.drive.history import PolicyView, epoch_of, epoch_start
from drivebench.drive.model import DocumentRec
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.engine import PermissionEngine, Principal
from drivebench.drive.state import Drive
from drivebench.formats.corpus import FILE_TYPES  # a filter names a known type, not one present (no oracle)


class Policies(Protocol):
    """What the point-in-time rule reads: the drive, the engine of its current policy and the engine of the
    drive as it stood at an instant (``PolicyEngines`` keeps both, cached per policy version)."""

    @property
    def drive(self) -> Drive: ...

    @property
    def engine(self) -> PermissionEngine: ...

    def engine_at(self, at: datetime) -> PermissionEngine: ...


class StalePolicyHold(Protocol):
    """The one fault the engines obey (``simulator.faults``, stale-acl): keep serving the engine built before a
    policy change for a while."""

    def hold_stale_policy(self, engine: PermissionEngine, drive: Drive) -> bool: ...


class PolicyEngines:
    """The drive's permission engines: the one of its current policy and the ones of the drive as it stood at
    past instants (``as_of``). Satisfies ``Policies``; what every surface that decides access reads. One per
    drive: a reset or seed swaps in a new one whole."""

    def __init__(self, drive: Drive, faults: StalePolicyHold) -> None:
        self.drive = drive
        self.faults = faults  # stale-acl may hold the previous engine for a while
        self.lock = threading.Lock()  # builds and swaps of engines; a reset holds it while it swaps
        self._engine: PermissionEngine | None = None
        self._past_engines: dict[tuple[int, int], PermissionEngine] = {}  # (policy version, tree epoch)
        self._placement_times: tuple[int, list[datetime]] = (-1, [])

    @property
    def built(self) -> PermissionEngine | None:
        """The engine built last (None before the first), without building one: may be of an older policy."""
        return self._engine

    def is_current(self) -> bool:
        """True when the engine built last is the current policy's (no compile needed)."""
        engine = self._engine
        return engine is not None and engine.policy_version == self.drive.policy_version

    @property
    def engine(self) -> PermissionEngine:
        """The engine of the current policy. Readers of the current version take no lock (an engine is
        immutable once built); after a policy change one thread builds the new engine aside and swaps it
        in (writes build it before they are acknowledged: ``Simulator.sync_index``), so a request never
        sees a policy older than the last acknowledged change."""
        engine = self._engine
        if engine is not None and engine.policy_version == self.drive.policy_version:
            return engine
        with self.lock:
            if self._engine is None or self._engine.policy_version != self.drive.policy_version:
                if self._engine is not None and self.faults.hold_stale_policy(self._engine, self.drive):
                    return self._engine  # FAULT stale-acl: the policy from before the change, for a while
                previous = self._engine
                derived = PermissionEngine.after_grant_changes(previous, self.drive) if previous is not None else None
                self._engine = derived if derived is not None else PermissionEngine(self.drive)
            return self._engine

    def engine_at(self, at: datetime) -> PermissionEngine:
        """The engine for decisions at ``at``. At the clock's current instant: the live drive (``engine``).
        At any other instant (``as_of``): the drive as it stood then, i.e. grants bounded by when they
        existed and the tree of that time (see ``drive.history``); one engine per tree epoch, cached per
        policy version. The two agree whenever the clock is at or after the latest change."""
        if as_utc(at) == self.drive.clock.now():
            return self.engine
        with self.drive.lock:
            if self._placement_times[0] != self.drive.policy_version:
                self._placement_times = (self.drive.policy_version, self.drive.placement_times())
            version, times = self._placement_times
        epoch = epoch_of(times, as_utc(at))
        key = (version, epoch)
        with self.lock:
            past = self._past_engines.get(key)
        if past is None:
            past = PermissionEngine(PolicyView(self.drive, epoch_start(times, epoch)))
            with self.lock:
                self._past_engines = {k: v for k, v in self._past_engines.items() if k[0] == version}
                past = self._past_engines.setdefault(key, past)
        return past


def resolve_as_of(policies: Policies, as_of: datetime | None) -> datetime:
    """The instant a request is judged at: the clock when ``as_of`` is None, else ``as_of`` in UTC.
    After the clock: 400. Out of range: 400."""
    now = policies.drive.clock.now()
    if as_of is None:
        return now
    at = checked_utc(as_of, "as_of")
    if at > now:
        raise InvalidRequest(
            f"as_of {at.isoformat()} is after the drive's clock ({now.isoformat()}): the future is not known"
        )
    return at


def intersects_now(principal: Principal, at: datetime, now: datetime) -> bool:
    """True when a decision at ``at`` must also hold now (a principal acting as itself, in the past)."""
    return not principal.evaluated_as and at != now


def _align(mask: np.ndarray, src: PermissionEngine, dst: PermissionEngine) -> np.ndarray:
    """``mask`` (over ``src.doc_ids``) re-indexed over ``dst.doc_ids`` (absent documents: False)."""
    if src.doc_ids is dst.doc_ids or src.doc_ids == dst.doc_ids:
        return mask
    out = np.zeros(len(dst.doc_ids), dtype=bool)
    pos = src.doc_index
    for i, d in enumerate(dst.doc_ids):
        j = pos.get(d)
        if j is not None:
            out[i] = mask[j]
    return out


def allowed_mask(policies: Policies, principal: Principal, act: str, at: datetime, now: datetime) -> np.ndarray:
    """Boolean mask over ``policies.engine_at(at).doc_ids``: may ``principal`` do ``act`` on each document as
    of ``at`` under the point-in-time rule (at ``at``, and now too when acting as itself)."""
    engine = policies.engine_at(at)
    mask = engine.allowed_mask(principal, act, at)
    if not intersects_now(principal, at, now):
        return mask
    current = policies.engine
    return mask & _align(current.allowed_mask(principal, act, now), current, engine)


def lookup(policies: Policies, principal: Principal, act: str, at: datetime, now: datetime) -> Callable[[str], bool]:
    """``obj -> may principal do act on obj as of at`` under the point-in-time rule, for document and folder
    objects (existing or not), read off the fast path's masks (``PermissionEngine.lookup``, proven equal to
    ``enforce``), fetched once here. Constant work per object: both halves of the rule are always read (no
    short-circuit), so a hidden object, a missing one and one hidden only now cost the same. Every lookup by
    id or path asks this first; only an object it lets through reaches ``enforce``."""
    then = policies.engine_at(at).lookup(principal, act, at)
    if not intersects_now(principal, at, now):
        return then
    still = policies.engine.lookup(principal, act, now)

    def allowed(obj: str) -> bool:
        a, b = then(obj), still(obj)
        return a and b

    return allowed


def visible(policies: Policies, principal: Principal, obj: str, act: str, at: datetime, now: datetime) -> bool:
    """``lookup(...)(obj)``: one object's decision off the masks (see ``lookup``)."""
    return lookup(policies, principal, act, at, now)(obj)


def _level(engine: PermissionEngine, obj: str) -> int:
    """The level ``obj`` is judged at by ``engine``: a document's secret level in the drive the engine was
    built on, 0 for a folder."""
    kind, _, ident = obj.partition(":")
    return engine.drive.doc(ident).secret_level if kind == "doc" else 0


def enforce(policies: Policies, principal: Principal, obj: str, act: str, at: datetime, now: datetime) -> bool:
    """``PermissionEngine.enforce`` under the point-in-time rule for one object (``doc_obj`` or ``folder_obj``;
    errors propagate: callers fail closed)."""
    then = policies.engine_at(at)
    if not then.enforce(principal, obj, act, at, _level(then, obj)):
        return False
    if not intersects_now(principal, at, now):
        return True
    current = policies.engine
    return current.enforce(principal, obj, act, now, _level(current, obj))


def document_as_of(policies: Policies, principal: Principal, doc_id: str, at: datetime, now: datetime) -> DocumentRec:
    """The document if ``principal`` may preview it as of ``at`` (it existed then, had a version, was not in
    the trash, and the permission rule holds); otherwise the same ``NotFound`` as for an unknown id."""
    from drivebench.drive.errors import NotFound

    hidden = NotFound(f"no document {doc_id!r} you may preview")
    seen = visible(policies, principal, doc_obj(doc_id), "preview", at, now)  # the same work for any id
    doc = policies.drive.documents.get(doc_id)
    if not seen or doc is None or doc.version_at(at) is None or doc.trashed_at_time(at):
        raise hidden
    confirm(enforce(policies, principal, doc_obj(doc_id), "preview", at, now), doc_obj(doc_id))
    return doc


def confirm(allowed: bool, obj: str) -> None:
    """``enforce``'s decision on an object the masks let through: a refusal means the fast path and Casbin
    disagree (a bug or a corrupted mask), answered like recall's re-check answers it: fail closed (503)."""
    if not allowed:
        from drivebench.drive.errors import PermissionCheckFailed

        raise PermissionCheckFailed(f"permission check failed: the fast path and the enforcer disagree on {obj}")


def folder_as_of(policies: Policies, path: str, at: datetime | None) -> str | None:
    """The id of the folder at ``path`` in the tree as it stood at ``at`` (None: now); None if none."""
    drive = policies.drive
    norm = "/" + "/".join(p for p in path.split("/") if p)
    if at is None:
        try:
            return drive.folder_by_path(norm).folder_id
        except Exception:
            return None
    with drive.lock:  # every folder is read (no early exit): a path found costs what a path not found costs
        found = [fid for fid in drive.folders if drive.folder_path_at(fid, at) == norm]
    return found[0] if found else None


def recall_filter(
    policies: Policies,
    principal: Principal,
    at: datetime,
    now: datetime,
    file_types: list[str] | None,
    folder: str | None,
) -> Callable[[DocumentRec], bool] | None:
    """Request filters as a document predicate, judged as of ``at``. A filter that cannot be applied is a
    400; a folder the principal may not ``list`` (as of ``at``, under the point-in-time rule) answers
    exactly like a missing one (no existence oracle)."""
    if file_types is None and folder is None:
        return None
    types = None
    if file_types is not None:
        unknown = sorted(set(file_types) - set(FILE_TYPES))
        if unknown or not file_types:
            raise InvalidRequest(f"filters.file_types: unknown file type(s) {unknown}; known: {sorted(FILE_TYPES)}")
        types = set(file_types)
    prefix = None
    when = None if at == now else at
    if folder is not None:
        missing = InvalidRequest(f"filters.folder: no folder {folder!r}")
        fid = folder_as_of(policies, folder, when)
        try:  # the masks first, for a missing folder too (an unknown object): the same work either way
            seen = visible(policies, principal, folder_obj(fid or ""), "list", at, now)
            if seen and fid is not None:  # only a folder the masks let through reaches Casbin
                seen = enforce(policies, principal, folder_obj(fid), "list", at, now)
        except Exception:
            seen = False  # fail closed, and the same answer as a missing folder
        if fid is None or not seen:
            raise missing
        prefix = policies.drive.folder_path_at(fid, when).rstrip("/") + "/"
    drive = policies.drive

    def keep(doc: DocumentRec) -> bool:
        if types is not None and doc.file_type not in types:
            return False
        return prefix is None or drive.doc_path_at(doc, when).startswith(prefix)

    return keep


def doc_lister(policies: Policies, principal: Principal | None) -> Callable[[str], bool] | None:
    """``visible(doc_id)``: may ``principal`` list the document now (None: the admin, sees all). Built
    outside the drive lock (it takes the engine), called inside writes to judge name conflicts."""
    if principal is None:
        return None
    try:  # off the masks (proven equal to enforce): a hidden namesake costs what no namesake costs
        lookup = policies.engine.lookup(principal, "list", policies.drive.clock.now())
    except Exception as exc:  # fail closed: refuse the write rather than guess
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc

    def visible(doc_id: str) -> bool:
        return lookup(doc_obj(doc_id))  # newer than the engine: False, the caller has never been shown it

    return visible
