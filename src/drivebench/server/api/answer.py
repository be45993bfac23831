"""``POST /api/mcp/answer``: recall, then a deterministic extractive answer that cites its sources.

The answer is built only from the recall results of the same request (documents the principal may
preview), so it can never quote or cite a document the principal may not see.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials

from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.auth import bearer, current_token
from drivebench.server.api.body import read_json_object
from drivebench.server.api.recall import _ERRORS, body_schema, filter_args, to_response
from drivebench.server.api.schemas import AnswerRequest, AnswerResponse, CitationOut
from drivebench.simulator.answer import AnswerResult, compose_answer, levers_of
from drivebench.simulator.backend import RecallOutcome, Simulator
from drivebench.simulator.faults import request_key

router = APIRouter(tags=["answer"])


def recall_and_answer(sim: Simulator, principal: object, req: AnswerRequest) -> tuple[RecallOutcome, AnswerResult]:
    outcome = sim.recall(principal, req.query, req.top_k, req.as_of, **filter_args(req.filters))  # type: ignore[arg-type]
    # clean: the recall's own hits (FAULT answer-unfiltered-context: an unfiltered search, citing only recall's)
    context, citable = sim.answer_context(outcome, req.query, req.top_k, req.as_of, **filter_args(req.filters))
    # the server's answer levers (checked when the simulator was configured: see ``Simulator.__init__``)
    levers = levers_of(sim.config)
    return outcome, compose_answer(sim, context, req.query, req.citation_style, levers=levers, citable=citable)


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
        return cached  # type: ignore[no-any-return]
    principal = sim.principal_for(token, user_id=req.user_id, user_role=req.user_role, department=req.department)
    outcome, result = recall_and_answer(sim, principal, req)
    response = answer_response(req, outcome, result, warnings)
    sim.faults.keep_shared_answer(body_key, response)
    return response


@router.post(
    "/api/mcp/answer",
    response_model=AnswerResponse,
    responses=_ERRORS,  # type: ignore[arg-type]
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
