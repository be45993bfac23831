"""The answer behind every door that answers (``POST /api/mcp/answer``, the MCP ``answer`` tool, the in-process
target): recall as the caller (``recall.recall_for``), then an extractive answer composed only from what may be
shown (``compose_answer``) with the server's answer levers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from drivebench.simulator.answer.compose import AnswerResult, compose_answer
from drivebench.simulator.answer.levers import levers_of
from drivebench.simulator.recall import RecallHost, RecallOutcome, RecallQuery, answer_context, recall_for

if TYPE_CHECKING:
    from drivebench.drive.tokens import TokenInfo
    from drivebench.simulator.config import SimConfig


class AnswerHost(RecallHost, Protocol):
    """What answering reads: what recall reads, plus the configuration that holds the answer levers."""

    config: SimConfig


def answer_outcome(host: AnswerHost, outcome: RecallOutcome, query: RecallQuery, citation_style: str) -> AnswerResult:
    """The answer to ``outcome``'s recall. Clean: composed from its own hits (FAULT answer-unfiltered-context: an
    unfiltered search, citing only recall's: ``recall.answer_context``)."""
    context, citable = answer_context(host, outcome, query)
    # the server's answer levers (checked when the simulator was configured: see ``Simulator.__init__``)
    levers = levers_of(host.config)
    return compose_answer(host, context, query.query, citation_style, levers=levers, citable=citable)


def answer_for(
    host: AnswerHost, token: TokenInfo, query: RecallQuery, citation_style: str
) -> tuple[RecallOutcome, AnswerResult]:
    """The whole answer for one caller: the recall as the token acts, then its answer."""
    outcome = recall_for(host, token, query)
    return outcome, answer_outcome(host, outcome, query, citation_style)
