"""Changes to the drive: grants, moves, trash, versions, users, project memberships, folder inheritance,
retention, the clock. Each records a change-feed entry (a clock move records one ``acl_changed`` entry per
grant or membership whose validity begins or ends on the way).

Every operation validates first and changes nothing when it raises. Operations that can alter who
may see what bump ``policy_version``; operations that alter content or placement bump
``content_version``. Each operation runs inside ``Drive._write()``: it holds ``drive.lock`` and, when
the drive is durable (``drive.journal`` set), commits everything it touched in one transaction
before the lock is released and the call returns. A write that returned is therefore durable, and
a reader that takes ``drive.lock`` never sees a change that is not yet committed.

History is kept for point-in-time questions (see ``model.py``): moves append placements, trash and
untrash open and close trash spans, removed grants move to ``removed_grants`` with ``removed_at``.
Moves, trash and versions tick the simulated clock, so every such change has its own instant.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import hmac
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from drivebench.drive.clock import MAX_TIME, checked_utc
from drivebench.drive.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    ResyncRequired,
    Unavailable,
    UnknownPrincipal,
)
from drivebench.drive.model import (
    DepartmentRec,
    DocumentRec,
    FolderMove,
    FolderNode,
    GrantRec,
    MembershipRec,
    Placement,
    TrashSpan,
    UserRec,
    VersionRec,
)
from drivebench.formats.corpus import ACTIONS

# the id key of an in-process drive (no server secret); a simulator replaces it (``Simulator.use_token_secret``)
DEV_ID_KEY = hashlib.sha256(b"drivebench development id key").digest()

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from drivebench.drive.state import Drive

CHANGE_KINDS = (
    "created",
    "updated",
    "restored",
    "trashed",
    "untrashed",
    "moved",
    "renamed",
    "acl_changed",
    "purged",
    "version_deleted",
    "settings",
)


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
    detail: str | None = None


RESYNC_REQUIRED = "the change feed was reset since that epoch: read everything again, then follow it from cursor 0"


def check_feed_epoch(drive: Drive, epoch: str | None) -> None:
    """Refuse a cursor given in another history of the feed (``epoch`` None: the caller did not say)."""
    if epoch is not None and epoch != drive.feed_epoch:
        raise ResyncRequired(RESYNC_REQUIRED)


# a role name: also part of Casbin subjects (role:<r>, principal:role=<r>;dept=<d>), so no separators in it
ROLE_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
MAX_ROLES = 32

MAX_RETENTION_DAYS = 36_500.0  # a century: beyond it a rule only overflows date arithmetic
MAX_VERSIONS_KEPT = 1_000_000


@dataclass
class Retention:
    """Version and trash retention, applied on the simulated clock (``Drive.apply_retention``).

    * ``versions_kept``: keep at most this many versions per document (the head always stays);
    * ``days``: delete a non-head version once it has been superseded for this many days;
    * ``trash_days``: purge a document once it has been in the trash for this many days.
    ``None`` disables a rule. Deleted versions leave ``as_of`` answers too (history is destroyed).
    """

    versions_kept: int | None = None
    days: float | None = None
    trash_days: float | None = None

    def validate(self) -> None:
        kept = self.versions_kept
        if kept is not None and (
            isinstance(kept, bool) or not isinstance(kept, int) or not 1 <= kept <= MAX_VERSIONS_KEPT
        ):
            raise InvalidRequest(
                f"versions_kept must be an integer from 1 to {MAX_VERSIONS_KEPT} (the head is always kept)"
            )
        for name in ("days", "trash_days"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and 0 < value <= MAX_RETENTION_DAYS):
                raise InvalidRequest(f"{name} must be a finite number of days, > 0 and <= {MAX_RETENTION_DAYS:g}")


@dataclass
class Dirty:
    """What one write touched: the journal persists exactly this, in one transaction."""

    changes: list[Change] = field(default_factory=list)
    docs: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)
    grants: set[str] = field(default_factory=set)
    removed_grants: list[GrantRec] = field(default_factory=list)
    users: set[str] = field(default_factory=set)
    projects: set[str] = field(default_factory=set)
    departments: set[str] = field(default_factory=set)
    blobs_released: set[str] = field(default_factory=set)
    kv: bool = False

    def __bool__(self) -> bool:
        return bool(
            self.changes
            or self.docs
            or self.folders
            or self.grants
            or self.removed_grants
            or self.users
            or self.projects
            or self.departments
            or self.kv
        )


@dataclass
class Undo:
    """What one write must put back if it fails: the drive's containers as they were (shallow copies),
    counters, settings, the clock, and a deep copy of every record the write touched (``_touch``)."""

    containers: dict[str, dict[object, object]]
    removed_grants: int
    changes: int
    doc_seq: int
    folder_seq: int
    retention: Retention
    clock: datetime
    policy_version: int
    content_version: int
    records: dict[int, tuple[object, dict[str, object]]] = field(default_factory=dict)
    blobs_put: set[str] = field(default_factory=set)


_DEPT_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_CONTAINERS = ("documents", "grants", "folders", "users", "departments", "_children")


class Journal(Protocol):
    """Where a durable drive commits its writes (``drivebench.simulator.persistence.store.DriveStore``)."""

    def commit(self, drive: Drive, dirty: Dirty) -> None: ...


class DriveOperations:
    """Mixin for ``Drive``: all state-changing operations."""

    # the attributes of Drive (set in Drive.__init__) these methods assign: declared here so that the type
    # checker reads them as Drive's, not as new attributes of the mixin
    failed: str | None
    retention: Retention
    _dirty: Dirty
    _undo: Undo | None
    _write_depth: int
    _doc_seq: int
    _folder_seq: int

    # ------------------------------------------------------------------ write protocol
    @contextlib.contextmanager
    def _write(self: Drive) -> Iterator[Dirty]:
        """Hold the lock for one write; on success commit what it touched (outermost write only). A write
        that raises, at any point (validation, the change itself, the commit), changes nothing: the
        outermost write puts back everything it had changed (``Undo``)."""
        with self.lock:
            if self.failed is not None:
                raise Unavailable(f"the drive is read-only after a failed commit ({self.failed}); restart the server")
            if self._write_depth == 0:
                self._undo = self._begin_undo()
            self._write_depth += 1
            ok = False
            try:
                yield self._dirty
                ok = True
            finally:
                self._write_depth -= 1
                if self._write_depth == 0:
                    dirty, self._dirty = self._dirty, Dirty()
                    undo, self._undo = self._undo, None
                    if not ok:
                        self._rollback(undo)
                    elif dirty:
                        try:
                            self._commit(dirty)
                        except BaseException:
                            self._rollback(undo)
                            raise

    def _begin_undo(self: Drive) -> Undo:
        return Undo(
            containers={name: dict(getattr(self, name)) for name in _CONTAINERS},
            removed_grants=len(self.removed_grants),
            changes=len(self.changes),
            doc_seq=self._doc_seq,
            folder_seq=self._folder_seq,
            retention=replace(self.retention),
            clock=self.clock.now(),
            policy_version=self.policy_version,
            content_version=self.content_version,
        )

    def _touch(self: Drive, record: DataclassInstance) -> None:
        """Call before changing a record in place: a failed write restores it."""
        undo = self._undo
        if undo is not None and id(record) not in undo.records:
            saved = {f.name: getattr(record, f.name) for f in fields(record)}
            undo.records[id(record)] = (record, copy.deepcopy(saved))

    def _rollback(self: Drive, undo: Undo | None) -> None:
        if undo is None:
            return
        for record, saved in undo.records.values():
            for name, value in saved.items():
                setattr(record, name, value)
        for name, saved_container in undo.containers.items():  # key by key: lock-free readers never see it empty
            container = getattr(self, name)
            for key in [k for k in container if k not in saved_container]:
                del container[key]
            for key, value in saved_container.items():
                if container.get(key) is not value:
                    container[key] = value
        del self.removed_grants[undo.removed_grants :]
        del self.changes[undo.changes :]
        self._doc_seq, self._folder_seq = undo.doc_seq, undo.folder_seq
        self.retention = undo.retention
        self.clock.set(undo.clock)
        # versions only move forward: if the failed write bumped one, whatever was built from its state
        # (engines, masks) carries that number, so the restored state gets a new one
        if self.policy_version != undo.policy_version:
            self.bump_policy()
        if self.content_version != undo.content_version:
            self.bump_content()
        if undo.blobs_put and self.journal is None:
            self.release_blobs(undo.blobs_put)

    def _commit(self: Drive, dirty: Dirty) -> None:
        if self.journal is not None:
            try:
                self.journal.commit(self, dirty)
            except Exception as exc:
                # memory is now ahead of disk: refuse further writes rather than diverge silently
                self.failed = f"{type(exc).__name__}: {exc}"
                raise Unavailable(f"the write could not be made durable: {self.failed}") from exc
        if dirty.blobs_released:
            self.release_blobs(dirty.blobs_released)

    # ------------------------------------------------------------------ change feed
    def _record(self: Drive, kind: str, at: datetime | None = None, **kw: str | None) -> Change:
        """Append a change-feed entry, at ``at`` (default: now; never after the clock)."""
        when = self.clock.now() if at is None else min(at, self.clock.now())
        change = Change(seq=len(self.changes) + 1, kind=kind, at=when, **kw)
        self.changes.append(change)
        self._dirty.changes.append(change)
        self._dirty.kv = True
        return change

    def changes_since(
        self: Drive, cursor: int, limit: int = 1000, epoch: str | None = None
    ) -> tuple[list[Change], int]:
        """Changes with seq > cursor (at most ``limit``) and the next cursor. ``epoch``: the ``feed_epoch`` the
        cursor was given in; another one is a ``ResyncRequired`` (the history was replaced since)."""
        check_feed_epoch(self, epoch)
        if cursor < 0:
            raise InvalidRequest("cursor must be >= 0")
        if cursor > len(self.changes):
            # 409, and no length: the feed's size counts entries the caller may not see
            raise Conflict("the cursor is past the end of the feed (was the drive reset?): start again from 0")
        batch = self.changes[cursor : cursor + limit]
        return batch, cursor + len(batch)

    # ------------------------------------------------------------------ grants
    def _check_subject(self: Drive, subject: str) -> None:
        kind, _, ident = subject.partition(":")
        known: dict[str, Mapping[str, object]] = {
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

    def add_grant(self: Drive, grant: GrantRec, actor: str | None = None) -> GrantRec:
        """Add a grant. It is in force from now on (``created_at``; for ``as_of`` before that it did not
        exist), within its own ``valid_from``/``valid_until``."""
        with self._write() as dirty:
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
            for bound in (grant.valid_from, grant.valid_until):
                if bound is not None:
                    checked_utc(bound, "valid_from/valid_until")
            if grant.valid_from and grant.valid_until and grant.valid_from >= grant.valid_until:
                raise InvalidRequest("valid_from must be before valid_until")
            self._check_subject(grant.subject)
            stored = replace(grant, created_at=grant.created_at or self.clock.now(), removed_at=None)
            self.grants[grant.grant_id] = stored
            dirty.grants.add(grant.grant_id)
            self.bump_policy()
            self._record(
                "acl_changed", grant_id=grant.grant_id, doc_id=grant.doc_id, folder_id=grant.folder_id, actor=actor
            )
            return stored

    def remove_grant(self: Drive, grant_id: str, actor: str | None = None) -> GrantRec:
        """Remove a grant. It stays in the history (``removed_grants``) so ``as_of`` before now still sees it."""
        with self._write() as dirty:
            grant = self.grants.pop(grant_id, None)
            if grant is None:
                raise NotFound(f"no grant {grant_id}")
            removed = replace(grant, removed_at=self.clock.now())
            self.removed_grants.append(removed)
            dirty.grants.add(grant_id)
            dirty.removed_grants.append(removed)
            self.bump_policy()
            self._record("acl_changed", grant_id=grant_id, doc_id=grant.doc_id, folder_id=grant.folder_id, actor=actor)
            return removed

    def keyed_id(self: Drive, kind: str, n: int, digits: int) -> str:
        """``digits`` hex digits of HMAC(``id_key``, kind, n): the ``n``-th id of a kind, the same for the same
        key (a replay, a second run) and, to anyone without the key, unrelated to ``n`` (no gap to count)."""
        return hmac.new(self.id_key, f"{kind}\x00{n}".encode(), hashlib.sha256).hexdigest()[:digits]

    def keyed_grant_id(self: Drive) -> str:
        """The id the API gives a grant: ``g-<16 hex digits>`` (``keyed_id``), so it counts no one's grants."""
        used = set(self.grants) | {g.grant_id for g in self.removed_grants}
        n = len(used) + 1
        while (grant_id := f"g-{self.keyed_id('grant', n, 16)}") in used:
            n += 1
        return grant_id

    def next_grant_id(self: Drive) -> str:
        used = set(self.grants) | {g.grant_id for g in self.removed_grants}
        n = len(used) + 1
        while f"g-{n}" in used:
            n += 1
        return f"g-{n}"

    # ------------------------------------------------------------------ users
    def set_clearance(self: Drive, user_id: str, clearance: int, actor: str | None = None) -> None:
        with self._write() as dirty:
            if not 0 <= clearance <= 3:
                raise InvalidRequest("clearance must be 0 (public) to 3 (secret)")
            user = self.user(user_id)
            self._touch(user)
            user.clearance = clearance
            dirty.users.add(user_id)
            self.bump_policy()
            self._record("acl_changed", actor=actor, detail=f"clearance of {user_id}")

    def set_roles(self: Drive, user_id: str, roles: list[str], actor: str | None = None) -> None:
        with self._write() as dirty:
            _check_roles(roles)
            user = self.user(user_id)
            self._touch(user)
            user.roles = list(dict.fromkeys(roles))
            dirty.users.add(user_id)
            self.bump_policy()
            self._record("acl_changed", actor=actor, detail=f"roles of {user_id}")

    def create_department(
        self: Drive, dept_id: str, name: str | None = None, parent: str | None = None, actor: str | None = None
    ) -> DepartmentRec:
        """A new department (below ``parent``, or at the top). Nobody is in it yet: no one's access changes,
        but the policy is recompiled so that users moved into it reach its ancestors' grants."""
        with self._write() as dirty:
            if not _DEPT_ID.fullmatch(dept_id):
                raise InvalidRequest("a department id is 1-64 letters, digits, '_', '.' or '-'")
            if dept_id in self.departments:
                raise Conflict(f"department {dept_id!r} exists")
            if parent is not None and parent not in self.departments:
                raise UnknownPrincipal(f"unknown department {parent!r}")
            dept = DepartmentRec(dept_id, name or dept_id, parent)
            self.departments[dept_id] = dept
            dirty.departments.add(dept_id)
            self.bump_policy()
            self._record("acl_changed", actor=actor, detail=f"department {dept_id} created")
            return dept

    def set_department(self: Drive, user_id: str, department: str, actor: str | None = None) -> None:
        """Move a user to another department: they leave the old department's grants (and its parents')
        and reach the new one's."""
        with self._write() as dirty:
            if department not in self.departments:
                raise UnknownPrincipal(f"unknown department {department!r}")
            user = self.user(user_id)
            self._touch(user)
            user.department = department
            dirty.users.add(user_id)
            self.bump_policy()
            self._record("acl_changed", actor=actor, detail=f"department of {user_id}")

    def update_user(
        self: Drive,
        user_id: str,
        *,
        department: str | None = None,
        clearance: int | None = None,
        roles: list[str] | None = None,
        actor: str | None = None,
    ) -> UserRec:
        """Change a user's department, clearance and/or roles in one write (all or nothing). Each field that
        takes a new value records its own ``acl_changed`` entry and bumps the policy; one that already holds
        the value changes nothing. An unknown user is a ``NotFound`` (the user is what is addressed)."""
        with self._write():
            user = self.users.get(user_id)
            if user is None:
                raise NotFound(f"no user {user_id!r}")
            if department is None and clearance is None and roles is None:
                raise InvalidRequest("give at least one of department, clearance, roles")
            if department is not None and department not in self.departments:
                raise UnknownPrincipal(f"unknown department {department!r}")
            if clearance is not None and not 0 <= clearance <= 3:
                raise InvalidRequest("clearance must be 0 (public) to 3 (secret)")
            if roles is not None:
                _check_roles(roles)
            if department is not None and department != user.department:
                self.set_department(user_id, department, actor)
            if clearance is not None and clearance != user.clearance:
                self.set_clearance(user_id, clearance, actor)
            if roles is not None and list(dict.fromkeys(roles)) != user.roles:
                self.set_roles(user_id, roles, actor)
            return user

    # ------------------------------------------------------------------ projects
    def end_membership(self: Drive, project_id: str, user_id: str, actor: str | None = None) -> MembershipRec:
        """End a user's current membership of a project now: the clock ticks (the end has its own instant)
        and the membership's ``valid_until`` becomes that instant, so ``as_of`` before it still sees the
        member. No current membership (none, ended, not begun yet): ``NotFound``."""
        with self._write() as dirty:
            project = self.projects.get(project_id)
            if project is None:
                raise NotFound(f"no project {project_id!r}")
            now = self.clock.now()
            current = [
                m
                for m in project.members
                if m.user_id == user_id
                and (m.valid_from is None or m.valid_from <= now)
                and (m.valid_until is None or now < m.valid_until)
            ]
            if not current:
                raise NotFound(f"{user_id!r} is no current member of project {project_id}")
            at = self.clock.tick()
            for m in current:
                self._touch(m)
                m.valid_until = at
            dirty.projects.add(project_id)
            self.bump_policy()
            self._record("acl_changed", actor=actor, detail=f"membership of {user_id} in {project_id} ended")
            return current[-1]

    # ------------------------------------------------------------------ folders
    def create_folder(
        self: Drive, parent_id: str, name: str, break_inheritance: bool = False, actor: str | None = None
    ) -> FolderNode:
        with self._write() as dirty:
            _check_name(name)
            if parent_id not in self.folders:
                raise NotFound(f"no folder {parent_id}")
            if (parent_id, name) in self._children:
                raise Conflict(f"a folder {name!r} exists there")
            self.clock.tick()
            # keyed like uploads and grants: a sequence would count the folders other people created
            folder_id = f"fld-{self.keyed_id('folder', self._folder_seq, 12)}"
            node = self._add_folder_node(name, parent_id, break_inheritance, None, "other", folder_id)
            dirty.folders.add(node.folder_id)
            self.bump_policy()
            self._record("created", folder_id=node.folder_id, actor=actor)
            return node

    def set_break_inheritance(
        self: Drive, folder_id: str, break_inheritance: bool, actor: str | None = None
    ) -> FolderNode:
        """Whether a folder inherits grants from its parent (True: grants above it reach neither it nor
        anything below it). Setting the value it already has changes nothing."""
        with self._write() as dirty:
            node = self.folders.get(folder_id)
            if node is None:
                raise NotFound(f"no folder {folder_id}")
            if node.parent_id is None:
                raise InvalidRequest("the root folder inherits from nothing")
            if node.break_inheritance == break_inheritance:
                return node
            self._touch(node)
            node.break_inheritance = break_inheritance
            dirty.folders.add(folder_id)
            self.bump_policy()
            state = "broken" if break_inheritance else "restored"
            self._record(
                "acl_changed",
                folder_id=folder_id,
                actor=actor,
                detail=f"inheritance of {self.folder_path(folder_id)} {state}",
            )
            return node

    def move_folder(self: Drive, folder_id: str, new_parent_id: str, actor: str | None = None) -> FolderNode:
        """Re-parent a folder. Access below it is re-evaluated: it now inherits from its new ancestors.
        The old placement stays in ``moves`` for ``as_of``."""
        with self._write() as dirty:
            node = self.folders.get(folder_id)
            if node is None or node.parent_id is None:
                raise InvalidRequest("cannot move the root or an unknown folder")
            if new_parent_id not in self.folders:
                raise NotFound(f"no folder {new_parent_id}")
            if any(a.folder_id == folder_id for a in self.folder_ancestors(new_parent_id)):
                raise InvalidRequest("cannot move a folder into itself or its own subfolder")
            if (new_parent_id, node.name) in self._children:
                raise Conflict(f"a folder {node.name!r} exists in the destination")
            self._touch(node)
            at = self.clock.tick()
            if not node.moves:
                node.moves.append(FolderMove(None, node.parent_id))
            node.moves.append(FolderMove(at, new_parent_id))
            del self._children[(node.parent_id, node.name)]
            node.parent_id = new_parent_id
            self._children[(new_parent_id, node.name)] = folder_id
            dirty.folders.add(folder_id)
            self.bump_policy()
            self.bump_content()
            self._record("moved", folder_id=folder_id, actor=actor)
            return node

    # ------------------------------------------------------------------ documents
    def _unique_doc_id(self: Drive) -> str:
        """Uploaded documents get ``n<12 hex digits>`` ids (``keyed_id`` of the upload count ``_doc_seq``): an
        uploader cannot count the uploads between two of theirs (a sequence's gaps would count hidden
        documents). Never reused, not even after a purge: the count only grows."""
        n = max(self._doc_seq, 0) + 1
        while (doc_id := f"n{self.keyed_id('doc', n, 12)}") in self.documents:
            n += 1
        self._doc_seq = n
        return doc_id

    def create_document(
        self: Drive,
        folder_id: str,
        name: str,
        data: bytes,
        *,
        file_type: str,
        secret_level: int = 1,
        author: str | None = None,
        title: str | None = None,
        visible: Callable[[str], bool] | None = None,
    ) -> DocumentRec:
        """A new document. ``visible(doc_id)``: may the uploader list that document? A name taken only by
        documents the uploader may not list is no conflict (answering 409 would reveal them): both exist."""
        with self._write() as dirty:
            _check_name(name)
            if folder_id not in self.folders:
                raise NotFound(f"no folder {folder_id}")
            if not 0 <= secret_level <= 3:
                raise InvalidRequest("secret_level must be 0 (public) to 3 (secret)")
            if self._name_taken(folder_id, name, None, visible):
                raise Conflict(f"a document {name!r} exists in that folder; upload a new version instead")
            blob = self.put_blob(data)  # durable before the metadata that references it
            at = self.clock.tick()
            doc_id = self._unique_doc_id()
            version = VersionRec(f"{doc_id}-v1", 1, blob, len(data), at, author)
            doc = DocumentRec(doc_id, name, folder_id, file_type, secret_level, at, [version], title, author)
            doc.placements.append(Placement(at, folder_id, name))
            self.documents[doc_id] = doc
            dirty.docs.add(doc_id)
            self.bump_policy()  # a new g2 link
            self.bump_content()
            self._record("created", doc_id=doc_id, folder_id=folder_id, version_id=version.version_id, actor=author)
            return doc

    def _append_version(
        self: Drive, doc: DocumentRec, data: bytes, author: str | None, note: str | None, restored_from: str | None
    ) -> VersionRec:
        if doc.trashed_at is not None:
            raise Conflict(f"document {doc.doc_id} is in the trash; untrash it first")
        self._touch(doc)
        blob = self.put_blob(data)
        at = self.clock.tick()
        number = doc.head.version + 1
        version = VersionRec(f"{doc.doc_id}-v{number}", number, blob, len(data), at, author, note, restored_from)
        doc.versions.append(version)
        self._dirty.docs.add(doc.doc_id)
        self.bump_content()
        return version

    def add_version(
        self: Drive, doc_id: str, data: bytes, author: str | None = None, note: str | None = None
    ) -> VersionRec:
        with self._write():
            doc = self.doc(doc_id)
            version = self._append_version(doc, data, author, note, None)
            self._record("updated", doc_id=doc_id, version_id=version.version_id, actor=author)
            return version

    def restore_version(self: Drive, doc_id: str, version_id: str, author: str | None = None) -> VersionRec:
        """Copy-forward: a new head version with the old version's bytes; history is kept. One change
        of kind ``restored`` (an indexer treats it like ``updated``)."""
        with self._write():
            doc = self.doc(doc_id)
            old = next((v for v in doc.versions if v.version_id == version_id), None)
            if old is None:
                raise NotFound(f"document {doc_id} has no version {version_id}")
            data = self.blob(old.blob)
            version = self._append_version(doc, data, author, f"restored from {version_id}", version_id)
            self._record(
                "restored", doc_id=doc_id, version_id=version.version_id, actor=author, detail=f"from {version_id}"
            )
            return version

    def _name_taken(
        self: Drive, folder_id: str, name: str, other_than: str | None, visible: Callable[[str], bool] | None
    ) -> bool:
        """Does a document the caller may list (``visible``; None: any) hold ``name`` in ``folder_id``?"""
        return any(
            d.folder_id == folder_id
            and d.name == name
            and d.doc_id != other_than
            and (visible is None or visible(d.doc_id))
            for d in list(self.documents.values())
        )

    def move_document(
        self: Drive,
        doc_id: str,
        folder_id: str | None = None,
        name: str | None = None,
        actor: str | None = None,
        visible: Callable[[str], bool] | None = None,
    ) -> DocumentRec:
        """Move and/or rename. The old placement stays in ``placements`` for ``as_of``. ``visible``: as for
        ``create_document`` (a clash with a document the caller may not list is no conflict)."""
        with self._write() as dirty:
            doc = self.doc(doc_id)
            target = folder_id or doc.folder_id
            new_name = name or doc.name
            _check_name(new_name)
            if target not in self.folders:
                raise NotFound(f"no folder {target}")
            if self._name_taken(target, new_name, doc_id, visible):
                raise Conflict(f"a document {new_name!r} exists in the destination")
            moved, renamed = target != doc.folder_id, new_name != doc.name
            if not (moved or renamed):
                return doc
            self._touch(doc)
            at = self.clock.tick()
            if not doc.placements:
                doc.placements.append(Placement(None, doc.folder_id, doc.name))
            doc.placements.append(Placement(at, target, new_name))
            doc.folder_id, doc.name = target, new_name
            dirty.docs.add(doc_id)
            if moved:
                self.bump_policy()
                self._record("moved", doc_id=doc_id, folder_id=target, actor=actor)
            if renamed:
                self._record("renamed", doc_id=doc_id, version_id=doc.head.version_id, actor=actor)
            self.bump_content()
            return doc

    def trash(self: Drive, doc_id: str, actor: str | None = None) -> DocumentRec:
        with self._write() as dirty:
            doc = self.doc(doc_id)
            if doc.trashed_at is not None:
                raise Conflict(f"document {doc_id} is already in the trash")
            self._touch(doc)
            doc.trashed_at = self.clock.tick()
            doc.trash_spans.append(TrashSpan(doc.trashed_at))
            dirty.docs.add(doc_id)
            self.bump_content()
            self._record("trashed", doc_id=doc_id, actor=actor)
            return doc

    def untrash(self: Drive, doc_id: str, actor: str | None = None) -> DocumentRec:
        with self._write() as dirty:
            doc = self.doc(doc_id)
            if doc.trashed_at is None:
                raise Conflict(f"document {doc_id} is not in the trash")
            self._touch(doc)
            at = self.clock.tick()
            if not doc.trash_spans or doc.trash_spans[-1].end is not None:
                doc.trash_spans.append(TrashSpan(doc.trashed_at))
            doc.trash_spans[-1].end = at
            doc.trashed_at = None
            dirty.docs.add(doc_id)
            self.bump_content()
            self._record("untrashed", doc_id=doc_id, actor=actor)
            return doc

    def purge(self: Drive, doc_id: str, actor: str | None = None) -> DocumentRec:
        """Destroy a document: its versions, bytes, grants and history (``as_of`` no longer sees it)."""
        with self._write() as dirty:
            doc = self.documents.pop(doc_id, None)
            if doc is None:
                raise NotFound(f"no document {doc_id}")
            for gid in [g.grant_id for g in self.grants.values() if g.doc_id == doc_id]:
                del self.grants[gid]
                dirty.grants.add(gid)
            dirty.docs.add(doc_id)
            dirty.blobs_released |= {v.blob for v in doc.versions}
            self.bump_policy()
            self.bump_content()
            self._record("purged", doc_id=doc_id, actor=actor)
            return doc

    def delete_version(self: Drive, doc_id: str, version_id: str, actor: str | None = None) -> VersionRec:
        """Delete one non-head version (retention uses this). Its time span is no longer covered:
        ``as_of`` then finds no version of the document there."""
        with self._write() as dirty:
            doc = self.doc(doc_id)
            idx = next((i for i, v in enumerate(doc.versions) if v.version_id == version_id), None)
            if idx is None:
                raise NotFound(f"document {doc_id} has no version {version_id}")
            if idx == len(doc.versions) - 1:
                raise Conflict("the head version cannot be deleted; restore another version first")
            self._touch(doc)
            version = doc.versions.pop(idx)
            dirty.docs.add(doc_id)
            dirty.blobs_released.add(version.blob)
            self.bump_content()
            self._record("version_deleted", doc_id=doc_id, version_id=version_id, actor=actor)
            return version

    # ------------------------------------------------------------------ retention
    def set_retention(self: Drive, retention: Retention, actor: str | None = None) -> Retention:
        retention.validate()
        with self._write() as dirty:
            self.retention_due(retention=retention)  # a rule that cannot be applied fails here, before storing
            self.retention = replace(retention)
            dirty.kv = True
            self._record(
                "settings",
                actor=actor,
                detail=f"retention versions_kept={retention.versions_kept} days={retention.days} "
                f"trash_days={retention.trash_days}",
            )
            return self.retention

    def retention_due(
        self: Drive, now: datetime | None = None, retention: Retention | None = None
    ) -> tuple[list[tuple[str, str]], list[str]]:
        """(versions to delete as (doc_id, version_id), documents to purge) under the retention settings
        (``retention``: these instead of the stored ones)."""
        r, now = retention or self.retention, now or self.clock.now()
        versions: list[tuple[str, str]] = []
        purge: list[str] = []
        with self.lock:
            for doc in self.documents.values():
                if (
                    doc.trashed_at is not None
                    and r.trash_days is not None
                    and now - doc.trashed_at >= timedelta(days=r.trash_days)
                ):
                    purge.append(doc.doc_id)
                    continue
                vs = doc.versions
                for i, v in enumerate(vs[:-1]):
                    too_many = r.versions_kept is not None and i < len(vs) - r.versions_kept
                    too_old = r.days is not None and now - vs[i + 1].created_at >= timedelta(days=r.days)
                    if too_many or too_old:
                        versions.append((doc.doc_id, v.version_id))
        return versions, purge

    def apply_retention(self: Drive, actor: str | None = "retention") -> tuple[int, int]:
        """Delete what the retention settings no longer keep; returns (versions deleted, documents purged)."""
        with self._write():
            versions, purge = self.retention_due()
            for doc_id, version_id in versions:
                self.delete_version(doc_id, version_id, actor=actor)
            for doc_id in purge:
                self.purge(doc_id, actor=actor)
            return len(versions), len(purge)

    # ------------------------------------------------------------------ clock
    def high_water_mark(self: Drive) -> datetime:
        """The latest instant the drive's history mentions: the clock may not go back before it."""
        with self.lock:
            marks = [v.created_at for d in self.documents.values() for v in d.versions[-1:]]
            if self.changes:
                marks.append(self.changes[-1].at)
            return max(marks, default=self.clock.now())

    def set_clock(self: Drive, now: datetime, actor: str | None = None) -> datetime:
        """Set the simulated clock. It may move back only down to ``high_water_mark()`` (history stays
        ordered); reset the simulator to go further back."""
        now = checked_utc(now, "now")
        with self._write() as dirty:
            hwm = self.high_water_mark()
            if now < hwm:
                raise Conflict(f"the clock cannot go back before {hwm.isoformat()} (the latest change); reset first")
            before = self.clock.now()
            self.clock.set(now)
            self._record_validity(before, now)
            dirty.kv = True
            return now

    def advance_clock(self: Drive, delta: timedelta, actor: str | None = None) -> datetime:
        if delta < timedelta(0):
            raise InvalidRequest("advance the clock by a non-negative amount")
        with self._write() as dirty:
            try:
                target = self.clock.now() + delta
            except OverflowError:
                target = MAX_TIME
            if target >= MAX_TIME:
                raise InvalidRequest(f"the clock cannot pass {MAX_TIME.isoformat()}")
            before = self.clock.now()
            now = self.clock.set(target)
            self._record_validity(before, now)
            dirty.kv = True
            return now

    def validity_events(self: Drive, after: datetime, until: datetime) -> list[tuple[datetime, dict[str, str | None]]]:
        """(instant, change fields) for every grant and project membership whose ``valid_from`` or
        ``valid_until`` lies in (after, until], in time order: what the clock passes when it moves."""
        events: list[tuple[datetime, int, str, str, dict[str, str | None]]] = []
        with self.lock:
            for g in self.grants.values():
                for bound, word in ((g.valid_from, "began"), (g.valid_until, "ended")):
                    if bound is not None and after < bound <= until:
                        target = {"grant_id": g.grant_id, "doc_id": g.doc_id, "folder_id": g.folder_id}
                        events.append((bound, 0, g.grant_id, word, {**target, "detail": f"grant {g.grant_id} {word}"}))
            for p in self.projects.values():
                for m in p.members:
                    for bound, word in ((m.valid_from, "began"), (m.valid_until, "ended")):
                        if bound is not None and after < bound <= until:
                            detail = f"membership of {m.user_id} in {p.id} {word}"
                            events.append((bound, 1, f"{p.id}/{m.user_id}", word, {"detail": detail}))
        events.sort(key=lambda e: e[:4])
        return [(e[0], e[4]) for e in events]

    def _record_validity(self: Drive, after: datetime, until: datetime) -> None:
        """Record, at its own instant, every grant and membership the clock passes the start or end of on its
        way from ``after`` to ``until``: a feed follower sees an expiry like any other ACL change. The policy
        version does not move (the compiled policy already holds these bounds; decisions read the clock)."""
        for at, entry in self.validity_events(after, until):
            self._record("acl_changed", at=at, actor="clock", **entry)


def _check_roles(roles: list[str]) -> None:
    if isinstance(roles, str) or len(roles) > MAX_ROLES:
        raise InvalidRequest(f"roles: a list of at most {MAX_ROLES} role names")
    bad = [r for r in roles if not isinstance(r, str) or not re.fullmatch(ROLE_PATTERN, r)]
    if bad:
        raise InvalidRequest(f"invalid role name {bad[0]!r}: 1 to 64 of A-Z a-z 0-9 _ . -")


def _check_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name or len(name) > 255:
        raise InvalidRequest(f"invalid name {name!r}: no slashes, NUL, . or .., at most 255 characters")
