"""Extractive answers with citations, built only from recall's permitted hits (``compose_answer``)."""

from drivebench.simulator.answer.compose import (
    CITATION_STYLES,
    AnswerResult,
    CitationRec,
    compose_answer,
    split_sentences,
)

__all__ = ["CITATION_STYLES", "AnswerResult", "CitationRec", "compose_answer", "split_sentences"]
