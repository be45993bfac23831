"""``GET /api/v1/directory`` (admin token): the organisation and every grant, for harnesses that plan
permission changes from the drive's own state (``simulator.directory_listing``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool

from drivebench.server.api.files import require_admin
from drivebench.server.api.schemas import ErrorResponse
from drivebench.simulator.directory_listing import directory
from drivebench.simulator.drive_access import Caller

router = APIRouter(prefix="/api/v1", tags=["files"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "Not the admin token."},
}


@router.get("/directory", responses=_ERRORS, summary="Users, departments, projects, folders and every grant (admin)")
async def get_directory(request: Request, _: Caller = Depends(require_admin)) -> dict[str, Any]:
    return await run_in_threadpool(directory, request.app.state.sim)
