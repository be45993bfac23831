"""The drive's state: organisation, folder tree, documents with versions, grants, clock.

Plain Python, no HTTP. Every change that can alter who may see what increments
``policy_version``; every change to content increments ``content_version``. A single
re-entrant lock serialises writers; readers take consistent snapshots through the
permission engine and the index, which are rebuilt or patched under the same lock.

Blobs live in memory (``blobs``) or, for a durable drive, in a content-addressed store on disk
(``blob_store``); the metadata is journalled to SQLite when ``journal`` is set (see
``drivebench.simulator.persistence``).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Protocol

from drivebench.drive.clock import SimClock, as_utc
from drivebench.drive.errors import InvalidRequest, NotFound, UnknownPrincipal
from drivebench.drive.model import (
    DepartmentRec,
    DocumentRec,
    FolderNode,
    GrantRec,
    MembershipRec,
    Placement,
    ProjectRec,
    TrashSpan,
    UserRec,
    VersionRec,
)
from drivebench.drive.operations import DEV_ID_KEY, Change, Dirty, DriveOperations, Journal, Retention, Undo
from drivebench.formats.corpus import Document as ManifestDocument
from drivebench.formats.corpus import Manifest, level_rank, load_manifest


def _opt_utc(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


class BlobBackend(Protocol):
    """Content-addressed bytes (sha256 hex)."""

    def put(self, data: bytes) -> str: ...

    def get(self, digest: str) -> bytes: ...

    def delete(self, digest: str) -> None: ...


class Drive(DriveOperations):
    def __init__(self, name: str, language: str, clock: SimClock) -> None:
        self.name = name
        self.language = language
        self.clock = clock
        self.lock = threading.RLock()
        self.users: dict[str, UserRec] = {}
        self.departments: dict[str, DepartmentRec] = {}
        self.projects: dict[str, ProjectRec] = {}
        self.folders: dict[str, FolderNode] = {}
        self.documents: dict[str, DocumentRec] = {}
        self.grants: dict[str, GrantRec] = {}
        self.blobs: dict[str, bytes] = {}
        self._children: dict[tuple[str, str], str] = {}
        self.changes: list[Change] = []
        # which history the change feed tells: a new drive (a reset, a seed, a restart without a data
        # directory) starts another one, so a cursor from the old one is refused (``changes_since``);
        # a durable drive keeps its store's generation across restarts (``DriveStore.load``)
        self.feed_epoch = secrets.token_hex(16)
        self.policy_version = 0
        self.content_version = 0
        self._folder_seq = 0
        self._doc_seq = 0
        # the key of the ids the drive gives (uploads, grants): the simulator derives it from its token secret
        self.id_key: bytes = DEV_ID_KEY
        self.removed_grants: list[GrantRec] = []
        self.retention = Retention()
        self.blob_store: BlobBackend | None = None
        self.journal: Journal | None = None
        self.failed: str | None = None
        self._dirty = Dirty()
        self._write_depth = 0
        self._undo: Undo | None = None

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_corpus(cls, corpus_dir: Path) -> Drive:
        corpus_dir = Path(corpus_dir)
        manifest = load_manifest(corpus_dir)
        return cls.from_manifest(manifest, corpus_dir)

    @classmethod
    def from_manifest(cls, m: Manifest, corpus_dir: Path | None = None) -> Drive:
        drive = cls(m.name, m.language, SimClock(m.clock.now))
        for d in m.departments:
            drive.departments[d.id] = DepartmentRec(d.id, d.name, d.parent)
        for u in m.users:
            drive.users[u.user_id] = UserRec(
                u.user_id, u.name, u.department, list(u.roles), level_rank(u.clearance), u.email
            )
        for p in m.projects:
            members = [
                MembershipRec(x.user_id, x.role, _opt_utc(x.valid_from), _opt_utc(x.valid_until)) for x in p.members
            ]
            drive.projects[p.id] = ProjectRec(p.id, p.name, members)
        for f in sorted(m.folders, key=lambda f: (f.path.count("/"), f.path)):
            if f.path == "/":
                drive._add_folder_node("", None, f.break_inheritance, f.owner_department, f.kind)
                continue
            parent_path, _, name = f.path.rpartition("/")
            parent = drive.folder_by_path(parent_path or "/")
            drive._add_folder_node(name, parent.folder_id, f.break_inheritance, f.owner_department, f.kind)
        for doc in m.documents:
            versions = []
            for v in doc.versions:
                data = (corpus_dir / v.file).read_bytes() if corpus_dir is not None else b""
                blob = drive.put_blob(data)
                versions.append(
                    VersionRec(v.version_id, v.version, blob, len(data), as_utc(v.created_at), v.author, v.note)
                )
            drive.documents[doc.doc_id] = DocumentRec(
                doc_id=doc.doc_id,
                name=doc.name,
                folder_id=drive.folder_by_path(doc.folder).folder_id,
                file_type=doc.file_type,
                secret_level=level_rank(doc.secret_level),
                created_at=as_utc(doc.created_at),
                versions=versions,
                title=doc.title,
                owner=doc.owner,
                trashed_at=_opt_utc(doc.trashed_at),
                tags=dict(doc.tags),
                trash_spans=[TrashSpan(as_utc(doc.trashed_at))] if doc.trashed_at is not None else [],
                placements=_placements(drive, doc),
            )
        for g in m.grants:
            drive.grants[g.grant_id] = GrantRec(
                grant_id=g.grant_id,
                subject=g.subject.key(),
                actions=list(g.actions),
                effect=g.effect,
                folder_id=drive.folder_by_path(g.path).folder_id if g.path is not None else None,
                doc_id=g.doc_id,
                valid_from=_opt_utc(g.valid_from),
                valid_until=_opt_utc(g.valid_until),
                note=g.note,
            )
        return drive

    # ------------------------------------------------------------------ blobs
    def put_blob(self, data: bytes) -> str:
        if self.blob_store is not None:
            digest = self.blob_store.put(data)
        else:
            digest = hashlib.sha256(data).hexdigest()
            if digest not in self.blobs and self._undo is not None:
                self._undo.blobs_put.add(digest)  # a failed write releases it again
            self.blobs.setdefault(digest, data)
        return digest

    def blob(self, digest: str) -> bytes:
        if self.blob_store is not None:
            return self.blob_store.get(digest)
        try:
            return self.blobs[digest]
        except KeyError:
            raise NotFound(f"blob {digest} missing") from None

    def referenced_blobs(self) -> set[str]:
        with self.lock:
            return {v.blob for d in self.documents.values() for v in d.versions}

    def release_blobs(self, digests: Iterable[str]) -> None:
        """Delete the bytes of blobs no version references any more (after a purge or a version deletion)."""
        unused = set(digests) - self.referenced_blobs()
        for digest in unused:
            if self.blob_store is not None:
                self.blob_store.delete(digest)
            else:
                self.blobs.pop(digest, None)

    # ------------------------------------------------------------------ folders
    def _add_folder_node(
        self,
        name: str,
        parent_id: str | None,
        break_inheritance: bool,
        owner: str | None,
        kind: str,
        folder_id: str | None = None,
    ) -> FolderNode:
        folder_id = folder_id or f"fld-{self._folder_seq}"
        self._folder_seq += 1
        node = FolderNode(folder_id, name, parent_id, break_inheritance, owner, kind)
        self.folders[folder_id] = node
        if parent_id is not None:
            self._children[(parent_id, name)] = folder_id
        return node

    @property
    def root(self) -> FolderNode:
        return self.folders["fld-0"]

    def folder_path(self, folder_id: str) -> str:
        parts: list[str] = []
        node = self.folders[folder_id]
        while node.parent_id is not None:
            parts.append(node.name)
            node = self.folders[node.parent_id]
        return "/" + "/".join(reversed(parts))

    def folder_by_path(self, path: str) -> FolderNode:
        if not path.startswith("/"):
            raise InvalidRequest(f"folder path {path!r} must start with /")
        node = self.root
        for name in [p for p in path.split("/") if p]:
            child_id = self._children.get((node.folder_id, name))
            if child_id is None:
                raise NotFound(f"no folder {path}")
            node = self.folders[child_id]
        return node

    def folder_ancestors(self, folder_id: str) -> Iterator[FolderNode]:
        """The folder itself, then its parent, up to the root."""
        node: FolderNode | None = self.folders[folder_id]
        while node is not None:
            yield node
            node = self.folders[node.parent_id] if node.parent_id is not None else None

    def folder_subtree(self, folder_id: str) -> set[str]:
        """The folder and every folder below it, in the tree now."""
        with self.lock:
            children: dict[str, list[str]] = {}
            for (parent_id, _), child_id in self._children.items():
                children.setdefault(parent_id, []).append(child_id)
        out, stack = {folder_id}, [folder_id]
        while stack:
            for child_id in children.get(stack.pop(), ()):
                if child_id not in out:
                    out.add(child_id)
                    stack.append(child_id)
        return out

    def doc_path(self, doc: DocumentRec) -> str:
        folder = self.folder_path(doc.folder_id)
        return f"{folder.rstrip('/')}/{doc.name}"

    # ------------------------------------------------------------------ history (as_of)
    def folder_path_at(self, folder_id: str, at: datetime | None) -> str:
        """The folder's path at ``at`` (None: now), following the parent links it had then."""
        if at is None:
            return self.folder_path(folder_id)
        parts: list[str] = []
        seen: set[str] = set()
        node = self.folders[folder_id]
        parent = node.parent_at(at)
        while parent is not None and node.folder_id not in seen:
            seen.add(node.folder_id)
            parts.append(node.name)
            node = self.folders[parent]
            parent = node.parent_at(at)
        return "/" + "/".join(reversed(parts))

    def doc_path_at(self, doc: DocumentRec, at: datetime | None) -> str:
        return self.doc_name_path_at(doc, at)[1]

    def doc_name_path_at(self, doc: DocumentRec, at: datetime | None) -> tuple[str, str]:
        """The document's (name, path) at ``at`` (None: now, read off the record as it stands): what a listing
        or a recall hit shows, the placement looked up once."""
        folder_id, name = (doc.folder_id, doc.name) if at is None else doc.placement_at(at)
        return name, f"{self.folder_path_at(folder_id, at).rstrip('/')}/{name}"

    def placement_times(self) -> list[datetime]:
        """Sorted instants at which the tree changed (a document or folder moved): the permission
        engine needs one compiled tree per interval between two of them."""
        with self.lock:
            times = {
                cur.since
                for d in self.documents.values()
                for prev, cur in zip(d.placements, d.placements[1:], strict=False)
                if cur.since is not None and cur.folder_id != prev.folder_id
            }
            times |= {m.since for f in self.folders.values() for m in f.moves[1:] if m.since is not None}
        return sorted(times)

    # ------------------------------------------------------------------ lookups
    def user(self, user_id: str) -> UserRec:
        try:
            return self.users[user_id]
        except KeyError:
            raise UnknownPrincipal(f"unknown user_id {user_id!r}") from None

    def doc(self, doc_id: str) -> DocumentRec:
        try:
            return self.documents[doc_id]
        except KeyError:
            raise NotFound(f"no document {doc_id!r}") from None

    def department_chain(self, dept_id: str) -> list[str]:
        chain: list[str] = []
        current: str | None = dept_id
        while current is not None and current not in chain:
            chain.append(current)
            current = self.departments[current].parent if current in self.departments else None
        return chain

    @property
    def roles(self) -> set[str]:
        return {r for u in self.users.values() for r in u.roles}

    def bump_policy(self) -> int:
        self.policy_version += 1
        return self.policy_version

    def bump_content(self) -> int:
        self.content_version += 1
        return self.content_version


def _placements(drive: Drive, d: ManifestDocument) -> list[Placement]:
    """The corpus's ``moves`` as placements, so that every ``as_of`` before a move judges the document in the
    folder it was in then (the same rule as the generator's ``folder_at``: a move takes effect at its ``at``)."""
    if not d.moves:
        return []
    moves = sorted(d.moves, key=lambda m: m.at)
    if moves[-1].to_folder != d.folder:
        raise InvalidRequest(f"document {d.doc_id}: its last move ends in {moves[-1].to_folder}, not in {d.folder}")
    out = [Placement(None, drive.folder_by_path(moves[0].from_folder).folder_id, d.name)]
    out += [Placement(as_utc(m.at), drive.folder_by_path(m.to_folder).folder_id, d.name) for m in moves]
    return out
