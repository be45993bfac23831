"""``POST /api/mcp/answer``: recall, then a deterministic extractive answer that cites its sources.

The answer is built only from the recall results of the same request (documents the principal may
preview), so it can never quote or cite a document the principal may not see.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials

from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.recall import _ERRORS, body_schema, recall_query, to_response
from drivebench.server.api.request import bearer, current_token, read_json_object
from drivebench.server.api.schemas import AnswerRequest, AnswerResponse, CitationOut
from drivebench.simulator.answer import AnswerResult
from drivebench.simulator.answer import service as answering
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import request_key
from drivebench.simulator.recall import RecallOutcome

router = APIRouter(tags=["answer"])


def answer_response(
    req: AnswerRequest, outcome: RecallOutcome, result: AnswerResult, warnings: list[str]
) -> AnswerResponse:
    base = to_response(req, outcome, warnings)
    return AnswerResponse(
        **dict(base),
        citation_style=req.citation_style,
        answer=result.text,
        citations=[
            CitationOut(doc_id=c.doc_id, version_id=c.version_id, name=c.name, marker=c.marker)
            for c in result.citations
        ],
    )


def answer_for(sim: Simulator, token: TokenInfo, req: AnswerRequest) -> AnswerResponse:
    """The whole request for one caller (used by the MCP ``answer`` tool too)."""
    warnings = [f"ignored unknown field {k!r}" for k in sorted(req.model_extra or {})]
    # FAULT shared-answer-cache: keyed by the body alone (clean: never cached); the caller is still authenticated
    body_key = request_key("answer", req.model_dump_json())
    cached = sim.faults.shared_answer(body_key)
    if cached is not None:
        return cached
    outcome, result = answering.answer_for(sim, token, recall_query(req), req.citation_style)
    response = answer_response(req, outcome, result, warnings)
    sim.faults.keep_shared_answer(body_key, response)
    return response


@router.post(
    "/api/mcp/answer",
    response_model=AnswerResponse,
    responses=_ERRORS,
    openapi_extra=body_schema(AnswerRequest),
    summary="Recall plus an extractive answer citing its sources",
)
async def answer(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> AnswerResponse:
    """The recall request plus `citation_style` (`brackets`: [file name], `ids`: [[doc-id]], `footnotes`:
    [^n] with a reference list). Returns the recall response plus `answer` and `citations`: sentences of
    the top permitted results, each followed by the marker of the document it comes from."""
    sim: Simulator = request.app.state.sim
    token = current_token(request, credentials)
    req = AnswerRequest.model_validate(await read_json_object(request))
    return await run_in_threadpool(answer_for, sim, token, req)
