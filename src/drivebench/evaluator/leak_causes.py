"""Why documents leaked, grouped by cause: the leak tables of metrics.json and the reports.

Each reason the leak oracle gives for a (query, leaked document) pair carries a cause (``DriveOracle.reasons``: read
off the permission model's own decision, never re-derived here; ``EvalsetOracle.reasons`` for the eval set's
lists). ``leaked_causes`` reduces a pair's reasons to its causes: ``no_grant`` ("no grant in force") is kept only
when no more specific cause explains the missing allow (an expired or not yet valid grant, a folder that breaks
inheritance). ``group`` adds to ``result["leaks"]`` the pairs and distinct documents per cause (``by_cause``; a
pair with several causes counts under each) and, per leaked document, its causes and the reasons its askers may
not see it (``causes``, ``why``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

DENY, CLEARANCE, EXPIRED, NOT_YET_VALID = "deny", "clearance", "expired", "not_yet_valid"
INHERITANCE_BROKEN, NO_GRANT, UNKNOWN, UNEXPLAINED = "inheritance_broken", "no_grant", "unknown_document", "unexplained"
CAUSES: dict[str, str] = {  # in the order the tables list them: what blocks an allow first
    DENY: "an explicit deny",
    CLEARANCE: "secret level above the asker's clearance",
    EXPIRED: "grant expired",
    NOT_YET_VALID: "grant not yet valid",
    INHERITANCE_BROKEN: "inheritance broken above the document",
    NO_GRANT: "no grant reaches the asker",
    UNKNOWN: "not a document of the corpus",
    "evalset_forbidden": "forbidden by the eval set",
    "evalset_not_allowed": "not in the eval set's allowed list",
    UNEXPLAINED: "no explanation from the oracle",
}
_SPECIFIC_ALLOW = {EXPIRED, NOT_YET_VALID, INHERITANCE_BROKEN}
WHY_KEPT = 3  # reasons kept per leaked document: its askers may differ, and the first few say enough


def leaked_causes(reasons: Iterable[tuple[str, str]]) -> list[str]:
    """The distinct causes of one leaked pair, in ``CAUSES`` order (``[UNEXPLAINED]`` when there is no reason)."""
    found = {cause for cause, _ in reasons}
    if found & _SPECIFIC_ALLOW:
        found.discard(NO_GRANT)
    order = list(CAUSES)
    return sorted(found, key=lambda c: order.index(c) if c in order else len(order)) or [UNEXPLAINED]


def label(cause: str) -> str:
    return CAUSES.get(cause, cause)


def group(result: dict[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    """Add ``by_cause`` to ``result["leaks"]`` and ``causes``/``why`` to each of its documents, from the leaked
    documents of the failed-query ``rows`` (every leaking answered query is a row). No leaks section: nothing."""
    leaks = result.get("leaks")
    if not isinstance(leaks, dict):
        return
    pairs: Counter[str] = Counter()
    docs_per_cause: dict[str, set[str]] = {}
    doc_causes: dict[str, Counter[str]] = {}
    doc_why: dict[str, list[str]] = {}
    for row in rows:
        for d in row.get("leaked") or []:
            doc_id = str(d.get("doc_id"))
            causes = list(d.get("causes") or [UNEXPLAINED])
            pairs.update(causes)
            for cause in causes:
                docs_per_cause.setdefault(cause, set()).add(doc_id)
            doc_causes.setdefault(doc_id, Counter()).update(causes)
            why = doc_why.setdefault(doc_id, [])
            why += [w for w in d.get("why") or [] if w not in why][: WHY_KEPT - len(why)]
    order = list(CAUSES)
    leaks["by_cause"] = [
        {"cause": c, "label": label(c), "leaks": pairs[c], "documents": len(docs_per_cause[c])}
        for c in sorted(pairs, key=lambda c: order.index(c) if c in order else len(order))
    ]
    for d in leaks.get("documents") or []:
        doc_id = str(d.get("doc_id"))
        d["causes"] = [c for c, _ in doc_causes.get(doc_id, Counter({UNEXPLAINED: 1})).most_common()]
        d["why"] = doc_why.get(doc_id, [])
