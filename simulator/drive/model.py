"""The drive's records: plain dataclasses, no HTTP, no Casbin.

Folders have stable ids (``fld-<n>``) so that moving a folder changes one parent link, not
every grant below it; paths are derived from the parent chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass
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


@dataclass
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


@dataclass
class FolderNode:
    folder_id: str
    name: str
    parent_id: str | None
    break_inheritance: bool = False
    owner_department: str | None = None
    kind: str = "other"


@dataclass
class VersionRec:
    version_id: str
    version: int
    blob: str  # content address (sha256 hex) of the bytes
    size: int
    created_at: datetime
    author: str | None = None
    note: str | None = None
    restored_from: str | None = None


@dataclass
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

    @property
    def head(self) -> VersionRec:
        return self.versions[-1]

    def version_at(self, at: datetime) -> VersionRec | None:
        """The version that was current at ``at`` (None before the first one was created)."""
        current = None
        for v in self.versions:
            if v.created_at <= at:
                current = v
        return current


@dataclass
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
    created_at: datetime | None = None
