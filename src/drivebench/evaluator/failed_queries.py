"""The queries of a run that missed (no gold document in the top K) or leaked, by name.

``metrics.json``'s ``per_query`` has numbers only; a reader who has to fix a miss needs the question, who asked
it, the gold documents and what came back instead, by name and path (from the document catalog: ``--corpus``
or the simulator's corpus; without one the rows carry ids only and ``catalog`` is False). Computed where the
eval set, the run records and the catalog are all at hand (``evaluate``); the reports and JUnit render it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.leak_causes import UNEXPLAINED, leaked_causes
from drivebench.evaluator.leak_causes import group as group_leaks
from drivebench.formats.evalset import EvalQuery, RunRecord

FAILED_QUERIES_JSONL = "failed_queries.jsonl"
# why a document may not be previewed: the leak oracle's reasons, each ``(cause, text)`` (``leak_causes``)
Explain = Callable[[EvalQuery, str], Sequence[tuple[str, str]]]
TOP_N = 3  # the top results shown per row: enough to see what the pipeline preferred
STORED_ROWS = 50  # rows kept in metrics.json (the reports show as many); the full list is the JSONL file


def main_k(ks: Sequence[int]) -> int:
    """The K the reports judge a miss at: 10 when evaluated, else the largest K (as the strata tables)."""
    return 10 if 10 in ks else (max(ks) if ks else 10)


def _doc(doc_id: str, catalog: Catalog | None) -> dict[str, Any]:
    d = catalog.get(doc_id) if catalog is not None else None
    return {"doc_id": doc_id, "name": d.name if d is not None and d.name else None, "path": d.path if d else None}


def leaked_doc(q: EvalQuery | None, doc_id: str, catalog: Catalog | None, explain: Explain | None) -> dict[str, Any]:
    """A document ``q``'s asker may not preview: its name and path, and (with ``explain``) ``why`` and ``causes``."""
    out = _doc(doc_id, catalog)
    if explain is not None and q is not None:
        try:
            reasons = [(str(cause), str(text)) for cause, text in explain(q, doc_id)]
        except Exception as exc:  # an explanation that cannot be given must not cost the run its results
            reasons = [(UNEXPLAINED, f"no explanation ({type(exc).__name__}: {exc})")]
        out["why"] = [text for _, text in reasons]
        out["causes"] = leaked_causes(reasons)
    return out


def explainer(oracle: Any, queries: Sequence[EvalQuery]) -> Explain | None:
    """The ``reasons`` of a leak oracle (the corpus's, or the eval set's lists when ``oracle`` is ``"evalset"``); an
    oracle with only ``explain`` gives its texts with the cause ``unexplained``."""
    if oracle == "evalset":
        if not any(q.forbidden or q.allowed is not None for q in queries):
            return None
        from drivebench.evaluator.metrics.leak_rate import oracle_from_evalset

        oracle = oracle_from_evalset(queries)
    reasons = getattr(oracle, "reasons", None)
    if callable(reasons):
        return reasons
    explain = getattr(oracle, "explain", None)
    if not callable(explain):
        return None
    return lambda q, doc_id: [(UNEXPLAINED, str(text)) for text in explain(q, doc_id)]


def failed_query_rows(
    queries: Sequence[EvalQuery],
    records: Sequence[RunRecord],
    per_query: Sequence[Mapping[str, Any]],
    k: int,
    catalog: Catalog | None,
    explain: Explain | None = None,
) -> list[dict[str, Any]]:
    """One row per answered query with no gold document in the top ``k`` (``miss``), a leak (``leak``) or an answer
    stating a fact its asker may not know (``answer_leak``: ``answer_leaked``, from scoring), in eval-set order. A query that failed (an error) is not here: the errors table has it. With ``explain`` (the leak
    oracle's), each leaked document carries ``why``: the reasons its asker may not see it (the grant and deny
    chain, the clearance veto, a grant out of its validity)."""
    by_id = {q.query_id: q for q in queries}
    recs = {r.query_id: r for r in records}
    rows: list[dict[str, Any]] = []
    for pq in per_query:
        if pq.get("status") != "ok":
            continue
        qid = str(pq.get("query_id"))
        leaked = [str(d) for d in pq.get("leaked") or []]
        stated = list(pq.get("answer_leaked") or [])  # answer leaks, already named and explained by scoring
        missed = pq.get(f"hit_rate@{k}") == 0.0
        if not (missed or leaked or stated):
            continue
        q = by_id.get(qid)
        rec = recs.get(qid)
        hits = rec.results[:TOP_N] if rec is not None else []
        rows.append(
            {
                "query_id": qid,
                "question": q.query if q else None,
                "asker": (q.user_id or f"role:{q.user_role}") if q else None,
                "problems": [
                    p for p, on in (("miss", missed), ("leak", bool(leaked)), ("answer_leak", bool(stated))) if on
                ],
                "k": k,
                "gold": [_doc(d, catalog) for d in (q.gold_ids if q else [])],
                "top": [{"rank": i, "score": h.score, **_doc(h.doc_id, catalog)} for i, h in enumerate(hits, 1)],
                "leaked": [leaked_doc(q, d, catalog, explain) for d in leaked],
                **({"answer_leaked": stated} if stated else {}),
            }
        )
    return rows


def summary(rows: list[dict[str, Any]], k: int, catalog: Catalog | None) -> dict[str, Any]:
    """``result["failed_queries"]``: every row in memory (JUnit, the reports of this run); ``metrics.json`` keeps
    the first ``STORED_ROWS`` (``stored_for_file``)."""
    return {"k": k, "total": len(rows), "catalog": catalog is not None, "file": FAILED_QUERIES_JSONL, "rows": rows}


def attach(
    result: dict[str, Any],
    queries: Sequence[EvalQuery],
    records: Sequence[RunRecord],
    ks: Sequence[int],
    catalog: Catalog | None,
    oracle: Any = None,
) -> dict[str, Any]:
    """Store ``result["failed_queries"]`` for a scored run (``result["per_query"]`` from ``score``); ``oracle``: the
    leak oracle the run was scored with, whose ``explain`` says why each leaked document may not be seen."""
    k = main_k([int(x) for x in ks])
    explain = explainer(oracle, queries)
    rows = failed_query_rows(queries, records, result["per_query"], k, catalog, explain)
    result["failed_queries"] = summary(rows, k, catalog)
    group_leaks(result, rows)  # the leak table by cause, each leaked document with why
    return result


def stored_for_file(section: Mapping[str, Any]) -> dict[str, Any]:
    return {**section, "rows": list(section.get("rows") or [])[:STORED_ROWS]}


def write_failed_queries(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
