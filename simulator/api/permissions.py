"""Grants and effective permissions over HTTP, and moving a folder or document.

* ``GET    /api/permissions/grants?path=...[&inherited=true]``: the grants on a path (and, with
  ``inherited``, those reaching it from ancestor folders);
* ``POST   /api/permissions/grants``: add a grant on a path;
* ``DELETE /api/permissions/grants/{grant_id}``: remove a grant;
* ``GET    /api/permissions/effective?path=...[&user_id|user_role[&department]][&as_of]``: every
  action's decision on the path for a principal, each with the grants it comes from (direct or
  inherited), computed from Casbin's own lines and role links and checked against ``enforce``;
* ``POST   /api/permissions/move``: move a folder (or document) under another folder; access below
  it is re-evaluated at once (it inherits from its new ancestors).

Who may do what: the admin token may do everything. A user may list, add and remove grants on a
path where they hold ``manage``, and move an item they ``manage`` into a folder where they may
``upload``. Anyone may read their own effective permissions; the evaluate-as token (evaluator or
admin) may read anyone's, and list grants anywhere, but only the admin token of the two may change
them. To a user, a path they may not ``list`` does not exist (404, as for a missing path). Every
change bumps ``policy_version`` and the very next request is judged under it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from drivebench.corpora.format import ACTIONS, SECRET_LEVELS
from drivebench.simulator.api.auth import bearer, current_token
from drivebench.simulator.api.schemas import ErrorResponse, PrincipalOut
from drivebench.simulator.backend import PermissionCheckFailed, Simulator
from drivebench.simulator.drive.clock import as_utc
from drivebench.simulator.drive.errors import Forbidden, InvalidRequest, NotFound
from drivebench.simulator.drive.model import GrantRec
from drivebench.simulator.permissions.compiler import doc_obj, folder_obj
from drivebench.simulator.permissions.effective import ExplanationMismatch, effective_permissions
from drivebench.simulator.permissions.engine import PermissionEngine, Principal
from drivebench.simulator.tokens import TokenInfo

router = APIRouter(prefix="/api/permissions", tags=["permissions"])

Action = Literal["list", "preview", "download", "upload", "edit", "delete", "share", "manage"]
PathText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4096, pattern=r"^/")]
GrantId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]

_ERRORS = {
    400: {"model": ErrorResponse, "description": "Unknown subject, bad time range, bad request."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "The token may not do this on this path."},
    404: {"model": ErrorResponse, "description": "No such path or grant (or not visible to you)."},
    409: {"model": ErrorResponse, "description": "A grant with that id, or an item with that name, exists."},
    422: {"model": ErrorResponse, "description": "A field has a wrong type or value (named in `fields`)."},
    503: {"model": ErrorResponse, "description": "The permission check failed: no answer is given."},
}
_SUBJECT_PREFIX = {"user": "user", "role": "role", "department": "dept", "project": "project"}


# ---------------------------------------------------------------------------- boundary models
class SubjectIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["user", "role", "department", "project", "everyone"]
    id: str | None = Field(default=None, min_length=1, max_length=256)

    @model_validator(mode="after")
    def _check(self) -> SubjectIn:
        if self.kind == "everyone" and self.id is not None:
            raise ValueError("the everyone subject takes no id")
        if self.kind != "everyone" and not self.id:
            raise ValueError(f"a {self.kind} subject needs an id")
        return self

    def key(self) -> str:
        return "everyone" if self.kind == "everyone" else f"{_SUBJECT_PREFIX[self.kind]}:{self.id}"


class SubjectOut(BaseModel):
    kind: str
    id: str | None = None

    @classmethod
    def from_key(cls, key: str) -> SubjectOut:
        if key == "everyone":
            return cls(kind="everyone")
        prefix, _, ident = key.partition(":")
        kind = {v: k for k, v in _SUBJECT_PREFIX.items()}.get(prefix, prefix)
        return cls(kind=kind, id=ident)


class GrantIn(BaseModel):
    """A grant to add. ``valid_until`` is exclusive; naive times are UTC."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"path": "/finance", "subject": {"kind": "department", "id": "fin"}, "actions": ["preview"]},
            ]
        },
    )
    path: PathText = Field(description="Folder or document path the grant is on.")
    subject: SubjectIn
    actions: list[Action] = Field(min_length=1, max_length=len(ACTIONS))
    effect: Literal["allow", "deny"] = "allow"
    valid_from: datetime | None = None
    valid_until: datetime | None = Field(default=None, description="Exclusive end of validity.")
    note: str | None = Field(default=None, max_length=1000)
    grant_id: GrantId | None = Field(default=None, description="Choose the id (default: the next g-<n>).")

    @model_validator(mode="after")
    def _check_times(self) -> GrantIn:
        if self.valid_from and self.valid_until and as_utc(self.valid_from) >= as_utc(self.valid_until):
            raise ValueError("valid_from must be before valid_until")
        return self


class GrantOut(BaseModel):
    grant_id: str
    path: str
    target: Literal["folder", "document"]
    folder_id: str | None
    doc_id: str | None
    subject: SubjectOut
    actions: list[str]
    effect: str
    valid_from: datetime | None
    valid_until: datetime | None
    note: str | None
    created_at: datetime | None
    inherited: bool = Field(default=False, description="True when the grant sits on an ancestor folder.")


class GrantListOut(BaseModel):
    path: str
    target: Literal["folder", "document"]
    grants: list[GrantOut]
    policy_version: int


class GrantChangeOut(BaseModel):
    grant: GrantOut
    policy_version: int


class SourceOut(BaseModel):
    grant_id: str
    effect: str
    subject: SubjectOut
    matched_as: str = Field(description="The principal's Casbin subject that matched (itself, a role, a department).")
    granted_actions: list[str]
    path: str | None
    inherited: bool
    valid_from: datetime | None
    valid_until: datetime | None
    vetoed_by_clearance: bool


class ActionOut(BaseModel):
    action: str
    allowed: bool
    reason: Literal["allowed", "denied", "clearance", "no-grant"]
    sources: list[SourceOut]


class EffectiveOut(BaseModel):
    path: str
    target: Literal["folder", "document"]
    principal: PrincipalOut
    as_of: datetime
    secret_level: str
    trashed: bool
    policy_version: int
    allowed: list[str]
    actions: list[ActionOut]


class MoveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: PathText = Field(description="The folder (or document) to move.")
    to: PathText = Field(description="The destination folder.")


class MoveOut(BaseModel):
    from_path: str
    path: str
    target: Literal["folder", "document"]
    policy_version: int


# ---------------------------------------------------------------------------- helpers
@dataclass(frozen=True)
class Target:
    kind: Literal["folder", "document"]
    ident: str  # folder id or doc id
    obj: str  # Casbin object
    level: int  # secret level (0 for folders)
    path: str
    trashed: bool = False


def _missing(path: str) -> NotFound:
    return NotFound(f"no folder or document at {path!r}")


def resolve_path(sim: Simulator, path: str) -> Target:
    """A folder path, or a document path (its folder's path + its name). Folders win a name clash."""
    drive = sim.drive
    norm = "/" + "/".join(p for p in path.split("/") if p)
    try:
        node = drive.folder_by_path(norm)
        return Target("folder", node.folder_id, folder_obj(node.folder_id), 0, drive.folder_path(node.folder_id))
    except NotFound:
        pass
    parent, _, name = norm.rpartition("/")
    if name:
        try:
            folder = drive.folder_by_path(parent or "/")
        except NotFound:
            raise _missing(path) from None
        for d in drive.documents.values():
            if d.folder_id == folder.folder_id and d.name == name:
                return Target(
                    "document", d.doc_id, doc_obj(d.doc_id), d.secret_level, drive.doc_path(d), d.trashed_at is not None
                )
    raise _missing(path)


def _target_of_grant(sim: Simulator, grant: GrantRec) -> Target:
    drive = sim.drive
    if grant.doc_id is not None:
        d = drive.doc(grant.doc_id)
        return Target(
            "document", d.doc_id, doc_obj(d.doc_id), d.secret_level, drive.doc_path(d), d.trashed_at is not None
        )
    fid = grant.folder_id or ""
    if fid not in drive.folders:
        raise NotFound(f"no folder {fid}")
    return Target("folder", fid, folder_obj(fid), 0, drive.folder_path(fid))


def _path_of(sim: Simulator) -> Callable[[str], str | None]:
    drive = sim.drive

    def path_of(obj: str) -> str | None:
        kind, _, ident = obj.partition(":")
        if kind == "fld" and ident in drive.folders:
            return drive.folder_path(ident)
        if kind == "doc" and ident in drive.documents:
            return drive.doc_path(drive.documents[ident])
        return None

    return path_of


@contextmanager
def consistent(sim: Simulator, at: datetime | None = None) -> Iterator[PermissionEngine]:
    """The engine for ``at`` (None: now; a past instant: the drive as it stood then, as recall judges
    ``as_of``) with the drive locked at the same policy version (engine first, then the drive lock:
    the order the simulator itself takes them)."""
    for _ in range(20):
        engine = sim.engine if at is None else sim.engine_at(at)
        with sim.drive.lock:
            if engine.policy_version == sim.drive.policy_version:
                yield engine
                return
    raise PermissionCheckFailed("the policy kept changing while the request was judged")


def _user_guard(engine: PermissionEngine, user_id: str, target: Target, action: str, at: datetime, shown: str) -> None:
    """A user must be able to ``list`` the target to learn it exists, and hold ``action`` to act on it."""
    principal = engine.user_principal(user_id)
    try:
        sees = engine.enforce(principal, target.obj, "list", at, target.level)
        may = engine.enforce(principal, target.obj, action, at, target.level)
    except Exception as exc:  # fail closed
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc
    if not sees:
        raise _missing(shown)
    if not may:
        raise Forbidden(f"you need {action!r} on {target.path} for this")


def _authorize_change(
    engine: PermissionEngine, token: TokenInfo, target: Target, action: str, at: datetime, shown: str
) -> None:
    if token.has("admin"):
        return
    if token.user_id is None:
        raise Forbidden(
            "this token may read permissions but not change them: use the admin token or a user with manage"
        )
    _user_guard(engine, token.user_id, target, action, at, shown)


def _grant_out(sim: Simulator, grant: GrantRec, inherited: bool = False) -> GrantOut:
    target = _target_of_grant(sim, grant)
    return GrantOut(
        grant_id=grant.grant_id,
        path=target.path,
        target=target.kind,
        folder_id=grant.folder_id,
        doc_id=grant.doc_id,
        subject=SubjectOut.from_key(grant.subject),
        actions=list(grant.actions),
        effect=grant.effect,
        valid_from=grant.valid_from,
        valid_until=grant.valid_until,
        note=grant.note,
        created_at=grant.created_at,
        inherited=inherited,
    )


def _principal_out(p: Principal) -> PrincipalOut:
    return PrincipalOut(
        user_id=p.user_id,
        roles=list(p.roles),
        department=p.department,
        clearance=SECRET_LEVELS[p.clearance],
        evaluated_as=p.evaluated_as,
        caller=p.caller,
    )


# ---------------------------------------------------------------------------- routes
@router.get("/grants", response_model=GrantListOut, responses=_ERRORS, summary="Grants on a path")  # type: ignore[arg-type]
def list_grants(
    request: Request,
    path: Annotated[str, Query(min_length=1, max_length=4096, pattern=r"^/", description="Folder or document path.")],
    inherited: Annotated[bool, Query(description="Also the grants reaching the path from ancestor folders.")] = False,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
) -> GrantListOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    with consistent(sim) as engine:
        target = resolve_path(sim, path)
        if not token.has("admin") and not token.has("evaluate-as"):
            if token.user_id is None:
                raise Forbidden("this token may not read grants")
            _user_guard(engine, token.user_id, target, "manage", sim.drive.clock.now(), path)
        reach = engine.object_ancestors(target.obj) if inherited else frozenset({target.obj})
        out = []
        for g in sorted(sim.drive.grants.values(), key=lambda g: g.grant_id):
            obj = doc_obj(g.doc_id) if g.doc_id is not None else folder_obj(g.folder_id or "")
            if obj in reach:
                out.append(_grant_out(sim, g, inherited=obj != target.obj))
        out.sort(key=lambda g: (g.inherited, g.grant_id))
        return GrantListOut(path=target.path, target=target.kind, grants=out, policy_version=engine.policy_version)


@router.post(
    "/grants",
    status_code=201,
    response_model=GrantChangeOut,
    responses=_ERRORS,
    summary="Add a grant on a path",  # type: ignore[arg-type]
)
def add_grant(
    request: Request, body: GrantIn, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> GrantChangeOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    with consistent(sim) as engine:
        target = resolve_path(sim, body.path)
        _authorize_change(engine, token, target, "manage", sim.drive.clock.now(), body.path)
        grant = GrantRec(
            grant_id=body.grant_id or sim.drive.next_grant_id(),
            subject=body.subject.key(),
            actions=list(dict.fromkeys(body.actions)),
            effect=body.effect,
            folder_id=target.ident if target.kind == "folder" else None,
            doc_id=target.ident if target.kind == "document" else None,
            valid_from=as_utc(body.valid_from) if body.valid_from else None,
            valid_until=as_utc(body.valid_until) if body.valid_until else None,
            note=body.note,
        )
        stored = sim.drive.add_grant(grant, actor=token.subject)
        out = GrantChangeOut(grant=_grant_out(sim, stored), policy_version=sim.drive.policy_version)
    sim.sync_index()
    return out


@router.delete(
    "/grants/{grant_id}",
    response_model=GrantChangeOut,
    responses=_ERRORS,
    summary="Remove a grant",  # type: ignore[arg-type]
)
def remove_grant(
    request: Request, grant_id: GrantId, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> GrantChangeOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    with consistent(sim) as engine:
        grant = sim.drive.grants.get(grant_id)
        if grant is None:
            raise NotFound(f"no grant {grant_id!r}")
        target = _target_of_grant(sim, grant)
        try:
            _authorize_change(engine, token, target, "manage", sim.drive.clock.now(), target.path)
        except NotFound:
            raise NotFound(f"no grant {grant_id!r}") from None
        shown = _grant_out(sim, grant)
        sim.drive.remove_grant(grant_id, actor=token.subject)
        out = GrantChangeOut(grant=shown, policy_version=sim.drive.policy_version)
    sim.sync_index()
    return out


@router.get("/effective", response_model=EffectiveOut, responses=_ERRORS, summary="Effective permissions on a path")  # type: ignore[arg-type]
def effective(
    request: Request,
    path: Annotated[str, Query(min_length=1, max_length=4096, pattern=r"^/", description="Folder or document path.")],
    user_id: Annotated[str | None, Query(description="Whose permissions (evaluate-as, or your own id).")] = None,
    user_role: Annotated[str | None, Query(description="Evaluate as a role (evaluate-as).")] = None,
    department: Annotated[str | None, Query(description="With user_role: the role within this department.")] = None,
    as_of: Annotated[datetime | None, Query(description="Judge at this time (default: the drive's clock).")] = None,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
) -> EffectiveOut:
    """Every action's decision on the path, each with the grants it comes from: direct (on the path
    itself) or inherited (from an ancestor folder, up to a folder that breaks inheritance)."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    principal = sim.principal_for(token, user_id=user_id, user_role=user_role, department=department)
    at = as_utc(as_of) if as_of is not None else sim.drive.clock.now()
    with consistent(sim, at) as engine:
        target = resolve_path(sim, path)
        if not principal.evaluated_as:
            try:
                sees = engine.enforce(principal, target.obj, "list", at, target.level)
            except Exception as exc:
                raise PermissionCheckFailed(f"permission check failed: {exc}") from exc
            if not sees:
                raise _missing(path)
        try:
            eff = effective_permissions(engine, principal, target.obj, at, target.level, path_of=_path_of(sim))
        except ExplanationMismatch as exc:
            raise PermissionCheckFailed(str(exc)) from exc
        except Exception as exc:  # fail closed: never a partial answer
            raise PermissionCheckFailed(f"permission check failed: {type(exc).__name__}: {exc}") from exc
        return EffectiveOut(
            path=target.path,
            target=target.kind,
            principal=_principal_out(principal),
            as_of=at,
            secret_level=SECRET_LEVELS[target.level],
            trashed=target.trashed,
            policy_version=eff.policy_version,
            allowed=eff.allowed,
            actions=[
                ActionOut(
                    action=a.action,
                    allowed=a.allowed,
                    reason=a.reason,  # type: ignore[arg-type]
                    sources=[
                        SourceOut(
                            grant_id=s.grant_id,
                            effect=s.effect,
                            subject=SubjectOut.from_key(s.subject),
                            matched_as=s.matched_as,
                            granted_actions=list(s.granted_actions),
                            path=s.path,
                            inherited=s.inherited,
                            valid_from=s.valid_from,
                            valid_until=s.valid_until,
                            vetoed_by_clearance=s.vetoed_by_clearance,
                        )
                        for s in a.sources
                    ],
                )
                for a in eff.actions
            ],
        )


@router.post("/move", response_model=MoveOut, responses=_ERRORS, summary="Move a folder or document")  # type: ignore[arg-type]
def move(request: Request, body: MoveIn, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> MoveOut:
    """Re-parent a folder (or move a document) into the folder ``to``. Access below it is re-evaluated at
    once: it stops inheriting from its old ancestors and inherits from the new ones."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    with consistent(sim) as engine:
        src = resolve_path(sim, body.path)
        dst = resolve_path(sim, body.to)
        now = sim.drive.clock.now()
        _authorize_change(engine, token, src, "manage", now, body.path)
        _authorize_change(engine, token, dst, "upload", now, body.to)
        if dst.kind != "folder":
            raise InvalidRequest(f"{body.to!r} is a document: move into a folder")
        if src.kind == "folder":
            sim.drive.move_folder(src.ident, dst.ident, actor=token.subject)
            new_path = sim.drive.folder_path(src.ident)
        else:
            doc = sim.drive.move_document(src.ident, folder_id=dst.ident, actor=token.subject)
            new_path = sim.drive.doc_path(doc)
        out = MoveOut(from_path=src.path, path=new_path, target=src.kind, policy_version=sim.drive.policy_version)
    sim.sync_index()
    return out
