"""Extractive answers with citations, built only from recall's permitted hits (``compose_answer``)."""

from drivebench.simulator.answer.compose import CITATION_STYLES, AnswerResult, CitationRec, compose_answer

__all__ = ["CITATION_STYLES", "AnswerResult", "CitationRec", "compose_answer"]
