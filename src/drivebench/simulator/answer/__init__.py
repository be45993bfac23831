"""Extractive answers with citations, built only from recall's permitted hits (``compose_answer``)."""

from drivebench.simulator.answer.compose import (
    CITATION_STYLES,
    AnswerResult,
    CitationRec,
    compose_answer,
    split_sentences,
)
from drivebench.simulator.answer.levers import CITATION_MODES, AnswerLevers, levers_of, parse_citation

__all__ = [
    "CITATION_MODES",
    "CITATION_STYLES",
    "AnswerLevers",
    "AnswerResult",
    "CitationRec",
    "compose_answer",
    "levers_of",
    "parse_citation",
    "split_sentences",
]
