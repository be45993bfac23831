"""``POST /api/mcp/recall``: the vendor-shaped, permission-filtered recall endpoint."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic_core import to_json
from starlette.types import ASGIApp, Receive, Scope, Send

from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.server.api.boundary import RENDERED, handle_error
from drivebench.server.api.request import bearer, current_token, read_json_object
from drivebench.server.api.schemas import (
    API_VERSION,
    ErrorResponse,
    RecallRequest,
    RecallResponse,
)
from drivebench.simulator.backend import Simulator
from drivebench.simulator.recall import RecallOutcome, RecallQuery, recall_for

router = APIRouter(tags=["recall"])
RECALL_PATH = "/api/mcp/recall"
INLINE_PIPELINES = frozenset({"bm25"})  # pipelines whose recall runs on the event loop when the index is in sync

_ERRORS: dict[int | str, dict[str, Any]] = {
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


def recall_query(req: RecallRequest) -> RecallQuery:
    """The request as the simulator's ``RecallQuery`` (the domain judges the principal and the filters)."""
    filters = req.filters
    return RecallQuery(
        req.query,
        req.top_k,
        user_id=req.user_id,
        user_role=req.user_role,
        department=req.department,
        as_of=req.as_of,
        file_types=None if filters is None else filters.file_types,
        folder=None if filters is None else filters.folder,
    )


def recall_fields(req: RecallRequest, outcome: RecallOutcome, warnings: list[str]) -> dict[str, Any]:
    """The recall response as plain data, keys in ``RecallResponse`` field order: the one place its values are
    taken from the outcome (``to_response`` validates it into the model, ``recall_json`` writes it as is)."""
    p = outcome.principal
    return {
        "api_version": API_VERSION,
        "query": req.query,
        "top_k": req.top_k,
        "as_of": outcome.at,
        "principal": {
            "user_id": p.user_id,
            "roles": list(p.roles),
            "department": p.department,
            "clearance": SECRET_LEVELS[p.clearance],
            "evaluated_as": p.evaluated_as,
            "caller": p.caller,
        },
        "results": [
            {
                "rank": h.rank,
                "doc_id": h.doc_id,
                "version_id": h.version_id,
                "name": h.name,
                "path": h.path,
                "file_type": h.file_type,
                "score": h.score,
                "chunk_id": h.public_chunk_id,
                "snippet": h.snippet,
                "part": h.part,
                "secret_level": SECRET_LEVELS[h.secret_level],
            }
            for h in outcome.hits
        ],
        "snapshot": outcome.snapshot,
        "policy_version": outcome.policy_version,
        "warnings": warnings,
    }


def to_response(req: RecallRequest, outcome: RecallOutcome, warnings: list[str]) -> RecallResponse:
    return RecallResponse.model_validate(recall_fields(req, outcome, warnings))


def recall_json(req: RecallRequest, outcome: RecallOutcome, warnings: list[str]) -> bytes:
    """``to_response(...).model_dump_json()``, byte for byte, without building the 12 models: pydantic-core's
    serializer writes the same values the same way from plain data (tests/api/test_recall_encoding.py proves
    it equal); ~0.2 ms less per recall over HTTP."""
    return to_json(recall_fields(req, outcome, warnings))


@router.post(
    RECALL_PATH,
    response_model=RecallResponse,
    responses=_ERRORS,
    # the bearer scheme is declared here and read in the body (``await bearer(request)``, the same code):
    # FastAPI's dependency solving cost ~0.1 ms per request
    openapi_extra={**body_schema(RecallRequest), "security": [{bearer.scheme_name: []}]},
    summary="Permission-filtered recall (the vendor's shape)",
)
async def recall(request: Request) -> Response:
    """Return at most `top_k` documents the principal may preview, one per document (its best chunk), by
    descending score. Accepts a JSON object with or without a Content-Type header (the vendor's curl)."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, await bearer(request))
    req = RecallRequest.model_validate(await read_json_object(request))
    warnings = [f"ignored unknown field {k!r}" for k in sorted(req.model_extra or {})]
    call = partial(recall_for, sim, token, recall_query(req))  # who the token acts as, then the recall
    # a reranker encodes the query (model code): never on the event loop
    inline = sim.retriever.pipeline in INLINE_PIPELINES and sim.reranker is None
    if inline and req.as_of is None and sim.index_in_sync():
        # a lexical recall at the current instant (a past as_of may build that time's engine) with
        # nothing to index first is short CPU-only work that waits on no I/O and no write (~1 ms at 300
        # documents): run it here, without the threadpool hand-off (measured 0.08-0.13 ms). Query embeddings
        # (dense, hybrid), past instants and recalls right after a write run in the pool.
        outcome = call()
    else:
        outcome = await run_in_threadpool(call)
    # the body is written here (``recall_json``: the model's JSON, without building the model); returning a
    # Response skips FastAPI's validation + encoding pass; the decorator's response_model documents it
    return Response(recall_json(req, outcome, warnings), media_type="application/json")


class RecallFastPath:
    """``POST /api/mcp/recall`` as a pure ASGI route: the innermost of the app's own middleware (inside the
    boundary's body checks and the fault layer) hands it straight to ``recall`` above, the declared route's own
    endpoint, and renders the errors the app renders (``boundary.RENDERED``) with the app's one renderer,
    ``boundary.handle_error``; anything else propagates to the boundary's 500, as it would from the route. It skips
    the framework's per-request routing and request handling (0.1-0.2 ms per recall, see bench_recall_http). The
    declared route serves the OpenAPI document and, with ``create_app(..., recall_fast_path=False)``, the same
    requests; the tests compare the two byte for byte."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != RECALL_PATH:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive, send)
        try:
            response: Response = await recall(request)
        except RENDERED as exc:
            response = await handle_error(request, exc)
        await response(scope, receive, send)
