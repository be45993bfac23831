"""``POST /api/mcp/recall``: the vendor-shaped, permission-filtered recall endpoint."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials

from drivebench.corpora.format import SECRET_LEVELS
from drivebench.simulator.api.auth import bearer, current_token
from drivebench.simulator.api.body import read_json_object
from drivebench.simulator.api.schemas import (
    ErrorResponse,
    PrincipalOut,
    RecallFilters,
    RecallRequest,
    RecallResponse,
    RecallResultOut,
)
from drivebench.simulator.backend import RecallOutcome, Simulator
from drivebench.simulator.drive.errors import InvalidRequest, NotFound
from drivebench.simulator.drive.model import DocumentRec

router = APIRouter(tags=["recall"])

_ERRORS = {
    400: {"model": ErrorResponse, "description": "Malformed body, unknown user/role/department, bad filter."},
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "The token may not act as the principal named in the body."},
    422: {"model": ErrorResponse, "description": "A field has a wrong type or value (named in `fields`)."},
    503: {"model": ErrorResponse, "description": "The permission check failed: no results are returned."},
}


def body_schema(model: type) -> dict[str, object]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
        }
    }


def build_filter(sim: Simulator, filters: RecallFilters | None) -> Callable[[DocumentRec], bool] | None:
    """Turn request filters into a document predicate; a filter that cannot be applied raises (400)."""
    if filters is None or (filters.file_types is None and filters.folder is None):
        return None
    types = None
    if filters.file_types is not None:
        known = {d.file_type for d in sim.drive.documents.values()}
        unknown = sorted(set(filters.file_types) - known)
        if unknown or not filters.file_types:
            raise InvalidRequest(f"filters.file_types: unknown file type(s) {unknown}; known: {sorted(known)}")
        types = set(filters.file_types)
    folder_prefix = None
    if filters.folder is not None:
        try:
            node = sim.drive.folder_by_path(filters.folder.rstrip("/") or "/")
        except NotFound:
            raise InvalidRequest(f"filters.folder: no folder {filters.folder!r}") from None
        folder_prefix = sim.drive.folder_path(node.folder_id).rstrip("/") + "/"

    def keep(doc: DocumentRec) -> bool:
        if types is not None and doc.file_type not in types:
            return False
        return folder_prefix is None or sim.drive.doc_path(doc).startswith(folder_prefix)

    return keep


def to_response(req: RecallRequest, outcome: RecallOutcome, warnings: list[str]) -> RecallResponse:
    p = outcome.principal
    return RecallResponse(
        query=req.query,
        top_k=req.top_k,
        as_of=outcome.at,
        principal=PrincipalOut(
            user_id=p.user_id,
            roles=list(p.roles),
            department=p.department,
            clearance=SECRET_LEVELS[p.clearance],
            evaluated_as=p.evaluated_as,
            caller=p.caller,
        ),
        results=[
            RecallResultOut(
                rank=h.rank,
                doc_id=h.doc_id,
                version_id=h.version_id,
                name=h.name,
                path=h.path,
                file_type=h.file_type,
                score=h.score,
                chunk_id=h.chunk_id,
                snippet=h.snippet,
                part=h.part,
                secret_level=SECRET_LEVELS[h.secret_level],
            )
            for h in outcome.hits
        ],
        snapshot=outcome.snapshot,
        policy_version=outcome.policy_version,
        warnings=warnings,
    )


@router.post(
    "/api/mcp/recall",
    response_model=RecallResponse,
    responses=_ERRORS,  # type: ignore[arg-type]
    openapi_extra=body_schema(RecallRequest),
    summary="Permission-filtered recall (the vendor's shape)",
)
async def recall(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> RecallResponse:
    """Return at most `top_k` documents the principal may preview, one per document (its best chunk), by
    descending score. Accepts a JSON object with or without a Content-Type header (the vendor's curl)."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    req = RecallRequest.model_validate(await read_json_object(request))
    warnings = [f"ignored unknown field {k!r}" for k in sorted(req.model_extra or {})]
    principal = sim.principal_for(token, user_id=req.user_id, user_role=req.user_role, department=req.department)
    doc_filter = build_filter(sim, req.filters)
    outcome = await run_in_threadpool(sim.recall, principal, req.query, req.top_k, req.as_of, doc_filter)
    return to_response(req, outcome, warnings)
