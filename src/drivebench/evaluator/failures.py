"""Failed queries and unmapped results, counted for ``metrics.json`` (shown first in every report).

``errors_section(aligned)`` gives::

    {"queries": 40, "answered": 37, "failed": 3, "rate": 0.075,
     "by_kind": {"http_500": {"count": 2, "meaning": "...", "sample": "HTTP 500: ...", "queries": ["q3", "q9"]},
                 "missing": {...}}}

A query failed when its record has an ``error`` (kind from ``error_kind``, else guessed from the
message of an older run file) or when the run has no record for it (``missing``). ``rate`` is
``failed / queries`` (0 for an empty eval set).

``unmapped_section(aligned)`` counts results whose id did not map to a corpus document
(``idmap``): ``{"results", "queries", "reasons": {reason: n}, "samples": [foreign ids]}``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from drivebench.evaluator.metrics._run import Aligned, is_timeout
from drivebench.formats.target import ERROR_KINDS, http_error_kind

_HTTP = re.compile(r"\b(?:HTTP|MCP) (\d{3})\b")
SAMPLE_QUERIES = 5


def classify(message: str) -> str:
    """The kind of an error from its message (run files written before ``error_kind`` existed)."""
    m = _HTTP.search(message)
    if m:
        return http_error_kind(int(m.group(1)))
    if is_timeout(message):
        return "timeout"
    low = message.lower()
    if "connect" in low:
        return "connection"
    if "not json" in low or "no json" in low:
        return "not_json"
    if "results path" in low or "has no list" in low or "has no '" in low:
        return "bad_shape"
    return "other"


def errors_section(al: Aligned) -> dict[str, Any]:
    kinds: dict[str, dict[str, Any]] = {}
    for q, status, rec in zip(al.queries, al.status, al.records, strict=True):
        if status == "ok":
            continue
        if rec is None:
            kind, message = "missing", "no record for this query in the run"
        else:
            message = rec.error or "error"
            kind = rec.error_kind if rec.error_kind in ERROR_KINDS else classify(message)
        entry = kinds.setdefault(
            kind, {"count": 0, "meaning": ERROR_KINDS.get(kind, ""), "sample": message[:300], "queries": []}
        )
        entry["count"] += 1
        if len(entry["queries"]) < SAMPLE_QUERIES:
            entry["queries"].append(q.query_id)
    n = len(al.queries)
    failed = sum(e["count"] for e in kinds.values())
    order = list(ERROR_KINDS)
    # a retried query that then answered is a success, but a flaky target: how many, and how often
    retried = [int(getattr(rec, "retries", 0) or 0) for rec in al.records if rec is not None]
    return {
        "queries": n,
        "answered": n - failed,
        "failed": failed,
        "rate": (failed / n) if n else 0.0,
        "retries": {"total": sum(retried), "queries": sum(1 for r in retried if r > 0), "max": max(retried, default=0)},
        "by_kind": dict(sorted(kinds.items(), key=lambda kv: (-kv[1]["count"], order.index(kv[0])))),
    }


def unmapped_section(al: Aligned) -> dict[str, Any]:
    results = 0
    queries = 0
    reasons: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    for rec in al.records:  # errored records too: an all-unmapped response is an ``unmapped`` error
        hits = rec.results if rec is not None else []
        bad = [h for h in hits if (h.model_extra or {}).get("unmapped")]
        if bad:
            queries += 1
            results += len(bad)
            for h in bad:
                extra = h.model_extra or {}
                reasons[str(extra.get("unmapped_reason") or "unmapped")] += 1
                samples[str(extra.get("foreign_id") or h.doc_id)] += 1
    return {
        "results": results,
        "queries": queries,
        "reasons": dict(reasons.most_common()),
        "samples": [{"id": k, "results": v} for k, v in samples.most_common(20)],
    }
