"""under_fill_rate: short lists although the asker may see enough matching documents (post-filtering).

A target that takes a fixed top ``fetch_k`` without the permission filter and then drops what the asker may not
see (pgvector- or ACORN-style post-filtering) returns fewer than ``top_k`` results to users who see little of the
corpus: what they may see was outranked by what they may not before the filter ran.

Formula, per answered query ``q`` asked for ``top_k`` results, with ``n(q)`` the length of the returned list and
``m(q) = |{d : may_preview(q, d) ∧ d exists at q's time ∧ d matches q}|`` (the leak oracle's permitted
documents; *matches*: shares a distinctive term with the query, ``corpus_terms``)::

    under_filled(q) = 1 if n(q) < min(top_k, m(q)) else 0
    under_fill_rate = mean of under_filled(q) over the answered queries

That is: a list is short although the asker may preview ``top_k`` matching documents (the plain case), or
shorter than the matching documents the asker may preview (an asker who sees 5 matching documents and got 1:
the askers who see little are the ones a post-filter starves, and they rarely have ``top_k`` matching documents
at all; on acme-zh@3 the askers who see under 10 % of the corpus never do at ``top_k = 10``). A retriever that
returns every matching permitted document up to ``top_k`` (a clean BM25, or a dense ranking, which ranks them
all) never under-fills.

Edge cases:
* a full list (``n(q) >= top_k``) is never under-filled; ``m(q)`` is not even counted.
* a short list at least as long as the matching permitted documents is not under-filled: the target ran out of
  documents (a clean lexical retriever does).
* errored or missing queries are excluded (``None``): they returned nothing that says how the target filters.
* unmapped results count towards ``n(q)``: the target did return them.
* a target that never returned a full list is still measured (its askers did get short lists), with a ``note``:
  a cap below ``top_k`` under-fills every asker alike, a filter the ones who see little (the ``visible_share``
  stratum tells them apart). Over-restriction, which reads a short list as "nothing more to show", is not
  measured then.
* *not measured* (``None``, with the reason), never 0: without a corpus oracle that lists the permitted documents
  and the corpus's texts, when ``top_k`` is unknown (a run file scored offline), and when no query was answered.

``queries_under_filled`` counts the under-filled queries; ``upper_bound_95`` is the exact one-sided 95 % upper
bound of the rate over the judged queries (``leak_bound``: "0 of 55" is at most 5.3 %), None when none was judged. No public evaluator measures this; there is no external
reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drivebench.evaluator.metrics.leak_bound import upper_bound

DEFINITION = (
    "answered queries whose list held fewer results than min(top_k, the documents the asker may preview that "
    "share a distinctive term with the query)"
)


def under_filled(n_results: int, top_k: int, matching_permitted: int) -> bool:
    """One answered query (``matching_permitted``: how many permitted documents match it, counted up to ``top_k``)."""
    return n_results < min(top_k, matching_permitted)


def not_measured_reason(top_k: int | None, can_count: bool, answered: int) -> str | None:
    """Why the rate cannot be measured (``None``: it can)."""
    if not can_count:
        return "no corpus oracle to list the documents the asker may preview and their texts (--corpus)"
    if top_k is None:
        return "the depth the target was asked for (top_k) is unknown: a run scored offline"
    if not answered:
        return "no query was answered"
    return None


def section(
    per_query: Sequence[bool | None], top_k: int | None, reason: str | None, longest_list: int = 0
) -> dict[str, Any]:
    """``result["under_fill"]`` from each query's ``under_filled`` (``None``: not judged)."""
    base: dict[str, Any] = {"definition": DEFINITION, "top_k": top_k}
    if reason is not None or top_k is None:
        return {**base, "measured": False, "reason": reason or "top_k is unknown"}
    judged = [u for u in per_query if u is not None]
    n = sum(judged)
    out = {
        **base,
        "measured": True,
        "queries_judged": len(judged),
        "queries_under_filled": n,
        "under_fill_rate": n / len(judged) if judged else None,
        "upper_bound_95": upper_bound(n, len(judged)),  # a 0 says how sure it is, as the leak figures do
    }
    if longest_list < top_k:
        out["note"] = (
            f"the target never returned more than {longest_list} of the {top_k} results asked: a cap under-fills "
            "every asker alike, a filter the ones who see little (see the visible_share stratum)"
        )
    return out
