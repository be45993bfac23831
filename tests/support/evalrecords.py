"""Small builders for eval-set queries and run records."""

from __future__ import annotations

from typing import Any

from drivebench.formats.evalset import EvalQuery, RunRecord


def make_query(qid: str, gold: list[Any] = (), **kw: Any) -> EvalQuery:
    """``gold`` items: a doc id, or a dict ``{"doc_id", "version_id", "grade"}``."""
    kw.setdefault("user_role", "engineer")
    kw.setdefault("query", "项目X的技术方案审批人是谁?")
    gold_docs = [{"doc_id": g} if isinstance(g, str) else g for g in gold]
    return EvalQuery(query_id=qid, gold=gold_docs, **kw)


def make_record(qid: str, docs: list[Any] = (), **kw: Any) -> RunRecord:
    """``docs`` items: a doc id, ``(doc_id, version_id)``, or a result dict."""
    results = []
    for d in docs:
        if isinstance(d, str):
            results.append({"doc_id": d})
        elif isinstance(d, tuple):
            results.append({"doc_id": d[0], "version_id": d[1]})
        else:
            results.append(d)
    return RunRecord(query_id=qid, results=results, **kw)
