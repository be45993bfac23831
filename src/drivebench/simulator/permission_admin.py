"""Grant administration and effective permissions as domain operations (no HTTP): who may read and
change grants, move items, and what a principal's effective permissions are on a path, as of a time.

``api/permissions.py`` only translates these to HTTP; the MCP server and tests call them directly.

Rules:

* the admin token may do everything; a user may list, add and remove grants on a path where they hold
  ``manage``, and move an item they ``manage`` into a folder where they may ``upload``;
* anyone may read their own effective permissions; the evaluate-as token may read anyone's and list
  grants anywhere, but only the admin token of the two may change them;
* to a user, a path they may not ``list`` does not exist (404, exactly as for a missing path);
* ``as_of`` on effective permissions follows the point-in-time rule (``pointintime``): acting as
  oneself, an action counts as allowed at T only if it is allowed at T and now (otherwise its reason is
  ``revoked``), and a path one may not list at T and now is missing; the evaluation token sees the
  decisions in force at T. Paths are resolved in the tree as it stood at T.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from drivebench.drive.errors import Conflict, Forbidden, InvalidRequest, NotFound
from drivebench.drive.model import DocumentRec, GrantRec
from drivebench.drive.permissions import pointintime
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.effective import (
    EffectivePermissions,
    ExplanationMismatch,
    effective_permissions,
)
from drivebench.drive.permissions.engine import PermissionEngine, Principal
from drivebench.drive.tokens import TokenInfo

if TYPE_CHECKING:
    from drivebench.simulator.ports import DriveHost


@dataclass(frozen=True)
class Target:
    kind: Literal["folder", "document"]
    ident: str  # folder id or doc id
    obj: str  # Casbin object
    level: int  # secret level (0 for folders)
    path: str
    trashed: bool = False


def missing(path: str) -> NotFound:
    return NotFound(f"no folder or document at {path!r}")


def _check_failed(exc: Exception) -> Exception:
    from drivebench.drive.errors import PermissionCheckFailed

    return PermissionCheckFailed(f"permission check failed: {type(exc).__name__}: {exc}")


def resolve_path(
    host: DriveHost, path: str, at: datetime | None = None, visible: Callable[[str], bool] | None = None
) -> Target:
    """A folder path, or a document path (its folder's path + its name), in the tree at ``at`` (None:
    now), through the caller's visibility: the one resolver every path lookup uses. Folders win a name
    clash. Two documents may share a name in a folder when their uploaders could not see each other:
    ``visible(doc_obj)`` (None: the caller sees everything) keeps the ones the caller may list, so a path
    only a hidden document holds is missing, and a path the caller shares with a hidden namesake is the
    caller's own document. Two documents the caller sees on one path are a 409 naming both, never a pick.
    ``visible`` is asked about the folder too (a hidden folder does not shadow a path): pass a mask lookup
    (``pointintime.lookup``), so that a hidden path and a missing one take the same work, no Casbin call."""
    drive = host.drive
    norm = "/" + "/".join(p for p in path.split("/") if p)
    fid = pointintime.folder_as_of(host, norm, at)
    # a folder the caller may not list is no folder to them (a document of theirs may hold the path); asked
    # for a missing folder too, so a hidden folder and a missing one cost the same (a mask read each)
    seen = visible is None or visible(folder_obj(fid or ""))
    if fid is not None and seen:
        return Target("folder", fid, folder_obj(fid), 0, drive.folder_path_at(fid, at))
    parent, _, name = norm.rpartition("/")
    if not name:
        raise missing(path)
    # the documents are read even when the parent folder is missing (nothing matches None): a path under a
    # hidden folder and one under a missing folder cost the same
    folder_id = pointintime.folder_as_of(host, parent or "/", at)
    with drive.lock:
        candidates = sorted(
            (
                d
                for d in drive.documents.values()
                if d.placement_at(at) == (folder_id, name) and (at is None or d.version_at(at) is not None)
            ),
            key=lambda d: d.doc_id,
        )
    if visible is not None:
        candidates = [d for d in candidates if visible(doc_obj(d.doc_id))]
    if not candidates:
        raise missing(path)
    if len(candidates) > 1:
        ids = ", ".join(d.doc_id for d in candidates)
        raise Conflict(f"{len(candidates)} documents share the path {norm!r} ({ids}): act on one by its id")
    return document_target(host, candidates[0], at)


def document_target(host: DriveHost, d: DocumentRec, at: datetime | None = None) -> Target:
    trashed = d.trashed_at is not None if at is None else d.trashed_at_time(at)
    return Target("document", d.doc_id, doc_obj(d.doc_id), d.secret_level, host.drive.doc_path_at(d, at), trashed)


def target_of_grant(host: DriveHost, grant: GrantRec) -> Target:
    drive = host.drive
    if grant.doc_id is not None:
        d = drive.doc(grant.doc_id)
        return Target(
            "document", d.doc_id, doc_obj(d.doc_id), d.secret_level, drive.doc_path(d), d.trashed_at is not None
        )
    fid = grant.folder_id or ""
    if fid not in drive.folders:
        raise NotFound(f"no folder {fid}")
    return Target("folder", fid, folder_obj(fid), 0, drive.folder_path(fid))


def path_of(host: DriveHost, at: datetime | None = None) -> Callable[[str], str | None]:
    drive = host.drive

    def name(obj: str) -> str | None:
        kind, _, ident = obj.partition(":")
        if kind == "fld" and ident in drive.folders:
            return drive.folder_path_at(ident, at)
        if kind == "doc" and ident in drive.documents:
            return drive.doc_path_at(drive.documents[ident], at)
        return None

    return name


@contextmanager
def consistent(host: DriveHost, at: datetime | None = None) -> Iterator[PermissionEngine]:
    """The engine for ``at`` (None: now) with the drive locked at the same policy version (engine first,
    then the drive lock: the order the simulator itself takes them)."""
    for _ in range(20):
        engine = host.engine if at is None else host.engine_at(at)
        with host.drive.lock:
            if engine.policy_version == host.drive.policy_version:
                yield engine
                return
    from drivebench.drive.errors import PermissionCheckFailed

    raise PermissionCheckFailed("the policy kept changing while the request was judged")


def _may(engine: PermissionEngine, principal: Principal, obj: str, act: str, at: datetime, level: int) -> bool:
    try:
        return engine.enforce(principal, obj, act, at, level)
    except Exception as exc:  # fail closed
        raise _check_failed(exc) from exc


def user_guard(
    host: DriveHost, engine: PermissionEngine, user_id: str, target: Target, action: str, shown: str
) -> None:
    """A user must be able to ``list`` the target to learn it exists, and hold ``action`` to act on it. A
    target they may not list is refused off the masks, with no Casbin call (the work of a missing one)."""
    principal = engine.user_principal(user_id)
    now = host.drive.clock.now()
    if not _lookup(engine, principal, now)(target.obj):
        raise missing(shown)
    if not _may(engine, principal, target.obj, "list", now, target.level):
        raise _check_failed(RuntimeError(f"the fast path and the enforcer disagree on {target.obj}"))
    if not _may(engine, principal, target.obj, action, now, target.level):
        raise Forbidden(f"you need {action!r} on {target.path} for this")


def authorize_change(
    host: DriveHost, engine: PermissionEngine, token: TokenInfo, target: Target, action: str, shown: str
) -> None:
    if token.has("admin"):
        return
    if token.user_id is None:
        raise Forbidden(
            "this token may read permissions but not change them: use the admin token or a user with manage"
        )
    user_guard(host, engine, token.user_id, target, action, shown)


def _lookup(engine: PermissionEngine, principal: Principal, now: datetime) -> Callable[[str], bool]:
    """May ``principal`` list an object now, off the masks (``PermissionEngine.lookup``); fails closed."""
    try:
        return engine.lookup(principal, "list", now)
    except Exception as exc:
        raise _check_failed(exc) from exc


def _lister(host: DriveHost, engine: PermissionEngine, token: TokenInfo) -> Callable[[str], bool] | None:
    """For a user token: may it list an object now (picks among documents sharing a name), off the masks:
    a hidden path and a missing one cost the same."""
    if token.user_id is None:
        return None
    return _lookup(engine, engine.user_principal(token.user_id), host.drive.clock.now())


# ---------------------------------------------------------------------------- operations
@dataclass(frozen=True)
class GrantListing:
    target: Target
    grants: list[tuple[GrantRec, bool]]  # (grant, inherited)
    policy_version: int


def list_grants(host: DriveHost, token: TokenInfo, path: str, inherited: bool = False) -> GrantListing:
    with consistent(host) as engine:
        target = resolve_path(host, path, visible=_lister(host, engine, token))
        if not token.has("admin") and not token.has("evaluate-as"):
            if token.user_id is None:
                raise Forbidden("this token may not read grants")
            user_guard(host, engine, token.user_id, target, "manage", path)
        reach = engine.object_ancestors(target.obj) if inherited else frozenset({target.obj})
        out = []
        for g in sorted(host.drive.grants.values(), key=lambda g: g.grant_id):
            obj = doc_obj(g.doc_id) if g.doc_id is not None else folder_obj(g.folder_id or "")
            if obj in reach:
                out.append((g, obj != target.obj))
        out.sort(key=lambda x: (x[1], x[0].grant_id))
        return GrantListing(target, out, engine.policy_version)


def add_grant(host: DriveHost, token: TokenInfo, path: str, make: Callable[[Target, str], GrantRec]) -> GrantRec:
    """Add the grant ``make(target, default_grant_id)`` on ``path`` (needs ``manage`` there)."""
    with consistent(host) as engine:
        target = resolve_path(host, path, visible=_lister(host, engine, token))
        authorize_change(host, engine, token, target, "manage", path)
        grant = make(target, host.drive.keyed_grant_id())
        stored = host.drive.add_grant(grant, actor=token.subject)
    host.sync_index()
    return stored


def remove_grant(host: DriveHost, token: TokenInfo, grant_id: str) -> GrantRec:
    """Remove a grant (needs ``manage`` on its path); an invisible grant answers like a missing one."""
    with consistent(host) as engine:
        if token.user_id is not None:  # the masks a hidden grant is refused with, read for a missing one too
            _lookup(engine, engine.user_principal(token.user_id), host.drive.clock.now())
        grant = host.drive.grants.get(grant_id)
        if grant is None:
            raise NotFound(f"no grant {grant_id!r}")
        target = target_of_grant(host, grant)
        try:
            authorize_change(host, engine, token, target, "manage", target.path)
        except NotFound:
            raise NotFound(f"no grant {grant_id!r}") from None
        host.drive.remove_grant(grant_id, actor=token.subject)
    host.sync_index()
    return grant


@dataclass(frozen=True)
class Effective:
    target: Target
    at: datetime
    permissions: EffectivePermissions


def effective(
    host: DriveHost, principal: Principal, path: str, as_of: datetime | None = None, doc_id: str | None = None
) -> Effective:
    """Every action's decision on ``path`` (or on the document ``doc_id``, for a caller that already holds
    it) for ``principal`` as of ``as_of`` (point-in-time rule). Acting as oneself, the path resolves among
    what the principal may list, then and now."""
    now = host.drive.clock.now()
    at = pointintime.resolve_as_of(host, as_of)
    when = None if at == now else at
    past = pointintime.intersects_now(principal, at, now)
    with consistent(host, at) as engine:
        current = host.engine if past else engine
        if doc_id is not None:
            doc = host.drive.documents.get(doc_id)
            if doc is None:
                raise missing(path)
            target = document_target(host, doc, when)
        elif principal.evaluated_as:
            target = resolve_path(host, path, when)
        else:  # among what the principal may list then and now, off the masks (no Casbin call before a hit)
            try:
                lists = pointintime.lookup(host, principal, "list", at, now)
            except Exception as exc:  # fail closed
                raise _check_failed(exc) from exc
            target = resolve_path(host, path, when, visible=lists)
        if not principal.evaluated_as:
            sees = _may(engine, principal, target.obj, "list", at, target.level)
            if sees and past:
                sees = _may(current, principal, target.obj, "list", now, target.level)
            if not sees:
                raise missing(path)
        try:
            eff = effective_permissions(engine, principal, target.obj, at, target.level, path_of=path_of(host, when))
        except ExplanationMismatch as exc:
            raise _check_failed(exc) from exc
        except Exception as exc:  # fail closed: never a partial answer
            raise _check_failed(exc) from exc
        if past:  # what has been taken away since no longer counts
            decisions = []
            for a in eff.actions:
                if a.allowed and not _may(current, principal, target.obj, a.action, now, target.level):
                    a = replace(a, allowed=False, reason="revoked")
                decisions.append(a)
            eff = replace(eff, actions=tuple(decisions))
        return Effective(target, at, eff)


@dataclass(frozen=True)
class Moved:
    source: Target
    new_path: str
    policy_version: int


def move(host: DriveHost, token: TokenInfo, path: str, to: str) -> Moved:
    """Re-parent a folder (or move a document) into the folder ``to``: ``manage`` on the item, ``upload``
    on the destination. Access below it is re-evaluated at once."""
    with consistent(host) as engine:
        visible = _lister(host, engine, token)
        src = resolve_path(host, path, visible=visible)
        authorize_change(host, engine, token, src, "manage", path)  # the item's refusal first
        dst = resolve_path(host, to, visible=visible)
        authorize_change(host, engine, token, dst, "upload", to)
        if dst.kind != "folder":
            raise InvalidRequest(f"{to!r} is a document: move into a folder")
        if src.kind == "folder":
            host.drive.move_folder(src.ident, dst.ident, actor=token.subject)
            new_path = host.drive.folder_path(src.ident)
        else:
            doc = host.drive.move_document(
                src.ident, folder_id=dst.ident, actor=token.subject, visible=_doc_lister(host, token)
            )
            new_path = host.drive.doc_path(doc)
        out = Moved(src, new_path, host.drive.policy_version)
    host.sync_index()
    return out


def _doc_lister(host: DriveHost, token: TokenInfo) -> Callable[[str], bool] | None:
    """For name conflicts: may the caller list this document now (None: the caller sees everything)?"""
    if token.user_id is None:
        return None
    return host.doc_lister(host.engine.user_principal(token.user_id))
