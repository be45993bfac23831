"""``ProgressOracle(oracle, step)`` wraps any leak oracle to call ``step(done)`` after each query it has judged
(scoring asks once per query, ``denied(q, doc_ids)``): the scoring progress bar. Apart from the corpus oracle,
so that a run without one never loads the permission engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from drivebench.formats.evalset import EvalQuery

_FORWARDED = ("visible_share", "matching_permitted", "corpus_terms")


class ProgressOracle:
    """``oracle`` answering the same, calling ``step(done)`` after each query it judged through ``denied``."""

    def __init__(self, oracle: Callable[[EvalQuery, str], bool], step: Callable[[int], None]) -> None:
        self.oracle, self.step, self.done = oracle, step, 0
        self.description = getattr(oracle, "description", "a custom oracle callable")

    def __call__(self, q: EvalQuery, doc_id: str) -> bool:
        return self.oracle(q, doc_id)

    def __getattr__(self, name: str) -> Any:
        """The wrapped oracle's visibility questions (``visible_share``, ``matching_permitted``, ``corpus_terms``),
        when it has them."""
        if name in _FORWARDED:
            return getattr(self.oracle, name)
        raise AttributeError(name)

    def explain(self, q: EvalQuery, doc_id: str) -> list[str]:
        """The wrapped oracle's reasons ``doc_id`` may not be previewed (``[]`` when it cannot say)."""
        explain = getattr(self.oracle, "explain", None)
        return list(explain(q, doc_id)) if explain is not None else []

    def reasons(self, q: EvalQuery, doc_id: str) -> list[tuple[str, str]]:
        """The wrapped oracle's reasons with their causes (``unexplained`` when it only gives texts)."""
        reasons = getattr(self.oracle, "reasons", None)
        if reasons is not None:
            return list(reasons(q, doc_id))
        return [("unexplained", text) for text in self.explain(q, doc_id)]

    def denied(self, q: EvalQuery, doc_ids: Sequence[str]) -> list[str]:
        """The documents of ``doc_ids`` the query's principal may not preview (the scoring's batch call)."""
        batch = getattr(self.oracle, "denied", None)
        bad = list(batch(q, doc_ids)) if batch is not None else [d for d in doc_ids if not self.oracle(q, d)]
        self.done += 1
        self.step(self.done)
        return bad
