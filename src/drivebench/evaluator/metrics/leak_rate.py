"""leak_rate@K: how often a query's principal is shown something it may not preview.

Formula: ``leak@K(q) = 1 if some result in top K of q is not previewable by q's principal else 0``;
``leak_rate@K`` is the mean over every **answered** query of the eval set (gold or not): a failed
query showed nothing that can be judged, so it is excluded (never counted as "did not leak"). The leaked
documents (distinct, over the whole returned list, not only top K) are reported per query
(``per_query[].leaked``) and in total (``leaks.documents``: doc id, number of queries it leaked to,
secret level from the catalog or ``"unknown"``); ``leaks.by_secret_level`` counts (query, leaked
document) pairs per secret level.

The permission oracle is a callable ``may_preview(query, doc_id) -> bool``. The simulator builds
one from its Casbin policies. For an external system, ``oracle_from_evalset(queries)`` builds one
from the eval set alone:

* a doc listed in the query's ``forbidden`` is not previewable;
* if the query gives ``allowed``, anything outside it is not previewable;
* otherwise an unknown doc counts as previewable (the eval set cannot know better: leaks of
  documents it does not mention are not detected).

An eval set where no query has ``forbidden`` or ``allowed`` gives no oracle at all: leaks are
"not measured" (``scoring``), never 0.

Edge cases:
* empty result list: nothing was shown, so 0.
* errored / missing query: excluded (``NaN``); with no answered query the rate is ``None``.
* unmapped results (``idmap``: not a document of the corpus): not judged, counted elsewhere.
* no gold: irrelevant; the query still counts.
* ties: not re-sorted. Duplicate chunks of one leaked file: one leaked document.
* fewer results than K: only the results present are checked.
* no oracle: ``leak_rate@K`` is ``None`` (not 0).

No public retrieval evaluator measures this; there is no external reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from drivebench.formats.evalset import EvalQuery

Oracle = Callable[[EvalQuery, str], bool]


class EvalsetOracle:
    """``may_preview`` from each query's ``forbidden`` and ``allowed`` lists (see the module docs).

    Besides the per-document call it answers ``denied(query, doc_ids)`` with set operations, which
    the orchestrator uses when an oracle offers it (any oracle may implement that method).
    """

    description = "the eval set's forbidden/allowed lists (documents the lists do not name are not judged)"

    def __init__(self, queries: Iterable[EvalQuery] = ()) -> None:
        self._rules: dict[str, tuple[frozenset[str], frozenset[str] | None]] = {}
        for q in queries:
            self._rules[q.query_id] = self._rule(q)

    @staticmethod
    def _rule(q: EvalQuery) -> tuple[frozenset[str], frozenset[str] | None]:
        return frozenset(q.forbidden), None if q.allowed is None else frozenset(q.allowed)

    def __call__(self, query: EvalQuery, doc_id: str) -> bool:
        forbidden, allowed = self._rules.get(query.query_id) or self._rule(query)
        return doc_id not in forbidden and (allowed is None or doc_id in allowed)

    def explain(self, query: EvalQuery, doc_id: str) -> list[str]:
        """Why ``doc_id`` may not be previewed: which of the query's lists says so (``[]`` when it may)."""
        return [text for _, text in self.reasons(query, doc_id)]

    def reasons(self, query: EvalQuery, doc_id: str) -> list[tuple[str, str]]:
        """``explain``'s reasons as ``(cause, text)``: ``evalset_forbidden`` or ``evalset_not_allowed``."""
        forbidden, allowed = self._rules.get(query.query_id) or self._rule(query)
        out = []
        if doc_id in forbidden:
            out.append(
                ("evalset_forbidden", f"the eval set lists {doc_id} among query {query.query_id}'s forbidden documents")
            )
        if allowed is not None and doc_id not in allowed:
            out.append(
                (
                    "evalset_not_allowed",
                    f"{doc_id} is not among query {query.query_id}'s allowed documents (the eval set)",
                )
            )
        return out

    def denied(self, query: EvalQuery, doc_ids: Iterable[str]) -> set[str]:
        """The documents among ``doc_ids`` the query's principal may not preview."""
        forbidden, allowed = self._rules.get(query.query_id) or self._rule(query)
        docs = set(doc_ids)
        out = docs & forbidden
        if allowed is not None:
            out |= docs - allowed
        return out


def oracle_from_evalset(queries: Iterable[EvalQuery]) -> EvalsetOracle:
    """A ``may_preview`` built from each query's ``forbidden`` and ``allowed`` lists."""
    return EvalsetOracle(queries)


def leaked_docs(ranked: Sequence[str], previewable: Callable[[str], bool], k: int | None = None) -> list[str]:
    """Distinct documents in the first ``k`` results (all when ``None``) that may not be previewed."""
    return [d for d in dict.fromkeys(ranked[:k] if k is not None else ranked) if not previewable(d)]


def leak(ranked: Sequence[str], previewable: Callable[[str], bool], k: int) -> float:
    return 1.0 if leaked_docs(ranked, previewable, k) else 0.0


def leak_batch(denied: np.ndarray, k: int) -> np.ndarray:
    """Per-query leak@K from a ``(queries, depth)`` boolean matrix (True = slot not previewable)."""
    return np.asarray(denied[:, :k].any(axis=1), dtype=np.float64)
