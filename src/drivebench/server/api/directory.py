"""Directory administration over HTTP (admin token only; any other token: 403, none: 401):

* ``PATCH  /api/v1/users/{user_id}``: a user's department, clearance and/or roles;
* ``DELETE /api/v1/projects/{project_id}/members/{user_id}``: end a project membership now;
* ``POST   /api/v1/folders``: create a folder under an existing parent;
* ``PATCH  /api/v1/folders``: whether a folder inherits grants from its parent.

Each is an ACL-only change: an ``acl_changed`` entry in the change feed, a new ``policy_version``, no
document's ``modified_at`` moves. The domain operations are ``simulator/directory_admin.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, model_validator

from drivebench.drive.model import FolderNode, UserRec
from drivebench.drive.operations import MAX_ROLES, ROLE_PATTERN
from drivebench.drive.tokens import TokenInfo
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.server.api.request import bearer, current_token
from drivebench.server.api.schemas import ErrorResponse
from drivebench.simulator import directory_admin as directory
from drivebench.simulator.backend import Simulator

router = APIRouter(prefix="/api/v1", tags=["directory"])

Level = Literal["public", "internal", "confidential", "secret"]
RoleName = Annotated[str, StringConstraints(pattern=ROLE_PATTERN)]
Ident = Annotated[str, Path(min_length=1, max_length=256)]
FolderPath = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4096, pattern=r"^/")]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Unknown department, bad path or name."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "Not the admin token."},
    404: {"model": ErrorResponse, "description": "No such user, project membership or folder."},
    409: {"model": ErrorResponse, "description": "The folder exists."},
    422: {"model": ErrorResponse, "description": "A field has a wrong type or value (named in `fields`)."},
}


# ---------------------------------------------------------------------------- boundary models
class UserPatchIn(BaseModel):
    """Any of a user's department, clearance and roles (at least one); fields left out stay as they are."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"department": "finance"}, {"clearance": "public"}], "minProperties": 1},
    )
    # not nullable in the schema: an explicit null would change nothing (so ``{}``-like bodies are refused)
    department: str = Field(default=None, min_length=1, max_length=256, description="A department id.")  # type: ignore[assignment]  # left out: None; not nullable
    clearance: Level = None  # type: ignore[assignment]  # left out: None; not nullable in the schema
    roles: list[RoleName] = Field(default=None, max_length=MAX_ROLES, description="The user's roles, all of them.")  # type: ignore[arg-type]  # left out: None; not nullable

    @model_validator(mode="after")
    def _some_field(self) -> UserPatchIn:
        if self.department is None and self.clearance is None and self.roles is None:
            raise ValueError("give at least one of department, clearance, roles")
        return self


class UserOut(BaseModel):
    user_id: str
    department: str
    clearance: str
    roles: list[str]


class MembershipOut(BaseModel):
    project_id: str
    user_id: str
    role: str
    valid_from: datetime | None
    valid_until: datetime | None = Field(description="Exclusive end: the drive's clock when it was ended.")


class FolderIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"path": "/rd/new-team"}]})
    path: FolderPath = Field(description="The new folder's path; its parent must exist.")
    break_inheritance: StrictBool = Field(default=False, description="True: grants above it do not reach it.")


class FolderPatchIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"path": "/rd/platform", "break_inheritance": True}]}
    )
    path: FolderPath
    break_inheritance: StrictBool = Field(description="True: grants above it no longer reach it or anything below.")


class FolderOut(BaseModel):
    folder_id: str
    path: str
    break_inheritance: StrictBool


# ---------------------------------------------------------------------------- rendering
def _user_out(u: UserRec) -> UserOut:
    return UserOut(
        user_id=u.user_id, department=u.department, clearance=SECRET_LEVELS[u.clearance], roles=list(u.roles)
    )


def _folder_out(sim: Simulator, f: FolderNode) -> FolderOut:
    return FolderOut(
        folder_id=f.folder_id, path=sim.drive.folder_path(f.folder_id), break_inheritance=f.break_inheritance
    )


def _admin(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> TokenInfo:
    """The admin token, checked before the body is read (the operations check it again)."""
    token = current_token(request, credentials)
    directory.authorize(token)
    return token


# ---------------------------------------------------------------------------- routes
@router.patch("/users/{user_id}", response_model=UserOut, responses=_ERRORS, summary="Change a user (admin)")
async def patch_user(
    request: Request, user_id: Ident, body: UserPatchIn, token: TokenInfo = Depends(_admin)
) -> UserOut:
    """A new department (the user leaves the old one's grants), clearance (a lower one hides the documents
    above it) and/or roles, in one write."""
    sim: Simulator = request.app.state.sim
    user = await run_in_threadpool(
        lambda: directory.update_user(
            sim, token, user_id, department=body.department, clearance=body.clearance, roles=body.roles
        )
    )
    return _user_out(user)


@router.delete(
    "/projects/{project_id}/members/{user_id}",
    response_model=MembershipOut,
    responses=_ERRORS,
    summary="End a project membership now (admin)",
)
async def end_membership(
    request: Request, project_id: Ident, user_id: Ident, token: TokenInfo = Depends(_admin)
) -> MembershipOut:
    """The membership's ``valid_until`` becomes the drive's clock: the member loses the project's grants now,
    and ``as_of`` before it still sees them as a member."""
    sim: Simulator = request.app.state.sim
    m = await run_in_threadpool(directory.end_membership, sim, token, project_id, user_id)
    return MembershipOut(
        project_id=project_id, user_id=m.user_id, role=m.role, valid_from=m.valid_from, valid_until=m.valid_until
    )


DeptId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]


class DepartmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: DeptId
    name: str | None = Field(default=None, min_length=1, max_length=256)
    parent: DeptId | None = None


class DepartmentOut(BaseModel):
    id: str
    name: str
    parent: str | None


@router.post(
    "/departments",
    status_code=201,
    response_model=DepartmentOut,
    responses=_ERRORS,
    summary="Create a department (admin)",
)
async def create_department(request: Request, body: DepartmentIn, token: TokenInfo = Depends(_admin)) -> DepartmentOut:
    """Nobody is in it yet; move users into it with ``PATCH /api/v1/users/{id}``."""
    sim: Simulator = request.app.state.sim
    dept = await run_in_threadpool(directory.create_department, sim, token, body.id, body.name, body.parent)
    return DepartmentOut(id=dept.id, name=dept.name, parent=dept.parent)


@router.post(
    "/folders", status_code=201, response_model=FolderOut, responses=_ERRORS, summary="Create a folder (admin)"
)
async def create_folder(request: Request, body: FolderIn, token: TokenInfo = Depends(_admin)) -> FolderOut:
    sim: Simulator = request.app.state.sim
    node = await run_in_threadpool(directory.create_folder, sim, token, body.path, body.break_inheritance)
    return _folder_out(sim, node)


@router.patch(
    "/folders", response_model=FolderOut, responses=_ERRORS, summary="Set whether a folder inherits grants (admin)"
)
async def patch_folder(request: Request, body: FolderPatchIn, token: TokenInfo = Depends(_admin)) -> FolderOut:
    sim: Simulator = request.app.state.sim
    node = await run_in_threadpool(directory.set_inheritance, sim, token, body.path, body.break_inheritance)
    return _folder_out(sim, node)
