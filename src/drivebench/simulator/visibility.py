"""Per-chunk arrays the visibility mask is computed from, kept up to date incrementally.

For every chunk id: the position of its document in an engine's ``doc_ids``, the instant its version
became current and the instant it stopped being current (the next version's creation, exclusive), and the
instant its document went to the trash; plus the closed trash spans of every document (for ``as_of``).
``Simulator.visible_chunks`` combines them with the permission mask in a few numpy operations.

Rebuilding them walks every document and every chunk in Python (19 ms at 300 documents, about a second at
10,000). ``ChunkArrays.sync`` instead touches only what changed since the last call:

* chunks added since (new versions, re-indexed renames): their rows are appended and their documents
  re-derived;
* documents the change feed names since the last call (every write to a document records a change
  naming it: ``ChangeCursor``) have their chunks' rows re-derived from ``store.by_version``; when the feed
  cannot tell (another drive, a rolled-back write shrank or rewrote it), every document is compared by a
  signature (version count, first and last version ids, trash time, trash span count and last span end;
  version records are immutable);
* positions are recomputed only when the engine's document list differs (a document added or purged),
  not on every policy change (a grant change keeps the documents);
* a fault generation change (``stale-index`` decides which versions count) rebuilds everything.

The arrays are only read and written under the store's lock (``visible_chunks``), so a reader never sees
a half-updated row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from drivebench.drive.clock import to_us

if TYPE_CHECKING:
    from drivebench.drive.model import DocumentRec
    from drivebench.drive.permissions.engine import PermissionEngine
    from drivebench.drive.state import Drive
    from drivebench.search.index.chunk_store import ChunkStore
    from drivebench.simulator.faults import FaultSet

MAX_US = int(np.iinfo(np.int64).max)
_Sig = tuple[object, ...]


def _signature(d: DocumentRec) -> _Sig:
    versions, spans = d.versions, d.trash_spans
    return (
        len(versions),
        versions[0].version_id if versions else None,
        versions[-1].version_id if versions else None,
        d.trashed_at,
        len(spans),
        spans[-1].end if spans else None,
    )


class ChangeCursor:
    """The documents the drive's change feed names since the previous call; None when the feed cannot tell
    (first call, another drive, or a rolled-back write removed or replaced changes already seen)."""

    def __init__(self) -> None:
        self.drive: object = None
        self.seen = 0
        self.last: object = None

    def touched(self, drive: Drive) -> set[str] | None:
        changes = drive.changes
        n = len(changes)
        consistent = self.drive is drive and self.seen <= n and (self.seen == 0 or changes[self.seen - 1] is self.last)
        ids = {c.doc_id for c in changes[self.seen : n] if c.doc_id} if consistent else None
        self.drive, self.seen, self.last = drive, n, (changes[n - 1] if n else None)
        return ids


class ChunkArrays:
    def __init__(self) -> None:
        self.doc = np.zeros(0, dtype=np.int64)  # engine position of the chunk's document (-1: unknown)
        self.start = np.zeros(0, dtype=np.int64)
        self.end = np.zeros(0, dtype=np.int64)
        self.trash = np.zeros(0, dtype=np.int64)
        self.closed_trash = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.spans: dict[str, list[tuple[int, int]]] = {}  # closed trash spans [start, end) per document
        self.cursor = ChangeCursor()
        self.doc_ids: list[str] | None = None  # the engine document list ``doc`` refers to
        self.sigs: dict[str, tuple[DocumentRec, _Sig]] = {}
        self.key: tuple[int, ...] | None = None
        self.generation: int | None = None
        self.full_rebuilds = 0  # for tests and benchmarks
        self.updates = 0

    def sync(
        self, drive: Drive, store: ChunkStore, faults: FaultSet, key: tuple[int, ...], engine: PermissionEngine
    ) -> None:
        """Bring the arrays up to ``store`` and ``drive`` (caller holds ``store.lock``). ``key``: what they are
        derived from (``Simulator._visibility_key``), which the caller compares with ``self.key`` first so that
        a recall after no write calls nothing here; ``faults`` decides which versions count (stale-index)."""
        same_docs = self.doc_ids is engine.doc_ids
        if key == self.key and same_docs:
            return
        if self.doc_ids is None or self.generation != faults.generation:
            self._rebuild(drive, store, faults, engine)
        else:
            if not same_docs and self.doc_ids != engine.doc_ids:
                pos = engine.doc_index
                self.doc = np.array([pos.get(d, -1) for d in store.doc_ids[: len(self.doc)]], dtype=np.int64)
                self._span_arrays(engine)
            self.doc_ids = engine.doc_ids
            if key != self.key:
                self._update(drive, store, faults, engine)
        self.key = key

    def _rebuild(self, drive: Drive, store: ChunkStore, faults: FaultSet, engine: PermissionEngine) -> None:
        n = len(store)
        self.doc = np.array([engine.doc_index.get(d, -1) for d in store.doc_ids[:n]], dtype=np.int64)
        self.start = np.full(n, MAX_US, dtype=np.int64)
        self.end = np.full(n, MAX_US, dtype=np.int64)
        self.trash = np.full(n, MAX_US, dtype=np.int64)
        self.sigs, self.spans = {}, {}
        self.doc_ids = engine.doc_ids
        self.generation = faults.generation
        self.cursor.touched(drive)  # from here on, the feed says what changed
        for d in list(drive.documents.values()):  # a writer may add documents concurrently
            self._derive(store, faults, d)
        self._span_arrays(engine)
        self.full_rebuilds += 1

    def _update(self, drive: Drive, store: ChunkStore, faults: FaultSet, engine: PermissionEngine) -> None:
        old, n = len(self.doc), len(store)
        touched: set[str] = set()
        if n > old:  # appended chunks: their rows, and their documents re-derived below
            pos = engine.doc_index
            new_docs = store.doc_ids[old:n]
            self.doc = np.concatenate([self.doc, np.array([pos.get(d, -1) for d in new_docs], dtype=np.int64)])
            pad = np.full(n - old, MAX_US, dtype=np.int64)
            self.start, self.end, self.trash = (np.concatenate([a, pad]) for a in (self.start, self.end, self.trash))
            touched.update(new_docs)
        before = self.cursor.seen
        named = self.cursor.touched(drive)
        documents = drive.documents
        if named is None or (self.cursor.seen == before and n == old):  # the feed cannot tell (or shows nothing
            # although the drive changed, e.g. a write rolled back in place): compare every document's signature
            for d in list(documents.values()):
                seen = self.sigs.get(d.doc_id)
                if seen is None or seen[0] is not d or seen[1] != _signature(d):
                    touched.add(d.doc_id)
        else:
            touched |= named
        for doc_id in touched:
            doc = documents.get(doc_id)
            if doc is not None:
                self._derive(store, faults, doc)
            else:  # purged: its chunks are dead; forget its spans
                self.spans.pop(doc_id, None)
                self.sigs.pop(doc_id, None)
        self._span_arrays(engine)
        self.updates += 1

    def _derive(self, store: ChunkStore, faults: FaultSet, d: DocumentRec) -> None:
        """The rows of every chunk of ``d``'s versions: when each version was current, when ``d`` was trashed."""
        by_version = store.by_version
        versions = faults.served_versions(d.versions, store)  # FAULT stale-index; clean: all
        trashed = to_us(d.trashed_at) if d.trashed_at else MAX_US
        n = len(self.doc)
        for i, v in enumerate(versions):
            ids = [c for c in by_version.get(v.version_id, ()) if c < n]
            if not ids:
                continue
            self.start[ids] = to_us(v.created_at)
            self.end[ids] = to_us(versions[i + 1].created_at) if i + 1 < len(versions) else MAX_US
            self.trash[ids] = trashed
        self.sigs[d.doc_id] = (d, _signature(d))
        closed = [(to_us(x.start), to_us(x.end)) for x in d.trash_spans if x.end is not None]
        if closed:
            self.spans[d.doc_id] = closed
        else:
            self.spans.pop(d.doc_id, None)

    def _span_arrays(self, engine: PermissionEngine) -> None:
        pos = engine.doc_index
        spans = [(pos.get(doc_id, -1), lo, hi) for doc_id, closed in self.spans.items() for lo, hi in closed]
        self.closed_trash = (  # [start, end) intervals a document spent in the trash, by engine position
            np.array([i for i, _, _ in spans], dtype=np.int64),
            np.array([lo for _, lo, _ in spans], dtype=np.int64),
            np.array([hi for _, _, hi in spans], dtype=np.int64),
        )
