"""Dense search in Milvus (pymilvus ``MilvusClient``: milvus-lite embedded, or a Milvus server), with the
permission filter pushed into the search as a filter expression: never a post-filter, never under-filled.

Collection (one per chunk store; FLAT index, inner product, ``Session`` consistency: ``CONSISTENCY``)::

    id          INT64 primary key   the chunk id (position in ``ChunkStore``, never reused)
    vector      FLOAT_VECTOR(dim)
    doc_no      INT64               the document's number: the rank of its first chunk in the store
    valid_from  INT64 (µs)          when the chunk's version became current
    valid_to    INT64 (µs)          when the next version replaced it (int64 max: still current)
    trashed_at  INT64 (µs)          when the document went to the trash (int64 max: not trashed)

Filter expression of a recall judged at instant ``t`` (``Simulator.visible_chunks``, ``VisibleMask``)::

    doc_no in [docs] and valid_from <= t and valid_to > t and trashed_at > t

(or ``doc_no not in [denied]`` when the documents with rows that are not permitted are fewer, and no document
term at all when every document in the collection is permitted: the same rows, a shorter expression)

``docs`` is the permitted document set: documents the principal may preview at ``t`` (Casbin, compiled;
``permissions.pointintime``), accepted by the request filters, and not in the trash at ``t`` (closed trash
spans of a past ``as_of`` are document-level and folded in here); the three range terms are the version and
trash validity stored on each chunk. Both sides come from the same arrays the FAISS bitmap is built from, so
the rows this expression selects are exactly the chunk ids of the FAISS mask: the two searches are the same
exact top-k (proven by tests/index/test_milvus_equivalence.py). The lists are written into the expression
text (milvus-lite 3.2 rejects template expressions with ``filter_params``); document numbers are small ranks,
not hashes, to keep the text short and collisions impossible.

When the mask carries no instant (a caller outside ``recall``) or was judged against older validity than the
collection now holds (a write landed between the mask and the search), the expression is the chunk id list
itself (``id in [ids]``): still pushed down, still exact.

What a change rewrites in Milvus:

* a grant change (add, remove, expire, move of a folder or document): **nothing**. The permitted document set
  is recompiled in the process (the Casbin engine, keyed by the policy version) and travels with the next
  query; it takes effect at the next recall (measured: benchmarks/bench_milvus.py, ``grant_change``).
* a new version: its chunks are inserted, and the previous version's chunks get their ``valid_to`` (upsert of
  those rows: Milvus has no partial update of a vector row here). Trash and restore: ``trashed_at`` of the
  document's chunks. Purge, retention: the chunks are deleted at once (``remove`` hook, under the store lock).

Writes are lazy: ``ChunkStore.add`` queues the new chunk ids, and ``sync`` (called by ``visible_chunks``
under the store lock, before any search) writes queued rows and changed validity in one upsert.

Ownership: every collection records its owner in its description (``owner_record``): an in-memory simulator's
is dropped when it closes, resets or exits, and ``collect_garbage`` (``drivebench milvus gc URI``) drops those
whose owner is gone.

Durability (``--data-dir``): the collection name is kept in ``<data-dir>/milvus/COLLECTION``. At start-up the
store comes from its FAISS snapshot; ``reconcile`` reads the collection's ids and validity, deletes rows the
store does not hold alive (ids past the snapshot are re-assigned by the replay), and queues missing rows. So
after a restart or a SIGKILL the collection and the metadata agree before the first search.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from drivebench.drive.errors import IndexUnavailable, PermissionCheckFailed
from drivebench.search.index.chunk_store import ChunkHit, fit_mask, mask_instant
from drivebench.search.index.vector_store import IndexSpec, VectorStoreError

if TYPE_CHECKING:
    from pymilvus import MilvusClient

    from drivebench.search.index.chunk_store import ChunkStore

log = logging.getLogger("drivebench.milvus")
MAX_US = int(np.iinfo(np.int64).max)
MAX_TOPK = 16384  # Milvus's limit on topk
WRITE_BATCH = 2000
READ_BATCH = 4000
PREFIX = "drivebench_"
# Session: a search waits only for this process's own last write to the collection (pymilvus keeps its
# timestamp per collection); every write to a collection comes from the process that owns it, so a new
# version, a trash or a purge is seen by the next recall, and a grant change writes nothing to Milvus (the
# permitted set travels in the expression). Strong waited for the server's time tick on every search (200 ms at
# 2.3.5's timeTickInterval: 249-277 ms per filtered top-10 at 12k chunks); Bounded (5 s graceful time) answered
# with rows from before a write (benchmarks/bench_milvus.py ``consistency``: stale results).
# The first search after this process's own write is still made Strong: on a loaded machine (the full test suite)
# a Session search once answered with a row's validity from before a trash (a 503, failing closed, not a leak);
# it waits for the time tick once per write, as Session measured after a write anyway (160-198 ms).
CONSISTENCY = "Session"
AFTER_WRITE = "Strong"

# Every call to Milvus has a deadline: without one pymilvus retries a refused connection 75 times with a growing
# back-off (a recall with the server stopped hung 70-75 s, then answered 500). A call that fails or runs out of
# time is an ``IndexUnavailable`` (503 ``index-unavailable``, within the deadline). Start-up and admin calls
# (create, load, drop, reading every row) may take longer on a loaded server: ``SLOW_CALLS`` get ``SLOW_FACTOR``
# times the deadline.
TIMEOUT_ENV = "DRIVEBENCH_MILVUS_TIMEOUT"
DEFAULT_TIMEOUT_S = 5.0
SLOW_FACTOR = 6
SLOW_CALLS = frozenset({"create_collection", "load_collection", "drop_collection", "query_iterator"})
RPCS = frozenset(
    {"search", "query", "upsert", "delete", "has_collection", "list_collections", "describe_collection", *SLOW_CALLS}
)
# The credential of a Milvus server with authentication on (``drivebench milvus-server`` turns it on and writes
# ``user:password`` to a file of mode 0600): the token itself, or the path of that file.
TOKEN_ENV = "DRIVEBENCH_MILVUS_TOKEN"
TOKEN_FILE_ENV = "DRIVEBENCH_MILVUS_TOKEN_FILE"

_clients: dict[str, TimedClient] = {}
_clients_lock = threading.Lock()
_tempdir: Path | None = None
_in_memory: set[MilvusVectors] = set()  # collections of in-memory simulators of this process: dropped at exit


class MilvusSearchError(PermissionCheckFailed):
    """Milvus could not answer exactly (over its top-k limit, or answered outside the permitted set): the
    request fails closed (503, like any permission check that cannot be completed), never a partial answer."""


def call_timeout() -> float:
    """Seconds one call to Milvus may take (``DRIVEBENCH_MILVUS_TIMEOUT``, default 5)."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        value = float(text) if text else DEFAULT_TIMEOUT_S
    except ValueError:
        raise VectorStoreError(f"{TIMEOUT_ENV}={text!r}: give a number of seconds") from None
    if not 0 < value <= 3600:
        raise VectorStoreError(f"{TIMEOUT_ENV}={text!r}: give a number of seconds between 0 and 3600")
    return value


def milvus_token() -> str:
    """``user:password`` for a server with authentication on (``DRIVEBENCH_MILVUS_TOKEN``, else the file named by
    ``DRIVEBENCH_MILVUS_TOKEN_FILE``); empty when neither is set."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    path = os.environ.get(TOKEN_FILE_ENV, "").strip()
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise VectorStoreError(
            f"{TOKEN_FILE_ENV}={path}: the Milvus credential cannot be read ({exc.strerror})"
        ) from None


def _is_milvus_error(exc: BaseException) -> bool:
    """An error of the Milvus client or its transport (refused, timed out, denied), not a bug of the caller."""
    from pymilvus.exceptions import MilvusException

    if isinstance(exc, MilvusException | TimeoutError | ConnectionError):
        return True
    try:
        import grpc
    except ImportError:  # pragma: no cover (pymilvus depends on it)
        return False
    return isinstance(exc, grpc.RpcError)


class TimedClient:
    """A ``MilvusClient`` whose calls all have a deadline (``call_timeout``, ``SLOW_CALLS`` longer) and whose
    failures are all ``IndexUnavailable`` (the cause is logged, never shown to the caller)."""

    def __init__(self, client: MilvusClient, uri: str, timeout_s: float) -> None:
        self.client = client
        self.uri = uri
        self.timeout_s = timeout_s

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.client, name)
        if name not in RPCS:
            return attr  # local helpers (prepare_index_params, close)
        timeout = self.timeout_s * (SLOW_FACTOR if name in SLOW_CALLS else 1)

        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            with self.failures(name):
                result = attr(*args, **kwargs)
            return _TimedIterator(result, self) if name == "query_iterator" else result

        return call

    @contextlib.contextmanager
    def failures(self, what: str) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if not _is_milvus_error(exc):
                raise
            log.warning("milvus %s: %s failed: %s", self.uri, what, exc)
            raise IndexUnavailable(
                "the vector index (Milvus) did not answer; nothing is returned, try again shortly"
            ) from exc


class _TimedIterator:
    """A query iterator whose ``next`` and ``close`` fail as ``IndexUnavailable`` (its calls carry the deadline)."""

    def __init__(self, inner: Any, client: TimedClient) -> None:
        self.inner = inner
        self.client = client

    def next(self) -> list[dict[str, Any]]:
        with self.client.failures("query_iterator.next"):
            return self.inner.next()

    def close(self) -> None:
        with self.client.failures("query_iterator.close"):
            self.inner.close()


def client_for(uri: str) -> TimedClient:
    """One client per URI in this process (milvus-lite serves one file per process), every call with a deadline,
    with the server's credential when one is configured (``milvus_token``)."""
    # gRPC restarts its poller thread in a forked child, and a child that closes its descriptors before exec
    # (every subprocess: the server's workers, milvus-server, a test's commands) then aborts on the closed epoll fd
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    try:
        from pymilvus import MilvusClient
    except ImportError as exc:  # the optional extra is missing: say how to get it, at start, not at a search
        raise VectorStoreError(
            "--index milvus needs pymilvus and milvus-lite: pip install 'drivebench[milvus]' (make installs them)"
        ) from exc

    with _clients_lock:
        client = _clients.get(uri)
        if client is None:
            timeout = call_timeout()
            is_server = not uri.endswith(".db")
            token = milvus_token() if is_server else ""
            try:
                raw = MilvusClient(uri, token=token, timeout=timeout) if token else MilvusClient(uri, timeout=timeout)
            except Exception as exc:
                if not _is_milvus_error(exc):
                    raise
                hint = "" if token else f" (a server with authentication needs {TOKEN_FILE_ENV} or {TOKEN_ENV})"
                raise VectorStoreError(f"cannot connect to Milvus at {uri}: {exc}{hint}") from exc
            client = TimedClient(raw, uri, timeout)
            _clients[uri] = client
        return client


def _process_tempdir() -> Path:
    global _tempdir
    if _tempdir is None:
        _tempdir = Path(tempfile.mkdtemp(prefix="drivebench-milvus-"))
    return _tempdir


def release_all() -> int:
    """Drop the collections of this process's in-memory simulators (at exit, or before their server stops).
    Best effort: a server that is gone leaves them to ``drivebench milvus gc``. Returns how many were dropped."""
    dropped = 0
    pymilvus_log = logging.getLogger("pymilvus")
    level = pymilvus_log.level
    pymilvus_log.setLevel(logging.CRITICAL)  # one line of ours, not a traceback per collection
    try:
        for vectors in list(_in_memory):
            try:
                vectors.release()
                dropped += 1
            except Exception as exc:
                _in_memory.discard(vectors)
                with contextlib.suppress(Exception):  # the log stream itself may be closed at exit
                    log.warning("milvus %s: collection %s not dropped (%s)", vectors.uri, vectors.collection, exc)
    finally:
        pymilvus_log.setLevel(level)
    return dropped


def _cleanup() -> None:
    release_all()
    for client in list(_clients.values()):
        with contextlib.suppress(Exception):  # best effort at exit
            client.close()
    _clients.clear()
    if _tempdir is not None:
        shutil.rmtree(_tempdir, ignore_errors=True)


atexit.register(_cleanup)


def resolve_uri(spec: IndexSpec, data_dir: Path | None) -> str:
    """The URI the client opens: the server URI, or a milvus-lite file (under the data dir when durable)."""
    if spec.uri is not None:
        return spec.uri
    root = Path(data_dir) / "milvus" if data_dir is not None else _process_tempdir()
    root.mkdir(parents=True, exist_ok=True)
    return str(root / "vectors.db")


# ---------------------------------------------------------------------------------------------------- ownership
# Each collection says who owns it in its description (JSON): the machine (host name and boot id), the process
# (pid and its start time, so a reused pid is not taken for the owner) and, for a --data-dir serve, the data
# directory. A server shared by several drivebench processes then holds only what they own: an in-memory serve
# drops its collection at shutdown (and at exit), a --data-dir serve keeps one (named in <data-dir>/milvus/
# COLLECTION) and drops its older ones, and `drivebench milvus gc URI` drops what a killed process left.
def _machine() -> str:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot; None when it does not exist or is unknown)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def owner_record(data_dir: Path | None) -> dict[str, Any]:
    pid = os.getpid()
    return {
        "drivebench": 1,
        "machine": _machine(),
        "pid": pid,
        "pid_start": _start_ticks(pid),
        "data_dir": str(data_dir.resolve()) if data_dir is not None else None,
    }


def orphan_verdict(name: str, description: str) -> tuple[bool, str]:
    """Whether ``name`` (a drivebench collection) is an orphan, and why."""
    try:
        owner = json.loads(description)
        assert isinstance(owner, dict) and owner.get("drivebench") == 1
    except (ValueError, AssertionError):
        return False, "no owner recorded (made before owners were recorded, or not drivebench's): kept"
    if owner.get("machine") != _machine():
        return False, f"owned by another machine or boot ({owner.get('machine')}): kept"
    pid = int(owner.get("pid") or 0)
    if pid and _start_ticks(pid) == owner.get("pid_start"):
        return False, f"its process {pid} is running"
    data_dir = owner.get("data_dir")
    if data_dir is None:
        return True, f"in-memory simulator whose process {pid} is gone"
    pointer = Path(data_dir) / "milvus" / "COLLECTION"
    try:
        current = pointer.read_text(encoding="utf-8").strip()
    except OSError:
        return True, f"its data directory {data_dir} holds no collection pointer"
    if current != name:
        return True, f"its data directory {data_dir} names another collection ({current})"
    return False, f"the collection of {data_dir} (reconciled at its next start)"


def collect_garbage(uri: str, *, dry_run: bool = False) -> list[dict[str, Any]]:
    """``drivebench milvus gc URI``: a verdict per drivebench collection on the server; orphans are dropped."""
    client = client_for(uri)
    out: list[dict[str, Any]] = []
    for name in sorted(client.list_collections()):
        if not name.startswith(PREFIX):
            continue
        description = str(client.describe_collection(name).get("description") or "")
        orphan, reason = orphan_verdict(name, description)
        if orphan and not dry_run:
            client.drop_collection(name)
        out.append({"collection": name, "orphan": orphan, "dropped": orphan and not dry_run, "reason": reason})
    return out


def _int_list(values: np.ndarray) -> str:
    return ",".join(map(str, np.asarray(values, dtype=np.int64).tolist()))


class MilvusVectors:
    """A chunk store's vectors in one Milvus collection; ``search`` filters inside Milvus."""

    name = "milvus"

    def __init__(self, store: ChunkStore, client: TimedClient, uri: str, spec: IndexSpec, data_dir: Path | None):
        self.store = store
        self.client = client
        self.uri = uri
        self.spec = spec
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.collection: str | None = None  # created on the first write
        self.dim = store.dim
        self.lock = threading.RLock()
        self._pending: set[int] = set()  # chunk ids added to the store, not yet written
        self._pending_delete: set[int] = set()  # rows of removed chunks Milvus did not delete yet (it was down)
        self._present = np.zeros(0, dtype=bool)  # chunk ids in the collection
        self._valid = np.zeros((0, 3), dtype=np.int64)  # valid_from, valid_to, trashed_at as written
        self._doc_no = np.zeros(0, dtype=np.int64)  # per chunk id: its document's number
        self._doc_rank: dict[str, int] = {}  # doc id -> number (order of first appearance in the store)
        self.generation = 0  # bumped whenever the collection's rows or validity change
        self.consistency = CONSISTENCY  # benchmarks/bench_milvus.py compares the levels
        self._wrote = False  # a write since the last search: the next search is Strong (AFTER_WRITE)
        self.counters = {"searches": 0, "rows_written": 0, "rows_deleted": 0, "syncs": 0, "id_list_searches": 0}
        self.last_sync_s = 0.0
        # a follower (a read replica of a data directory another process writes) never writes the collection:
        # it reads the writer's rows (``adopt``) and refuses to search chunks whose rows disagree with its state
        self.follow = False
        self._disagree = np.zeros(0, dtype=bool)  # follower: chunk ids whose row is missing or differs

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls, store: ChunkStore, spec: IndexSpec, data_dir: Path | None, *, reconcile: bool, follow: bool = False
    ) -> MilvusVectors:
        uri = resolve_uri(spec, data_dir)
        vectors = cls(store, client_for(uri), uri, spec, data_dir)
        vectors.follow = follow
        if follow and (data_dir is None or spec.label != "milvus-server"):
            raise ValueError("only a Milvus server's collection of a data directory can be followed")
        with store.lock:
            vectors._pending = set(np.flatnonzero(store.alive).tolist())  # everything the store holds now
            if reconcile:
                vectors._reconcile()
        return vectors

    @property
    def _pointer(self) -> Path | None:
        return self.data_dir / "milvus" / "COLLECTION" if self.data_dir is not None else None

    def _dir_tag(self) -> str:
        """Collections of one data directory share a prefix (several data dirs may share one server)."""
        if self.data_dir is None:
            return "mem"
        return hashlib.blake2b(str(self.data_dir.resolve()).encode(), digest_size=4).hexdigest()

    def _create(self) -> str:
        from pymilvus import DataType, MilvusClient

        name = f"{PREFIX}{self._dir_tag()}_{uuid.uuid4().hex[:12]}"
        owner = json.dumps(owner_record(self.data_dir), separators=(",", ":"))
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False, description=owner)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        for field in ("doc_no", "valid_from", "valid_to", "trashed_at"):
            schema.add_field(field, DataType.INT64)
        index = self.client.prepare_index_params()
        index.add_index(field_name="vector", index_type="FLAT", metric_type="IP")
        self.client.create_collection(name, schema=schema, index_params=index, consistency_level=self.consistency)
        if self._pointer is not None:  # durable: this collection is the data dir's from now on
            from drivebench.formats.files import write_atomic

            self._pointer.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self._pointer, name.encode())
            self._drop_others(keep=name)
        elif self.spec.label == "milvus-server":  # a milvus-lite file goes with its temporary directory
            _in_memory.add(self)
        return name

    def _drop_others(self, keep: str) -> None:
        prefix = f"{PREFIX}{self._dir_tag()}_"
        for other in self.client.list_collections():
            if other.startswith(prefix) and other != keep:
                self.client.drop_collection(other)

    def _reconcile(self) -> None:
        """The store was loaded from a snapshot: adopt the data dir's collection and make it agree."""
        pointer = self._pointer
        name = pointer.read_text(encoding="utf-8").strip() if pointer is not None and pointer.exists() else ""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not self.client.has_collection(name):
            return  # nothing to adopt: the first write creates a collection and queues every live chunk
        self.collection = name
        self.client.load_collection(name)
        self._barrier()  # rows another process (the one before a restart) wrote are all visible below
        n = len(self.store)
        self._grow(n)
        stale: list[int] = []
        for r in self._rows(name):
            cid = int(r["id"])
            if cid >= n or not self.store.alive[cid] or int(r["doc_no"]) != self._doc_no[cid]:
                stale.append(cid)  # past the snapshot (re-assigned by the replay), dead, or another doc
                continue
            self._present[cid] = True
            self._valid[cid] = (int(r["valid_from"]), int(r["valid_to"]), int(r["trashed_at"]))
        if stale:
            self._delete(stale)
        self._pending = set(np.flatnonzero(self.store.alive[:n] & ~self._present[:n]).tolist())
        self.generation += 1
        log.info(
            "milvus %s: %d rows kept, %d deleted, %d queued",
            name,
            int(self._present.sum()),
            len(stale),
            len(self._pending),
        )

    def adopt(self) -> None:
        """Follower: read the writer's rows of the data dir's collection after a Strong barrier, deleting
        nothing. Rows this process does not know (past its store, or of another document) are left alone;
        a search that returns one fails closed (``search``)."""
        with self.store.lock, self.lock:
            pointer = self._pointer
            name = pointer.read_text(encoding="utf-8").strip() if pointer is not None and pointer.exists() else ""
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not self.client.has_collection(name):
                raise MilvusSearchError("the data directory's writer has not created its Milvus collection yet")
            self.collection = name
            self.client.load_collection(name)
            self._barrier()
            n = len(self.store)
            self._grow(n)
            self._present[:] = False
            for r in self._rows(name):
                cid = int(r["id"])
                if cid < n and self.store.alive[cid] and int(r["doc_no"]) == self._doc_no[cid]:
                    self._present[cid] = True
                    self._valid[cid] = (int(r["valid_from"]), int(r["valid_to"]), int(r["trashed_at"]))
            self._pending = set(np.flatnonzero(self.store.alive[:n] & ~self._present[:n]).tolist())
            self.generation += 1

    def _rows(self, name: str) -> Iterator[dict[str, Any]]:
        """Every row of collection ``name`` (its id, document number and validity), read in batches."""
        fields = ["id", "doc_no", "valid_from", "valid_to", "trashed_at"]
        it = self.client.query_iterator(name, batch_size=READ_BATCH, filter="id >= 0", output_fields=fields)
        try:
            while rows := it.next():
                yield from rows
        finally:
            it.close()

    def _barrier(self) -> None:
        """One Strong read: what any process wrote to the collection before now is visible to what follows
        (the Session level only waits for this process's own writes)."""
        assert self.collection is not None
        self.client.query(self.collection, filter="id >= 0", limit=1, output_fields=["id"], consistency_level="Strong")

    # ------------------------------------------------------------------ store hooks
    def _grow(self, n: int) -> None:
        have = len(self._present)
        if n <= have:
            return
        self._present = np.concatenate([self._present, np.zeros(n - have, dtype=bool)])
        self._valid = np.concatenate([self._valid, np.full((n - have, 3), -1, dtype=np.int64)])
        new_docs = [self._doc_rank.setdefault(d, len(self._doc_rank)) for d in self.store.doc_ids[have:n]]
        self._doc_no = np.concatenate([self._doc_no, np.asarray(new_docs, dtype=np.int64)])

    def added(self, ids: list[int]) -> None:
        """Hook from ``ChunkStore.add`` (store lock held): queue the rows; ``sync`` writes them."""
        with self.lock:
            self._pending.update(ids)

    def removed(self, ids: list[int]) -> None:
        """Hook from ``ChunkStore.remove_version`` (store lock held): delete the rows now. When Milvus does not
        answer, the removal (already committed to the drive) still succeeds: the rows are deleted by the next
        ``sync``, and until then they stay counted as present, so every search's expression names their document
        as denied and a search that returned one would fail closed (``search``)."""
        with self.lock:
            self._pending.difference_update(ids)
            gone = [i for i in ids if i < len(self._present) and self._present[i]]
            if gone and self.follow:  # the writer deletes the rows; this process stops counting them
                self._present[gone] = False
                self.generation += 1
            elif gone:
                self._pending_delete.update(gone)
                try:
                    self._flush_deletes()
                except IndexUnavailable:
                    log.warning("milvus %s: %d rows left to delete at the next sync", self.collection, len(gone))

    def _flush_deletes(self) -> None:
        if self._pending_delete:
            self._delete(sorted(self._pending_delete))
            self._pending_delete.clear()

    def _delete(self, ids: list[int]) -> None:
        assert self.collection is not None
        for lo in range(0, len(ids), WRITE_BATCH):
            self.client.delete(self.collection, ids=[int(i) for i in ids[lo : lo + WRITE_BATCH]])
        known = [i for i in ids if i < len(self._present)]
        self._present[known] = False
        self.counters["rows_deleted"] += len(ids)
        self.generation += 1
        self._wrote = True

    # ------------------------------------------------------------------ validity
    def sync(self, start: np.ndarray, end: np.ndarray, trash: np.ndarray) -> int:
        """Write queued rows and changed validity (arrays per chunk id, from ``Simulator._chunk_arrays``).
        Returns the generation the collection is at afterwards."""
        with self.lock:
            n = min(len(self.store), len(start))
            self._grow(n)
            want = np.stack([start[:n], end[:n], trash[:n]], axis=1).astype(np.int64)
            alive = np.asarray(self.store.alive[:n], dtype=bool)
            changed = self._present[:n] & alive & (self._valid[:n] != want).any(axis=1)
            queued = np.zeros(n, dtype=bool)
            pend = [i for i in self._pending if i < n]
            queued[pend] = True
            if self.follow:  # never written from here: remember what ``search`` must not rely on
                self._disagree = (changed | queued) & alive
                return self.generation
            self._flush_deletes()
            write = np.flatnonzero((changed | queued) & alive)
            if write.size:
                started = time.perf_counter()
                self._upsert(write, want[write])
                self._pending.difference_update(write.tolist())
                self.last_sync_s = time.perf_counter() - started
                self.counters["syncs"] += 1
            return self.generation

    def sync_always_valid(self) -> int:
        """Every live chunk valid from the epoch for ever (benchmarks, callers without a drive)."""
        n = len(self.store)
        lo, hi = np.zeros(n, dtype=np.int64), np.full(n, MAX_US, dtype=np.int64)
        return self.sync(lo, hi, hi.copy())

    def _upsert(self, ids: np.ndarray, validity: np.ndarray) -> None:
        if self.collection is None:
            self.collection = self._create()
        vectors = self.store.index.reconstruct_batch(ids.astype(np.int64))
        for lo in range(0, len(ids), WRITE_BATCH):
            sl = slice(lo, lo + WRITE_BATCH)
            rows = [
                {
                    "id": int(cid),
                    "vector": vec.tolist(),
                    "doc_no": int(self._doc_no[cid]),
                    "valid_from": int(v[0]),
                    "valid_to": int(v[1]),
                    "trashed_at": int(v[2]),
                }
                for cid, vec, v in zip(ids[sl], vectors[sl], validity[sl], strict=True)
            ]
            self.client.upsert(self.collection, rows)
        self._present[ids] = True
        self._valid[ids] = validity
        self.counters["rows_written"] += len(ids)
        self.generation += 1
        self._wrote = True

    # ------------------------------------------------------------------ search
    def filter_for(self, allowed: np.ndarray, at_us: int | None) -> str:
        """The filter expression for the permitted chunk ids ``allowed`` judged at ``at_us``."""
        if at_us is None:
            return f"id in [{_int_list(np.flatnonzero(allowed))}]"
        n = len(allowed)
        docs = np.unique(self._doc_no[:n][allowed])
        t = int(at_us)
        validity = f"valid_from <= {t} and valid_to > {t} and trashed_at > {t}"
        # the shorter list: every row in the collection belongs to a permitted or to a denied document
        denied = np.setdiff1d(np.unique(self._doc_no[:n][self._present[:n]]), docs, assume_unique=True)
        if denied.size == 0:
            return validity
        if denied.size < docs.size:
            return f"doc_no not in [{_int_list(denied)}] and {validity}"
        return f"doc_no in [{_int_list(docs)}] and {validity}"

    def search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]:
        """Top-``k`` chunks by inner product among the ids where ``mask`` (and alive) is set, filtered in Milvus."""
        with self.lock:
            n = len(self.store)
            if n == 0 or k <= 0:
                return []
            allowed = fit_mask(mask, n) & np.asarray(self.store.alive[:n], dtype=bool)
            n_allowed = int(allowed.sum())
            if n_allowed == 0:
                return []
            want = min(k, n_allowed)
            if want > MAX_TOPK:
                raise MilvusSearchError(f"top-{want} is over Milvus's limit of {MAX_TOPK} results per search")
            if any(i < n and allowed[i] for i in self._pending):  # never under-fill silently
                raise MilvusSearchError("permitted chunks are not written to Milvus yet: sync before searching")
            if self.follow and bool((allowed[: len(self._disagree)] & self._disagree[:n]).any()):
                raise MilvusSearchError("the writer's Milvus rows disagree with this replica's state: try again")
            at_us = mask_instant(mask)
            if getattr(mask, "generation", None) != self.generation:
                at_us = None  # the validity changed since the mask was judged: the exact chunk id list
            self._grow(n)
            expr = self.filter_for(allowed, at_us)
            self.counters["searches"] += 1
            self.counters["id_list_searches"] += at_us is None
            if self.collection is None:
                return []
            # under the lock (as FAISS searches under the store lock): no sync changes the rows mid-search
            res = self.client.search(
                self.collection,
                data=[np.asarray(query, dtype=np.float32).reshape(-1).tolist()],
                limit=want,
                filter=expr,
                output_fields=["doc_no"],
                search_params={"metric_type": "IP"},
                consistency_level=AFTER_WRITE if self._wrote else self.consistency,
            )
            self._wrote = False
        hits = [ChunkHit(int(r["id"]), float(r["distance"])) for r in res[0]]
        outside = [h.chunk_id for h in hits if h.chunk_id >= n or not allowed[h.chunk_id]]
        if outside:  # never shown: a disagreement between the collection and the mask fails closed
            raise MilvusSearchError(f"milvus returned chunks outside the permitted set: {outside[:5]}")
        return hits

    def unfiltered_search(self, query: np.ndarray, k: int) -> list[ChunkHit]:
        """No filter at all (the benchmark's baseline)."""
        assert self.collection is not None
        res = self.client.search(
            self.collection,
            data=[np.asarray(query, dtype=np.float32).reshape(-1).tolist()],
            limit=min(k, MAX_TOPK),
            output_fields=["doc_no"],
            search_params={"metric_type": "IP"},
            consistency_level=self.consistency,
        )
        return [ChunkHit(int(r["id"]), float(r["distance"])) for r in res[0]]

    # ------------------------------------------------------------------ reporting
    def row_ids(self) -> set[int]:
        """Every id in the collection (tests: the collection agrees with the store)."""
        if self.collection is None:
            return set()
        self._barrier()
        out: set[int] = set()
        it = self.client.query_iterator(self.collection, batch_size=READ_BATCH, filter="id >= 0", output_fields=["id"])
        try:
            while True:
                rows = it.next()
                if not rows:
                    break
                out.update(int(r["id"]) for r in rows)
        finally:
            it.close()
        return out

    def stats(self) -> dict[str, Any]:
        return {
            "backend": "milvus",
            "uri": self.uri if self.spec.uri is not None else "milvus-lite:" + self.uri,
            "collection": self.collection,
            "rows": int(self._present.sum()),
            "pending": len(self._pending),
            "pending_deletes": len(self._pending_delete),
            "timeout_s": self.client.timeout_s,
            "filter": "doc_no in [docs] and valid_from <= t and valid_to > t and trashed_at > t",
            "last_sync_s": round(self.last_sync_s, 4),
            "consistency": self.consistency,
            **self.counters,
        }

    def drop(self) -> None:
        with self.lock:
            _in_memory.discard(self)
            if self.collection is not None:
                self.client.drop_collection(self.collection)
                self.collection = None

    def release(self) -> None:
        """The simulator is done with this store (shutdown, or a reset swapped in another): an in-memory
        simulator's collection is dropped; a data directory's stays, to be reconciled at the next start."""
        if self.data_dir is None:
            self.drop()
