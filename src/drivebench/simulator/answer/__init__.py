"""Extractive answers with citations, built only from recall's permitted hits (``compose_answer``); the
answer for one caller (``answer_for``: recall, then compose)."""

from drivebench.simulator.answer.compose import (
    CITATION_STYLES,
    AnswerResult,
    CitationRec,
    compose_answer,
    split_sentences,
)
from drivebench.simulator.answer.levers import CITATION_MODES, AnswerLevers, levers_of, parse_citation
from drivebench.simulator.answer.service import answer_for, answer_outcome

__all__ = [
    "CITATION_MODES",
    "CITATION_STYLES",
    "AnswerLevers",
    "AnswerResult",
    "CitationRec",
    "answer_for",
    "answer_outcome",
    "compose_answer",
    "levers_of",
    "parse_citation",
    "split_sentences",
]
