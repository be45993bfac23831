"""Changes to the drive: grants, moves, trash, versions, users. Each records a change-feed entry.

Every operation validates first and changes nothing when it raises. Operations that can alter who
may see what bump ``policy_version``; operations that alter content or placement bump
``content_version``. Callers hold ``drive.lock`` (the methods take it themselves, re-entrantly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from drivebench.corpora.format import ACTIONS
from drivebench.simulator.drive.errors import Conflict, InvalidRequest, NotFound, UnknownPrincipal
from drivebench.simulator.drive.model import DocumentRec, FolderNode, GrantRec, VersionRec

CHANGE_KINDS = ("created", "updated", "trashed", "untrashed", "moved", "renamed", "acl_changed", "purged", "restored")


@dataclass(frozen=True)
class Change:
    seq: int
    kind: str
    at: datetime
    doc_id: str | None = None
    folder_id: str | None = None
    version_id: str | None = None
    grant_id: str | None = None
    actor: str | None = None


class DriveOperations:
    """Mixin for ``Drive``: all state-changing operations."""

    # provided by Drive (declared here for readers; see state.py)
    changes: list[Change]

    # ------------------------------------------------------------------ change feed
    def _record(self, kind: str, **kw: object) -> Change:
        change = Change(seq=len(self.changes) + 1, kind=kind, at=self.clock.now(), **kw)
        self.changes.append(change)
        return change

    def changes_since(self, cursor: int, limit: int = 1000) -> tuple[list[Change], int]:
        """Changes with seq > cursor (at most ``limit``) and the next cursor."""
        if cursor < 0:
            raise InvalidRequest("cursor must be >= 0")
        batch = self.changes[cursor : cursor + limit]
        return batch, cursor + len(batch)

    # ------------------------------------------------------------------ grants
    def _check_subject(self, subject: str) -> None:
        kind, _, ident = subject.partition(":")
        known = {
            "user": self.users,
            "dept": self.departments,
            "project": self.projects,
        }
        if subject == "everyone":
            return
        if kind == "role":
            if not ident:
                raise UnknownPrincipal("a role subject needs a role name")
            return
        if kind not in known:
            raise InvalidRequest(f"unknown subject kind in {subject!r}; use user:, role:, dept:, project: or everyone")
        if ident not in known[kind]:
            raise UnknownPrincipal(f"unknown {kind} {ident!r}")

    def add_grant(self, grant: GrantRec, actor: str | None = None) -> GrantRec:
        with self.lock:
            if grant.grant_id in self.grants:
                raise Conflict(f"grant {grant.grant_id} exists")
            if (grant.folder_id is None) == (grant.doc_id is None):
                raise InvalidRequest("a grant targets exactly one folder or one document")
            if grant.folder_id is not None and grant.folder_id not in self.folders:
                raise NotFound(f"no folder {grant.folder_id}")
            if grant.doc_id is not None:
                self.doc(grant.doc_id)
            if not grant.actions or any(a not in ACTIONS for a in grant.actions):
                raise InvalidRequest(f"actions must be a non-empty subset of {ACTIONS}")
            if grant.effect not in ("allow", "deny"):
                raise InvalidRequest("effect must be allow or deny")
            if grant.valid_from and grant.valid_until and grant.valid_from >= grant.valid_until:
                raise InvalidRequest("valid_from must be before valid_until")
            self._check_subject(grant.subject)
            stored = replace(grant, created_at=grant.created_at or self.clock.now())
            self.grants[grant.grant_id] = stored
            self.bump_policy()
            self._record(
                "acl_changed", grant_id=grant.grant_id, doc_id=grant.doc_id, folder_id=grant.folder_id, actor=actor
            )
            return stored

    def remove_grant(self, grant_id: str, actor: str | None = None) -> GrantRec:
        with self.lock:
            grant = self.grants.pop(grant_id, None)
            if grant is None:
                raise NotFound(f"no grant {grant_id}")
            self.bump_policy()
            self._record("acl_changed", grant_id=grant_id, doc_id=grant.doc_id, folder_id=grant.folder_id, actor=actor)
            return grant

    def next_grant_id(self) -> str:
        n = len(self.grants) + 1
        while f"g-{n}" in self.grants:
            n += 1
        return f"g-{n}"

    # ------------------------------------------------------------------ users
    def set_clearance(self, user_id: str, clearance: int, actor: str | None = None) -> None:
        with self.lock:
            if not 0 <= clearance <= 3:
                raise InvalidRequest("clearance must be 0 (public) to 3 (secret)")
            self.user(user_id).clearance = clearance
            self.bump_policy()
            self._record("acl_changed", actor=actor)

    def set_roles(self, user_id: str, roles: list[str], actor: str | None = None) -> None:
        with self.lock:
            self.user(user_id).roles = list(roles)
            self.bump_policy()
            self._record("acl_changed", actor=actor)

    # ------------------------------------------------------------------ folders
    def create_folder(self, parent_id: str, name: str, break_inheritance: bool = False) -> FolderNode:
        with self.lock:
            _check_name(name)
            if parent_id not in self.folders:
                raise NotFound(f"no folder {parent_id}")
            if (parent_id, name) in self._children:
                raise Conflict(f"a folder {name!r} exists there")
            node = self._add_folder_node(name, parent_id, break_inheritance, None, "other")
            self.bump_policy()
            return node

    def move_folder(self, folder_id: str, new_parent_id: str, actor: str | None = None) -> FolderNode:
        """Re-parent a folder. Access below it is re-evaluated: it now inherits from its new ancestors."""
        with self.lock:
            node = self.folders.get(folder_id)
            if node is None or node.parent_id is None:
                raise InvalidRequest("cannot move the root or an unknown folder")
            if new_parent_id not in self.folders:
                raise NotFound(f"no folder {new_parent_id}")
            if any(a.folder_id == folder_id for a in self.folder_ancestors(new_parent_id)):
                raise InvalidRequest("cannot move a folder into itself or its own subfolder")
            if (new_parent_id, node.name) in self._children:
                raise Conflict(f"a folder {node.name!r} exists in the destination")
            del self._children[(node.parent_id, node.name)]
            node.parent_id = new_parent_id
            self._children[(new_parent_id, node.name)] = folder_id
            self.bump_policy()
            self.bump_content()
            self._record("moved", folder_id=folder_id, actor=actor)
            return node

    # ------------------------------------------------------------------ documents
    def _unique_doc_id(self) -> str:
        n = len(self.documents) + 1
        while f"n{n:05d}" in self.documents:
            n += 1
        return f"n{n:05d}"

    def create_document(
        self,
        folder_id: str,
        name: str,
        data: bytes,
        *,
        file_type: str,
        secret_level: int = 1,
        author: str | None = None,
        title: str | None = None,
    ) -> DocumentRec:
        with self.lock:
            _check_name(name)
            if folder_id not in self.folders:
                raise NotFound(f"no folder {folder_id}")
            if any(d.folder_id == folder_id and d.name == name for d in self.documents.values()):
                raise Conflict(f"a document {name!r} exists in that folder; upload a new version instead")
            at = self.clock.tick()
            doc_id = self._unique_doc_id()
            version = VersionRec(f"{doc_id}-v1", 1, self.put_blob(data), len(data), at, author)
            doc = DocumentRec(doc_id, name, folder_id, file_type, secret_level, at, [version], title, author)
            self.documents[doc_id] = doc
            self.bump_policy()  # a new g2 link
            self.bump_content()
            self._record("created", doc_id=doc_id, version_id=version.version_id, actor=author)
            return doc

    def add_version(self, doc_id: str, data: bytes, author: str | None = None, note: str | None = None) -> VersionRec:
        with self.lock:
            doc = self.doc(doc_id)
            if doc.trashed_at is not None:
                raise Conflict(f"document {doc_id} is in the trash; untrash it first")
            at = self.clock.tick()
            number = doc.head.version + 1
            version = VersionRec(f"{doc_id}-v{number}", number, self.put_blob(data), len(data), at, author, note)
            doc.versions.append(version)
            self.bump_content()
            self._record("updated", doc_id=doc_id, version_id=version.version_id, actor=author)
            return version

    def restore_version(self, doc_id: str, version_id: str, author: str | None = None) -> VersionRec:
        """Copy-forward: a new head version with the old version's bytes; history is kept."""
        with self.lock:
            doc = self.doc(doc_id)
            old = next((v for v in doc.versions if v.version_id == version_id), None)
            if old is None:
                raise NotFound(f"document {doc_id} has no version {version_id}")
            version = self.add_version(doc_id, self.blob(old.blob), author, note=f"restored from {version_id}")
            version.restored_from = version_id
            self._record("restored", doc_id=doc_id, version_id=version.version_id, actor=author)
            return version

    def move_document(
        self, doc_id: str, folder_id: str | None = None, name: str | None = None, actor: str | None = None
    ) -> DocumentRec:
        with self.lock:
            doc = self.doc(doc_id)
            target = folder_id or doc.folder_id
            new_name = name or doc.name
            _check_name(new_name)
            if target not in self.folders:
                raise NotFound(f"no folder {target}")
            clash = any(
                d.doc_id != doc_id and d.folder_id == target and d.name == new_name for d in self.documents.values()
            )
            if clash:
                raise Conflict(f"a document {new_name!r} exists in the destination")
            moved, renamed = target != doc.folder_id, new_name != doc.name
            doc.folder_id, doc.name = target, new_name
            if moved:
                self.bump_policy()
                self._record("moved", doc_id=doc_id, folder_id=target, actor=actor)
            if renamed:
                self._record("renamed", doc_id=doc_id, actor=actor)
            self.bump_content()
            return doc

    def trash(self, doc_id: str, actor: str | None = None) -> DocumentRec:
        with self.lock:
            doc = self.doc(doc_id)
            if doc.trashed_at is not None:
                raise Conflict(f"document {doc_id} is already in the trash")
            doc.trashed_at = self.clock.tick()
            self.bump_content()
            self._record("trashed", doc_id=doc_id, actor=actor)
            return doc

    def untrash(self, doc_id: str, actor: str | None = None) -> DocumentRec:
        with self.lock:
            doc = self.doc(doc_id)
            if doc.trashed_at is None:
                raise Conflict(f"document {doc_id} is not in the trash")
            doc.trashed_at = None
            self.clock.tick()
            self.bump_content()
            self._record("untrashed", doc_id=doc_id, actor=actor)
            return doc

    def purge(self, doc_id: str, actor: str | None = None) -> DocumentRec:
        with self.lock:
            doc = self.documents.pop(doc_id, None)
            if doc is None:
                raise NotFound(f"no document {doc_id}")
            for gid in [g.grant_id for g in self.grants.values() if g.doc_id == doc_id]:
                del self.grants[gid]
            self.bump_policy()
            self.bump_content()
            self._record("purged", doc_id=doc_id, actor=actor)
            return doc


def _check_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name or len(name) > 255:
        raise InvalidRequest(f"invalid name {name!r}: no slashes, NUL, . or .., at most 255 characters")
