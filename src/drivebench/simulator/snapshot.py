"""The snapshot fingerprint: a digest of what recall runs against (documents, versions, folders, trash,
grants, the organisation, the compiled policy, the index), kept incrementally so a write costs what it
changes. Every recall and ``/_sim/stats`` report it."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drivebench.simulator.visibility import ChangeCursor

if TYPE_CHECKING:
    from drivebench.drive.model import DocumentRec
    from drivebench.drive.permissions import PermissionEngine
    from drivebench.drive.permissions.pointintime import Policies
    from drivebench.drive.state import Drive
    from drivebench.search.index.chunk_store import ChunkStore


@dataclass
class _DocumentDigests:
    cursor: ChangeCursor = field(default_factory=ChangeCursor)
    digests: dict[str, int] = field(default_factory=dict)
    total: int = 0
    content_version: int = -1
    lock: threading.Lock = field(default_factory=threading.Lock)


def _document_digest(d: DocumentRec) -> int:
    spans, versions = d.trash_spans, d.versions
    doc_h = hashlib.sha256(f"{d.doc_id}|{d.folder_id}|{d.name}|{d.trashed_at}|{d.secret_level}".encode())
    doc_h.update(f"|{[(p.since, p.folder_id, p.name) for p in d.placements]}|{spans}".encode())
    for v in versions:
        doc_h.update(f"|{v.version_id}:{v.blob}".encode())
    return int.from_bytes(doc_h.digest(), "big")


class SnapshotFingerprint:
    """The fingerprint's caches: the last value and its key, one digest per document, the compiled policy's
    digest per engine. A fresh object computes everything from scratch (and must agree)."""

    def __init__(self) -> None:
        self._last: tuple[tuple[int, ...], str] | None = None
        self._docs = _DocumentDigests()  # the per-document part, kept incrementally
        self._policy_digest: tuple[PermissionEngine | None, bytes] = (None, b"")

    def invalidate(self) -> None:
        """Recompute on the next call (the chunk store was swapped: its counts may match the old one's)."""
        self._last = None

    def _documents_digest(self, drive: Drive) -> int:
        """Sum (mod 2**256) of every document's digest; only the documents the feed names are re-hashed
        (every document when the feed cannot tell, or names nothing although the content changed)."""
        memo = self._docs
        with memo.lock:
            before = memo.cursor.seen
            named = memo.cursor.touched(drive)
            silent = memo.cursor.seen == before and memo.content_version != drive.content_version
            if named is None or silent:  # e.g. a write rolled back in place: start over
                memo.digests.clear()
                memo.total = 0
                named = set(drive.documents)
            memo.content_version = drive.content_version
            for doc_id in named:
                memo.total -= memo.digests.pop(doc_id, 0)
                d = drive.documents.get(doc_id)
                if d is not None:
                    digest = memo.digests[doc_id] = _document_digest(d)
                    memo.total += digest
            memo.total %= 1 << 256
            return memo.total

    def value(self, policies: Policies, store: ChunkStore, pipeline: str, embedder: str) -> str:
        """The fingerprint of ``policies.drive`` with its current policy, searched through ``store`` by
        ``pipeline`` with ``embedder``."""
        drive = policies.drive
        key = (drive.content_version, drive.policy_version, len(store), store.n_alive, len(drive.changes))
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        h = hashlib.sha256()
        # history counts (as_of answers depend on it): placements, trash spans, folder moves, the feed length
        h.update(f"changes={len(drive.changes)}".encode())
        # one digest per document, recomputed only for the documents the change feed names (a
        # write costs what it changes), combined order-free (a sum mod 2**256 of digests that each include
        # the doc id); a document's path follows from its folder and name plus the folder records below
        h.update(self._documents_digest(drive).to_bytes(32, "big"))
        for f in sorted(drive.folders.values(), key=lambda f: f.folder_id):
            moves = [(m.since, m.parent_id) for m in f.moves]
            h.update(f"{f.folder_id}|{f.name}|{f.parent_id}|{moves}|{f.break_inheritance}".encode())
        # the organisation: who is where with what clearance, and who belongs to which project when
        for u in sorted(drive.users.values(), key=lambda u: u.user_id):
            h.update(f"{u.user_id}|{u.department}|{u.roles}|{u.clearance}".encode())
        for p in sorted(drive.projects.values(), key=lambda p: p.id):
            h.update(f"{p.id}|{[(m.user_id, m.role, m.valid_from, m.valid_until) for m in p.members]}".encode())
        engine = policies.engine
        if self._policy_digest[0] is not engine:  # the compiled policy: once per engine
            self._policy_digest = (engine, hashlib.sha256(engine.compiled.to_csv().encode()).digest())
        h.update(self._policy_digest[1])
        removed = [(g.grant_id, g.created_at, g.removed_at) for g in drive.removed_grants]
        h.update(f"removed_grants={removed}".encode())
        # live chunks only: dead rows depend on the process's history (a replay after a crash skips them)
        h.update(f"alive={store.n_alive}|pipeline={pipeline}".encode())
        h.update(f"embedder={embedder}".encode())
        value = "sha256:" + h.hexdigest()[:32]
        self._last = (key, value)
        return value
