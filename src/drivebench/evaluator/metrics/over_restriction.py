"""Over-restriction: documents the asker may see that the target withheld (the opposite of a leak).

Definition, per answered query, with ``permitted = {g ∈ gold : may_preview(q, g)}`` (the leak oracle, at the
query's time) and ``returned`` the documents of the target's whole list (it was asked for ``top_k``):

* ``permitted ⊆ returned``: judged, nothing withheld;
* some permitted gold document not returned and the list is **short** (fewer than ``top_k`` results): judged,
  and each such document was **withheld**: the target had nothing more it was willing to show, so the document
  was not outranked by others, it was filtered out (a narrower ACL than the drive's, for instance);
* some permitted gold document not returned and the list is **full** (``top_k`` results): **not judged**: the
  document may have been outranked (a ranking miss, which Hit Rate counts) or withheld; the run alone cannot tell
  them apart, so the query is counted as not judged, never as "not over-restricted";
* no permitted gold document (no gold, or every gold document forbidden: a refusal): not judged.

``queries_over_restricted`` counts the judged queries that withheld a document; ``documents`` lists the withheld
documents (distinct, the number of queries that withheld each). It is *not measured* (``None``, with the reason)
without a leak oracle, when ``top_k`` is unknown (a run file scored offline), when no query was judged, or when
the target never returned a full list (a target that caps its lists below ``top_k`` makes every list short:
shortness then says nothing).

Edge cases: errored or missing queries are not judged (they returned nothing). Unmapped results count towards
the list's length (the target did return them). Duplicate chunks of one document: one document.

No public evaluator measures this; there is no external reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

DEFINITION = (
    "permitted gold documents (the leak oracle) missing from an answered query's result list when the list held "
    "fewer results than top_k; a miss in a full list may be ranking and is not judged"
)


def withheld(permitted: Sequence[str], returned: Sequence[str], n_results: int, top_k: int) -> list[str] | None:
    """The permitted documents one query withheld; ``None`` when the query cannot be judged (see the module)."""
    if not permitted:
        return None
    missing = [d for d in dict.fromkeys(permitted) if d not in set(returned)]
    if not missing:
        return []
    return missing if n_results < top_k else None


def section(
    per_query: Sequence[list[str] | None],
    longest_list: int,
    top_k: int | None,
    named: Callable[[str], dict[str, Any]],
) -> dict[str, Any]:
    """``result["over_restriction"]`` from each answered query's ``withheld`` (``None``: not judged)."""
    judged = [w for w in per_query if w is not None]
    base: dict[str, Any] = {"definition": DEFINITION, "top_k": top_k}
    reason = None
    if top_k is None:
        reason = "the depth the target was asked for (top_k) is unknown: a run scored offline"
    elif not judged:
        reason = "no answered query could be judged (each missed a permitted gold document in a full list)"
    elif longest_list < top_k:
        reason = f"the target never returned more than {longest_list} of the {top_k} results asked: a short list "
        reason += "does not show it ran out of documents"
    if reason is not None:
        return {**base, "measured": False, "reason": reason}
    per_doc = Counter(d for w in judged for d in w)
    return {
        **base,
        "measured": True,
        "queries_judged": len(judged),
        "queries_not_judged": sum(1 for w in per_query if w is None),
        "queries_over_restricted": sum(1 for w in judged if w),
        "documents": [{"doc_id": d, "queries": n, **named(d)} for d, n in per_doc.most_common()],
    }
