"""The drive's records: plain dataclasses, no HTTP, no Casbin.

Folders have stable ids (``fld-<n>``) so that moving a folder changes one parent link, not
every grant below it; paths are derived from the parent chain.

History for point-in-time (``as_of``) questions lives on the records themselves:

* ``FolderNode.moves``: (since, parent_id) placements of a folder, oldest first;
* ``DocumentRec.placements``: (since, folder_id, name) placements of a document, oldest first;
* ``DocumentRec.trash_spans``: [start, end) intervals the document spent in the trash;
* ``GrantRec.created_at`` / ``removed_at``: when a grant entered and left the drive (removed grants
  are kept in ``Drive.removed_grants``);
* ``DocumentRec.versions``: every kept version, each current from its ``created_at`` until the next.

An empty history list means "always as it is now" (records built directly, e.g. by benchmarks).

The records a drive holds one or more of per document use ``__slots__`` (a slotted record is about a
third of the memory of one with a ``__dict__``; at 100,000 documents that is tens of MB).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(slots=True)
class UserRec:
    user_id: str
    name: str
    department: str
    roles: list[str]
    clearance: int
    email: str | None = None


@dataclass
class DepartmentRec:
    id: str
    name: str
    parent: str | None


@dataclass(slots=True)
class MembershipRec:
    user_id: str
    role: str
    valid_from: datetime | None
    valid_until: datetime | None


@dataclass
class ProjectRec:
    id: str
    name: str
    members: list[MembershipRec] = field(default_factory=list)


@dataclass(slots=True)
class FolderMove:
    since: datetime | None  # None: from the beginning
    parent_id: str | None


@dataclass(slots=True)
class FolderNode:
    folder_id: str
    name: str
    parent_id: str | None
    break_inheritance: bool = False
    owner_department: str | None = None
    kind: str = "other"
    moves: list[FolderMove] = field(default_factory=list)

    def parent_at(self, at: datetime | None) -> str | None:
        """The parent this folder had at ``at`` (None: now)."""
        if at is None or not self.moves:
            return self.parent_id
        current = self.moves[0].parent_id
        for m in self.moves:
            if m.since is None or m.since <= at:
                current = m.parent_id
        return current


@dataclass(slots=True)
class Placement:
    since: datetime | None  # None: from the beginning
    folder_id: str
    name: str


@dataclass(slots=True)
class TrashSpan:
    start: datetime
    end: datetime | None = None  # None: still in the trash


@dataclass(slots=True)
class VersionRec:
    version_id: str
    version: int
    blob: str  # content address (sha256 hex) of the bytes
    size: int
    created_at: datetime
    author: str | None = None
    note: str | None = None
    restored_from: str | None = None


@dataclass(slots=True)
class DocumentRec:
    doc_id: str
    name: str
    folder_id: str
    file_type: str
    secret_level: int
    created_at: datetime
    versions: list[VersionRec]
    title: str | None = None
    owner: str | None = None
    trashed_at: datetime | None = None
    tags: dict[str, str] = field(default_factory=dict)
    placements: list[Placement] = field(default_factory=list)
    trash_spans: list[TrashSpan] = field(default_factory=list)

    @property
    def head(self) -> VersionRec:
        return self.versions[-1]

    @property
    def modified_at(self) -> datetime:
        """When the document itself last changed: the latest of its head version's creation, its latest
        placement (rename or move) and its latest trash or untrash. Permission changes (grants,
        memberships, clearances, inheritance) never move it, nor do moves of a folder above it."""
        times = [self.head.created_at if self.versions else self.created_at]
        times += [p.since for p in self.placements if p.since is not None]
        for span in self.trash_spans:
            times.append(span.start)
            if span.end is not None:
                times.append(span.end)
        if self.trashed_at is not None:
            times.append(self.trashed_at)
        return max(times)

    def placement_at(self, at: datetime | None) -> tuple[str, str]:
        """(folder_id, name) at ``at`` (None: now). Before its first placement a document is where it
        was first put (it has no version then, so nothing about it is visible anyway)."""
        if at is None or not self.placements:
            return self.folder_id, self.name
        current = self.placements[0]
        for p in self.placements:
            if p.since is None or p.since <= at:
                current = p
        return current.folder_id, current.name

    def trashed_at_time(self, at: datetime) -> bool:
        """Was the document in the trash at ``at``?"""
        if not self.trash_spans:
            return self.trashed_at is not None and self.trashed_at <= at
        return any(s.start <= at and (s.end is None or at < s.end) for s in self.trash_spans)

    def version_at(self, at: datetime) -> VersionRec | None:
        """The version that was current at ``at`` (None before the first one was created)."""
        current = None
        for v in self.versions:
            if v.created_at <= at:
                current = v
        return current


@dataclass(slots=True)
class GrantRec:
    grant_id: str
    subject: str  # Casbin subject key: user:<id>, role:<name>, dept:<id>, project:<id>, everyone
    actions: list[str]
    effect: str  # allow | deny
    folder_id: str | None = None
    doc_id: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    note: str | None = None
    created_at: datetime | None = None  # None: part of the loaded corpus (in force from the beginning)
    removed_at: datetime | None = None  # set when the grant is removed (kept in Drive.removed_grants)
