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
change bumps ``policy_version`` and the very next request is judged under it (service tokens are shown
it; a user token gets null: it counts changes the user cannot see). Grant ids are random (``g-<16 hex>``);
only the admin token may choose one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from drivebench.drive.clock import as_utc
from drivebench.drive.errors import InvalidRequest
from drivebench.drive.model import GrantRec
from drivebench.drive.permissions.engine import Principal
from drivebench.drive.tokens import TokenInfo
from drivebench.formats.corpus import ACTIONS, SECRET_LEVELS
from drivebench.server.api.request import bearer, current_token
from drivebench.server.api.schemas import BoundedDatetime, ErrorResponse, PrincipalOut
from drivebench.simulator import permission_admin as admin
from drivebench.simulator.backend import Simulator

router = APIRouter(prefix="/api/permissions", tags=["permissions"])

Action = Literal["list", "preview", "download", "upload", "edit", "delete", "share", "manage"]
PathText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4096, pattern=r"^/")]
GrantId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Unknown subject, bad time range, bad request."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "The token may not do this on this path."},
    404: {"model": ErrorResponse, "description": "No such path or grant (or not visible to you)."},
    409: {"model": ErrorResponse, "description": "A grant with that id, or an item with that name, exists."},
    422: {"model": ErrorResponse, "description": "A field has a wrong type or value (named in `fields`)."},
    503: {"model": ErrorResponse, "description": "The permission check failed: no answer is given."},
}
_POLICY_VERSION = (
    "The drive's policy version; null for a user token (it counts every permission change, hidden ones included)."
)
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
    valid_from: BoundedDatetime | None = None
    valid_until: BoundedDatetime | None = Field(default=None, description="Exclusive end of validity.")
    note: str | None = Field(default=None, max_length=1000)
    grant_id: GrantId | None = Field(
        default=None,
        description="Choose the id (the admin token only: a user token gets 400). Default: a random g-<16 hex>.",
    )

    @model_validator(mode="after")
    def _check_times(self) -> GrantIn:
        try:
            reversed_window = (
                self.valid_from is not None
                and self.valid_until is not None
                and as_utc(self.valid_from) >= as_utc(self.valid_until)
            )
        except (OverflowError, ValueError):  # out of range: the drive answers 400 for it
            return self
        if reversed_window:
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
    policy_version: int | None = Field(description=_POLICY_VERSION)


class GrantChangeOut(BaseModel):
    grant: GrantOut
    policy_version: int | None = Field(description=_POLICY_VERSION)


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
    reason: Literal["allowed", "denied", "clearance", "no-grant", "revoked"] = Field(
        description="revoked: allowed at as_of but taken away since (a principal acting as itself)."
    )
    sources: list[SourceOut]


class EffectiveOut(BaseModel):
    path: str
    target: Literal["folder", "document"]
    principal: PrincipalOut
    as_of: datetime
    secret_level: str
    trashed: bool
    policy_version: int | None = Field(description=_POLICY_VERSION)
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
    policy_version: int | None = Field(description=_POLICY_VERSION)


# ---------------------------------------------------------------------------- rendering
def _grant_out(sim: Simulator, grant: GrantRec, inherited: bool = False) -> GrantOut:
    target = admin.target_of_grant(sim, grant)
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


def _shown_version(token: TokenInfo, version: int) -> int | None:
    """The global policy version for a service token; a user token is not told it (see ``_POLICY_VERSION``)."""
    return None if token.user_id is not None else version


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
@router.get("/grants", response_model=GrantListOut, responses=_ERRORS, summary="Grants on a path")
def list_grants(
    request: Request,
    path: Annotated[str, Query(min_length=1, max_length=4096, pattern=r"^/", description="Folder or document path.")],
    inherited: Annotated[bool, Query(description="Also the grants reaching the path from ancestor folders.")] = False,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
) -> GrantListOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    listing = admin.list_grants(sim, token, path, inherited)
    return GrantListOut(
        path=listing.target.path,
        target=listing.target.kind,
        grants=[_grant_out(sim, g, inherited=inh) for g, inh in listing.grants],
        policy_version=_shown_version(token, listing.policy_version),
    )


@router.post(
    "/grants",
    status_code=201,
    response_model=GrantChangeOut,
    responses=_ERRORS,
    summary="Add a grant on a path",
)
def add_grant(
    request: Request, body: GrantIn, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> GrantChangeOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    if body.grant_id is not None and token.user_id is not None:
        # refused whatever the id: taken by a grant the user cannot see (409) and free (201) must not differ
        raise InvalidRequest("grant_id: only the admin token chooses grant ids; leave it out for a random one")

    def make(target: admin.Target, default_id: str) -> GrantRec:
        return GrantRec(
            grant_id=body.grant_id or default_id,
            subject=body.subject.key(),
            actions=list(dict.fromkeys(body.actions)),
            effect=body.effect,
            folder_id=target.ident if target.kind == "folder" else None,
            doc_id=target.ident if target.kind == "document" else None,
            valid_from=as_utc(body.valid_from) if body.valid_from else None,
            valid_until=as_utc(body.valid_until) if body.valid_until else None,
            note=body.note,
        )

    stored = admin.add_grant(sim, token, body.path, make)
    return GrantChangeOut(grant=_grant_out(sim, stored), policy_version=_shown_version(token, sim.drive.policy_version))


@router.delete(
    "/grants/{grant_id}",
    response_model=GrantChangeOut,
    responses=_ERRORS,
    summary="Remove a grant",
)
def remove_grant(
    request: Request, grant_id: GrantId, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> GrantChangeOut:
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    with sim.drive.lock:  # render the grant as it was (its target may be purged later)
        grant = sim.drive.grants.get(grant_id)
        shown = _grant_out(sim, grant) if grant is not None else None
    removed = admin.remove_grant(sim, token, grant_id)
    out = shown if shown is not None and shown.grant_id == removed.grant_id else _grant_out(sim, removed)
    return GrantChangeOut(grant=out, policy_version=_shown_version(token, sim.drive.policy_version))


@router.get("/effective", response_model=EffectiveOut, responses=_ERRORS, summary="Effective permissions on a path")
def effective(
    request: Request,
    path: Annotated[str, Query(min_length=1, max_length=4096, pattern=r"^/", description="Folder or document path.")],
    user_id: Annotated[
        str | None, Query(max_length=256, description="Whose permissions (evaluate-as, or your own id).")
    ] = None,
    user_role: Annotated[str | None, Query(max_length=256, description="Evaluate as a role (evaluate-as).")] = None,
    department: Annotated[
        str | None, Query(max_length=256, description="With user_role: the role within this department.")
    ] = None,
    as_of: Annotated[
        BoundedDatetime | None,
        Query(description="Judge at this time (default: the drive's clock); not after it. Point-in-time rule."),
    ] = None,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
) -> EffectiveOut:
    """Every action's decision on the path, each with the grants it comes from: direct (on the path
    itself) or inherited (from an ancestor folder, up to a folder that breaks inheritance). With a past
    ``as_of``, a user asking about themselves sees what was allowed then and still is now (an action
    allowed then but taken away since has reason ``revoked``); the evaluation token sees the decisions
    in force then."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    principal = sim.principal_for(token, user_id=user_id, user_role=user_role, department=department)
    result = admin.effective(sim, principal, path, as_of)
    target, eff = result.target, result.permissions
    return EffectiveOut(
        path=target.path,
        target=target.kind,
        principal=_principal_out(principal),
        as_of=result.at,
        secret_level=SECRET_LEVELS[target.level],
        trashed=target.trashed,
        policy_version=_shown_version(token, eff.policy_version),
        allowed=eff.allowed,
        actions=[
            ActionOut(
                action=a.action,
                allowed=a.allowed,
                reason=a.reason,
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


@router.post("/move", response_model=MoveOut, responses=_ERRORS, summary="Move a folder or document")
def move(request: Request, body: MoveIn, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> MoveOut:
    """Re-parent a folder (or move a document) into the folder ``to``. Access below it is re-evaluated at
    once: it stops inheriting from its old ancestors and inherits from the new ones."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    moved = admin.move(sim, token, body.path, body.to)
    return MoveOut(
        from_path=moved.source.path,
        path=moved.new_path,
        target=moved.source.kind,
        policy_version=_shown_version(token, moved.policy_version),
    )
