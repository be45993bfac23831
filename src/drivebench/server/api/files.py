"""The drive's file API (``/api/v1``): upload, versions, download, restore, rename/move, trash, purge,
the change feed and retention settings. Every call is permission-checked with the same engine
(Casbin) that filters recall.

Who may do what (a user token acts as its user; the admin token may do everything; the evaluation
token, which only evaluates recall, gets 403 here):

====================================================  ============================================
``POST /api/v1/files`` (new document)                 ``upload`` on the destination folder
``POST /api/v1/files/{id}/versions`` (new version)    ``edit`` on the document
``POST .../versions/{vid}/restore`` (copy-forward)    ``edit`` on the document
``GET /api/v1/files/{id}``, ``.../versions``          ``list`` on the document
``GET /api/v1/files?folder=[&recursive=true]``        ``list`` on the folder; lists what you may list
``GET /api/v1/files/{id}/content``                    ``download`` on the document
``PATCH /api/v1/files/{id}`` (rename / move)          ``edit`` on the document (+ ``upload`` on the
                                                      destination folder for a move)
``POST .../trash``, ``POST .../untrash``              ``delete`` on the document
``DELETE /api/v1/files/{id}`` (purge, irreversible)   the admin token
``GET /api/v1/changes``                               entries about documents (or folders) you may
                                                      ``list`` now; the admin token sees every entry
``GET/PUT /api/v1/settings/retention``                the admin token
====================================================  ============================================

A document the caller may not even ``list`` answers 404, exactly like a missing one (its existence
is not revealed); one it may list but not act on answers 403.

Uploads: multipart ``file`` (at most ``MAX_UPLOAD_BYTES``: 32 MiB, or ``DRIVEBENCH_MAX_UPLOAD_BYTES``; else
413 ``too-large``, refused before the body is parsed when the client announces a larger length),
``folder`` (path), optional ``name`` (default: the file's name), ``secret_level`` (default
``internal``; not above the uploader's clearance) and ``note``. Every upload goes through the same
extractors as the corpus. A file they refuse (hostile, corrupt, mislabelled, unsupported) is kept
(a drive stores any bytes; it downloads unchanged) but not indexed: the answer is 201 with
``index.state = "rejected"`` and the extractor's ``reason``, and recall never returns it. With
``?strict=true`` such a file is refused instead: 422 with the reason as error code, nothing stored.
A write is acknowledged only once it is committed (and, with ``--data-dir``, durable) and indexed:
a recall that starts after the answer finds it.
"""

from __future__ import annotations

import mimetypes
from functools import partial
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from drivebench.drive.errors import InvalidRequest, PayloadTooLarge
from drivebench.drive.operations import Retention
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.server.api.boundary import MAX_UPLOAD_BYTES, MULTIPART_SLACK, BodyTooLarge
from drivebench.server.api.file_models import (
    FOLDER_PATTERN,
    NAME_PATTERN,
    ChangeOut,
    ChangesOut,
    FileListOut,
    FileOut,
    PatchIn,
    PurgeOut,
    RetentionIn,
    RetentionOut,
    UploadOut,
    VersionsOut,
    file_out,
    upload_out,
    version_out,
)
from drivebench.server.api.request import BadBody, NotAdmin, bearer, current_token
from drivebench.server.api.schemas import ErrorResponse
from drivebench.simulator import drive_access as access
from drivebench.simulator.backend import Simulator
from drivebench.simulator.drive_access import Caller
from drivebench.simulator.persistence import lifecycle

router = APIRouter(prefix="/api/v1", tags=["files"])
__all__ = ["MAX_UPLOAD_BYTES", "FileOut", "UploadOut", "router"]

_MULTIPART_SLACK = MULTIPART_SLACK

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed request (bad path, name, cursor, form)."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "You may see the item but not do this."},
    404: {"model": ErrorResponse, "description": "No such item, or you may not even list it."},
    409: {"model": ErrorResponse, "description": "Conflicts with the current state (name taken, in the trash...)."},
}


# ---------------------------------------------------------------------------- callers
def get_caller(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> Caller:
    return access.caller_for(request.app.state.sim, current_token(request, credentials))


def require_admin(caller: Caller = Depends(get_caller)) -> Caller:
    if caller.principal is not None:
        raise NotAdmin("this operation needs the admin token")
    return caller


# ---------------------------------------------------------------------------- uploads
def _limit(request: Request) -> int:
    return int(getattr(request.app.state, "max_upload_bytes", MAX_UPLOAD_BYTES))


async def read_upload(request: Request, fields: tuple[str, ...]) -> tuple[bytes, str, dict[str, str]]:
    """(file bytes, client file name, text fields) from a multipart body, with the size limit applied
    before the body is parsed when the client announces its length, and while reading otherwise."""
    limit = _limit(request)
    ctype = request.headers.get("content-type", "")
    if not ctype.lower().startswith("multipart/form-data"):
        raise BadBody("send multipart/form-data with a `file` part", status=415)
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit + _MULTIPART_SLACK:
        raise PayloadTooLarge(f"upload of {int(length)} bytes exceeds the limit of {limit} bytes")
    try:
        form = await request.form(max_files=1, max_fields=len(fields) + 1)
    except BodyTooLarge:
        raise
    except StarletteHTTPException as exc:
        raise BadBody(f"malformed multipart body: {exc.detail}") from None
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise BadBody("the multipart body needs a `file` part holding the file")
    data = await upload.read(limit + 1)
    await upload.close()
    if len(data) > limit:
        raise PayloadTooLarge(f"the file exceeds the upload limit of {limit} bytes")
    unknown = sorted(set(form.keys()) - {"file", *fields})
    if unknown:  # a field the route does not read would be silently dropped: refuse it
        raise BadBody(f"unknown field {unknown[0][:64]!r}; this upload reads `file` and {', '.join(fields)}")
    values = {}
    for name in fields:
        if len(form.getlist(name)) > 1:  # the reader would keep the last one: refuse rather than guess
            raise BadBody(f"`{name}` is given more than once")
        value = form.get(name)
        if value is not None and not isinstance(value, str):
            raise BadBody(f"`{name}` must be a text field")
        if value is not None:
            values[name] = value
    return data, upload.filename or "", values


# A free-text multipart field: one value, and text whatever it looks like ("5", "true" and "null" are valid notes
# and names).
MULTIPART_TEXT: dict[str, Any] = {"type": "string"}


def _multipart(required: list[str], props: dict[str, dict[str, Any]]) -> dict[str, Any]:
    # only these fields: the multipart reader refuses others (400) rather than silently dropping them
    schema = {"type": "object", "required": required, "properties": props, "additionalProperties": False}
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}}


@router.post(
    "/files",
    status_code=201,
    response_model=UploadOut,
    responses={**_ERRORS, 413: {"model": ErrorResponse}, 415: {"model": ErrorResponse}, 422: {"model": ErrorResponse}},
    summary="Upload a new document into a folder (needs upload on the folder)",
    openapi_extra=_multipart(
        ["file", "folder"],
        {
            "file": {"type": "string", "format": "binary"},
            "folder": {
                "type": "string",
                "pattern": FOLDER_PATTERN,
                "maxLength": 4096,
                "description": "Destination folder path, e.g. /rd/platform",
            },
            "name": {
                **MULTIPART_TEXT,
                "pattern": NAME_PATTERN,
                "maxLength": 255,
                "description": "Document name (default: the uploaded file's name)",
            },
            "secret_level": {"type": "string", "enum": list(SECRET_LEVELS), "description": "Default internal"},
        },
    ),
)
async def upload_file(
    request: Request,
    caller: Caller = Depends(get_caller),
    strict: bool = Query(False, description="Refuse (422) a file no extractor can read instead of storing it."),
) -> UploadOut:
    sim: Simulator = request.app.state.sim
    data, filename, fields = await read_upload(request, ("folder", "name", "secret_level"))
    if "folder" not in fields:
        raise BadBody("the multipart body needs a `folder` field (the destination folder path)")
    if not fields["folder"].startswith("/"):
        raise InvalidRequest(f"folder: a folder path starts with / (got {fields['folder'][:64]!r})")
    name = fields["name"] if "name" in fields else PurePosixPath(filename.replace("\\", "/")).name
    if not name:
        raise InvalidRequest("give the document a name (the `name` field or the file's name)")
    upload = partial(access.upload, sim, caller, fields["folder"], name, data, fields.get("secret_level"), strict)
    doc = await run_in_threadpool(upload)
    return upload_out(sim, doc, doc.versions[0])


@router.post(
    "/files/{doc_id}/versions",
    status_code=201,
    response_model=UploadOut,
    responses={**_ERRORS, 413: {"model": ErrorResponse}, 415: {"model": ErrorResponse}, 422: {"model": ErrorResponse}},
    summary="Upload a new version: the new head (needs edit on the document)",
    openapi_extra=_multipart(
        ["file"],
        {"file": {"type": "string", "format": "binary"}, "note": {**MULTIPART_TEXT, "description": "What changed"}},
    ),
)
async def upload_version(
    request: Request,
    doc_id: str,
    caller: Caller = Depends(get_caller),
    strict: bool = Query(False, description="Refuse (422) a file no extractor can read instead of storing it."),
) -> UploadOut:
    sim: Simulator = request.app.state.sim
    data, _, fields = await read_upload(request, ("note",))
    doc, version = await run_in_threadpool(
        partial(access.new_version, sim, caller, doc_id, data, fields.get("note"), strict)
    )
    return upload_out(sim, doc, version)


# ---------------------------------------------------------------------------- reads
@router.get("/files", response_model=FileListOut, responses=_ERRORS, summary="List a folder (what you may list)")
async def list_files(
    request: Request,
    folder: str = Query("/", max_length=4096, pattern=FOLDER_PATTERN, description="Folder path"),
    trashed: bool = Query(False, description="List the folder's recycle bin instead"),
    recursive: bool = Query(False, description="The folder and every folder below it (sorted by path)"),
    caller: Caller = Depends(get_caller),
) -> FileListOut:
    sim: Simulator = request.app.state.sim
    path, docs = await run_in_threadpool(access.list_folder, sim, caller, folder, trashed, recursive)
    return FileListOut(folder=path, files=[file_out(sim, d) for d in docs])


@router.get("/files/{doc_id}", response_model=FileOut, responses=_ERRORS, summary="A document's metadata (list)")
async def get_file(request: Request, doc_id: str, caller: Caller = Depends(get_caller)) -> FileOut:
    sim: Simulator = request.app.state.sim
    return file_out(sim, access.authorize_doc(sim, caller, doc_id, "list"))


@router.get(
    "/files/{doc_id}/versions", response_model=VersionsOut, responses=_ERRORS, summary="Every kept version (list)"
)
async def list_versions(request: Request, doc_id: str, caller: Caller = Depends(get_caller)) -> VersionsOut:
    sim: Simulator = request.app.state.sim
    doc = access.authorize_doc(sim, caller, doc_id, "list")
    return VersionsOut(doc_id=doc_id, versions=[version_out(sim, doc, v) for v in list(doc.versions)])


@router.get(
    "/files/{doc_id}/content",
    response_class=Response,
    responses={
        **_ERRORS,
        200: {
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
            "description": "The bytes, with the media type of the document's name (application/pdf, ...; "
            "application/octet-stream when the name says none).",
        },
    },
    summary="Download a version's bytes (download; default: the head)",
)
async def download(
    request: Request,
    doc_id: str,
    version_id: str | None = Query(None, max_length=256, description="A version id (default: the head version)"),
    caller: Caller = Depends(get_caller),
) -> Response:
    sim: Simulator = request.app.state.sim
    doc, version = access.download(sim, caller, doc_id, version_id)
    data = await run_in_threadpool(sim.drive.blob, version.blob)
    media = mimetypes.guess_type(doc.name)[0] or "application/octet-stream"
    headers = {
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(doc.name)}",
        "ETag": f'"{version.blob}"',
        "X-Version-Id": version.version_id,
    }
    return Response(content=data, media_type=media, headers=headers)


# ---------------------------------------------------------------------------- changes to documents
@router.post(
    "/files/{doc_id}/versions/{version_id}/restore",
    status_code=201,
    response_model=UploadOut,
    responses=_ERRORS,
    summary="Restore an old version: copy-forward to a new head, history kept (edit)",
)
async def restore(request: Request, doc_id: str, version_id: str, caller: Caller = Depends(get_caller)) -> UploadOut:
    sim: Simulator = request.app.state.sim
    doc, version = await run_in_threadpool(access.restore, sim, caller, doc_id, version_id)
    return upload_out(sim, doc, version)


@router.patch("/files/{doc_id}", response_model=FileOut, responses=_ERRORS, summary="Rename and/or move (edit)")
async def patch_file(request: Request, doc_id: str, body: PatchIn, caller: Caller = Depends(get_caller)) -> FileOut:
    sim: Simulator = request.app.state.sim
    doc = await run_in_threadpool(access.rename_or_move, sim, caller, doc_id, body.name, body.folder)
    return file_out(sim, doc)


@router.post("/files/{doc_id}/trash", response_model=FileOut, responses=_ERRORS, summary="Move to the trash (delete)")
async def trash(request: Request, doc_id: str, caller: Caller = Depends(get_caller)) -> FileOut:
    sim: Simulator = request.app.state.sim
    doc = await run_in_threadpool(access.trash, sim, caller, doc_id)
    return file_out(sim, doc)


@router.post(
    "/files/{doc_id}/untrash", response_model=FileOut, responses=_ERRORS, summary="Restore from the trash (delete)"
)
async def untrash(request: Request, doc_id: str, caller: Caller = Depends(get_caller)) -> FileOut:
    sim: Simulator = request.app.state.sim
    doc = await run_in_threadpool(partial(access.trash, sim, caller, doc_id, restore=True))
    return file_out(sim, doc)


@router.delete(
    "/files/{doc_id}",
    response_model=PurgeOut,
    responses=_ERRORS,
    summary="Purge: destroy the document, its versions, bytes and history (admin token)",
)
async def purge(request: Request, doc_id: str, caller: Caller = Depends(require_admin)) -> PurgeOut:
    sim: Simulator = request.app.state.sim
    await run_in_threadpool(lifecycle.purge, sim, doc_id, caller.actor)
    return PurgeOut(doc_id=doc_id)


# ---------------------------------------------------------------------------- feed and settings
_FEED_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    410: {"model": ErrorResponse, "description": "`resync-required`: the cursor's epoch is not the feed's."},
}


@router.get("/changes", response_model=ChangesOut, responses=_FEED_ERRORS, summary="The change feed, from a cursor")
async def changes(
    request: Request,
    cursor: int = Query(
        0, ge=0, description="0 for the start; then the `next_cursor` (or an entry's `seq`) of a previous answer"
    ),
    limit: int = Query(
        100, ge=1, le=1000, description="At most this many entries (the admin token: entries read, all shown)"
    ),
    epoch: str | None = Query(
        None,
        min_length=1,
        max_length=64,
        description="The `epoch` the cursor came with: another one than the feed's answers 410 `resync-required` "
        "(the drive was reset since; read everything again). Leave it out to skip the check.",
    ),
    caller: Caller = Depends(get_caller),
) -> ChangesOut:
    """Changes after ``cursor``, oldest first: only those about documents (or folders) you could list
    when the entry was written and may list now. Purged documents and organisation changes appear to the
    admin token only. For a user token every number is opaque and counts nothing hidden: ``limit`` counts
    entries you may see, ``seq`` is the cursor that resumes after an entry (``drive_access.feed_page``)."""
    sim: Simulator = request.app.state.sim
    page = await run_in_threadpool(access.feed_page, sim, caller, cursor, limit, epoch)
    return ChangesOut(
        changes=[ChangeOut(**{**c.__dict__, "seq": seq}) for seq, c in page.changes],
        next_cursor=page.next_cursor,
        has_more=page.has_more,
        latest_cursor=page.latest_cursor,
        epoch=page.epoch,
    )


def _retention_in(r: Retention) -> RetentionIn:
    return RetentionIn(versions_kept=r.versions_kept, days=r.days, trash_days=r.trash_days)


@router.get("/settings/retention", response_model=RetentionOut, responses=_ERRORS, summary="Retention settings (admin)")
async def get_retention(request: Request, caller: Caller = Depends(require_admin)) -> RetentionOut:
    sim: Simulator = request.app.state.sim
    return RetentionOut(retention=_retention_in(sim.drive.retention))


@router.put(
    "/settings/retention",
    response_model=RetentionOut,
    responses=_ERRORS,
    summary="Set version/trash retention, applied now and on every clock move (admin)",
)
async def put_retention(request: Request, body: RetentionIn, caller: Caller = Depends(require_admin)) -> RetentionOut:
    """``versions_kept``: at most N versions per document (head included); ``days``: delete versions
    superseded longer ago; ``trash_days``: purge documents trashed longer ago. ``null`` disables a rule.
    Deleted versions and purged documents leave ``as_of`` answers too."""
    sim: Simulator = request.app.state.sim
    retention = Retention(body.versions_kept, body.days, body.trash_days)
    out = await run_in_threadpool(lifecycle.set_retention, sim, retention, caller.actor)
    return RetentionOut(
        retention=_retention_in(sim.drive.retention),
        deleted_versions=out["deleted_versions"],
        purged_documents=out["purged_documents"],
    )
