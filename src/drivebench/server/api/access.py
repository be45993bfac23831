"""Who may preview what, now (``/api/v1``): what an outside system syncing permissions from the drive reads.

* ``GET /api/v1/files/{doc_id}/access``: the users who may preview one document now (404: no such document);
* ``GET /api/v1/access[?folder=/path]``: the same for every document (under ``folder``, recursive), by doc_id.

The admin token or the evaluation token only (a user token: 403; none: 401). A trashed document lists no
users. The decision is the drive's own (``simulator/access_listing.py``); a failed check answers 503.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, Field

from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.request import bearer, current_token
from drivebench.server.api.schemas import ErrorResponse
from drivebench.simulator import access_listing
from drivebench.simulator.backend import Simulator

router = APIRouter(prefix="/api/v1", tags=["access"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed folder path."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "Neither the admin token nor the evaluation token."},
    404: {"model": ErrorResponse, "description": "No such document or folder."},
    503: {"model": ErrorResponse, "description": "The permission check failed: no answer is given."},
}


def _reader(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> TokenInfo:
    """The admin or the evaluation token (the listing checks it again)."""
    token = current_token(request, credentials)
    access_listing.authorize(token)
    return token


class DocumentAccessOut(BaseModel):
    doc_id: str
    users: list[str] = Field(description="User ids, sorted, who may preview the document now (none when trashed).")
    trashed: bool


class FileAccessOut(BaseModel):
    doc_id: str
    at: datetime = Field(description="The drive's clock when the decision was taken.")
    users: list[str] = Field(description="User ids, sorted, who may preview the document now (none when trashed).")
    trashed: bool


class AccessListOut(BaseModel):
    at: datetime = Field(description="The drive's clock when the decisions were taken.")
    documents: list[DocumentAccessOut] = Field(description="Every document (trashed ones too), sorted by doc_id.")


@router.get(
    "/files/{doc_id}/access",
    response_model=FileAccessOut,
    responses=_ERRORS,
    summary="Who may preview the document now (admin or evaluation token)",
)
async def file_access(request: Request, doc_id: str, token: TokenInfo = Depends(_reader)) -> FileAccessOut:
    sim: Simulator = request.app.state.sim
    at, doc = await run_in_threadpool(access_listing.document_access, sim, token, doc_id)
    return FileAccessOut(doc_id=doc.doc_id, at=at, users=list(doc.users), trashed=doc.trashed)


@router.get(
    "/access",
    response_model=AccessListOut,
    responses=_ERRORS,
    summary="Who may preview every document now (admin or evaluation token)",
)
async def access(
    request: Request,
    folder: str | None = Query(
        None, max_length=4096, pattern=r"^/", description="Only documents in this folder and below it"
    ),
    token: TokenInfo = Depends(_reader),
) -> AccessListOut:
    sim: Simulator = request.app.state.sim
    listing = await run_in_threadpool(access_listing.access_listing, sim, token, folder)
    return AccessListOut(
        at=listing.at,
        documents=[
            DocumentAccessOut(doc_id=d.doc_id, users=list(d.users), trashed=d.trashed) for d in listing.documents
        ],
    )
