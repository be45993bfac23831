"""Directory administration as domain operations (no HTTP): a user's department, clearance and roles, ending a
project membership, creating a folder, and whether a folder inherits grants from its parent. ``api/directory.py``
translates these to HTTP; a test harness uses them to change permissions from outside.

Only the admin token may do any of it (anything else: 403, before anything is looked up, so no answer tells
which users, projects or folders exist). Each change is ACL-only: it records ``acl_changed`` in the change
feed (a folder's with its ``folder_id``), bumps ``policy_version`` and leaves every document's
``modified_at`` alone. A write is acknowledged once the engine of the new policy is built (``sync_index``):
the very next request is judged under it. A failed request changes nothing (``Drive._write``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drivebench.drive.errors import Conflict, Forbidden, InvalidRequest, NotFound
from drivebench.drive.model import DepartmentRec, FolderNode, MembershipRec, UserRec
from drivebench.drive.tokens import TokenInfo
from drivebench.formats.corpus import SECRET_LEVELS

if TYPE_CHECKING:
    from drivebench.simulator.ports import DriveHost


def authorize(token: TokenInfo) -> None:
    if not token.has("admin"):
        raise Forbidden("directory administration needs the admin token")


def update_user(
    host: DriveHost,
    token: TokenInfo,
    user_id: str,
    *,
    department: str | None = None,
    clearance: str | None = None,
    roles: list[str] | None = None,
) -> UserRec:
    """Set any of a user's department, clearance (a level name) and roles, in one write."""
    authorize(token)
    if clearance is not None and clearance not in SECRET_LEVELS:
        raise InvalidRequest(f"clearance must be one of {', '.join(SECRET_LEVELS)}")
    level = None if clearance is None else SECRET_LEVELS.index(clearance)
    user = host.drive.update_user(user_id, department=department, clearance=level, roles=roles, actor=token.subject)
    host.sync_index()
    return user


def create_department(
    host: DriveHost, token: TokenInfo, dept_id: str, name: str | None = None, parent: str | None = None
) -> DepartmentRec:
    """A new department below ``parent`` (or at the top); 409 when the id exists, 400 for an unknown parent."""
    authorize(token)
    dept = host.drive.create_department(dept_id, name, parent, actor=token.subject)
    host.sync_index()
    return dept


def end_membership(host: DriveHost, token: TokenInfo, project_id: str, user_id: str) -> MembershipRec:
    """End ``user_id``'s current membership of ``project_id`` now (404 when there is none)."""
    authorize(token)
    membership = host.drive.end_membership(project_id, user_id, actor=token.subject)
    host.sync_index()
    return membership


def create_folder(host: DriveHost, token: TokenInfo, path: str, break_inheritance: bool = False) -> FolderNode:
    """A new folder at ``path`` under an existing parent (404 without one, 409 when the folder exists)."""
    authorize(token)
    norm = _normalise(path)
    if norm == "/":
        raise Conflict("the root folder exists")
    parent_path, _, name = norm.rpartition("/")
    parent = _folder(host, parent_path or "/")
    node = host.drive.create_folder(parent.folder_id, name, break_inheritance, actor=token.subject)
    host.sync_index()
    return node


def set_inheritance(host: DriveHost, token: TokenInfo, path: str, break_inheritance: bool) -> FolderNode:
    """Whether the folder at ``path`` stops inheriting grants from its parent (True) or inherits them (False)."""
    authorize(token)
    node = _folder(host, _normalise(path))
    node = host.drive.set_break_inheritance(node.folder_id, break_inheritance, actor=token.subject)
    host.sync_index()
    return node


def _normalise(path: str) -> str:
    if not path.startswith("/"):
        raise InvalidRequest(f"folder path {path!r} must start with /")
    return "/" + "/".join(p for p in path.split("/") if p)


def _folder(host: DriveHost, path: str) -> FolderNode:
    try:
        return host.drive.folder_by_path(path)
    except NotFound:
        raise NotFound(f"no folder {path}") from None
