"""Score a run against an eval set: ``score(queries, run) -> metrics.json`` dict, and ``compare``.

The orchestrator computes per-query values once (as float columns, ``NaN`` = excluded) and then
aggregates them for the whole set, for each stratum and for bootstrap CIs. See
``drivebench.evaluator.metrics`` for the metric definitions and conventions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from drivebench.evaluator.metrics import _aggregate as agg
from drivebench.evaluator.metrics._common import gain_matrix, grade_map, ideal_matrix
from drivebench.evaluator.metrics.hit_rate import hit_rate_batch
from drivebench.evaluator.metrics.mrr import mrr_batch
from drivebench.evaluator.metrics.ndcg import ndcg_batch
from drivebench.evaluator.metrics.recall import recall_batch
from drivebench.evaluator.schema import EvalQuery, RunHit, RunRecord
from drivebench.evaluator.stats import RESAMPLES, paired_compare

METRICS_FORMAT = "drivebench-metrics/1"
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
Oracle = Callable[[EvalQuery, str], bool]


def is_timeout(error: str) -> bool:
    """An error counts as a timeout when its text mentions one."""
    e = error.lower()
    return "timeout" in e or "timed out" in e


@dataclass
class Aligned:
    """The run re-ordered to the eval set: one entry per query, in eval-set order."""

    queries: list[EvalQuery]
    status: list[str]  # "ok" | "error" | "missing"
    records: list[RunRecord | None]
    hits: list[list[RunHit]]  # [] for errored or missing queries
    counts: dict[str, int] = field(default_factory=dict)

    def top_ids(self, depth: int) -> list[list[str]]:
        return [[h.doc_id for h in hits[:depth]] for hits in self.hits]


def align(queries: Sequence[EvalQuery], run: Iterable[RunRecord]) -> Aligned:
    """Match run records to queries. The first record of a query_id wins; later ones are counted."""
    wanted = {q.query_id for q in queries}
    if len(wanted) != len(queries):
        raise ValueError("duplicate query_id in the eval set")
    by_id: dict[str, RunRecord] = {}
    unknown = duplicates = 0
    for rec in run:
        if rec.query_id not in wanted:
            unknown += 1
        elif rec.query_id in by_id:
            duplicates += 1
        else:
            by_id[rec.query_id] = rec
    status: list[str] = []
    records: list[RunRecord | None] = []
    hits: list[list[RunHit]] = []
    errors = timeouts = 0
    for q in queries:
        rec = by_id.get(q.query_id)
        records.append(rec)
        if rec is None:
            status.append("missing")
            hits.append([])
        elif rec.error is not None:
            status.append("error")
            hits.append([])
            errors += 1
            timeouts += is_timeout(rec.error)
        else:
            status.append("ok")
            hits.append(rec.results)
    counts = {
        "queries": len(queries),
        "scored": status.count("ok"),
        "errors": errors,
        "timeouts": timeouts,
        "missing_from_run": len(queries) - len(by_id),
        "unknown_in_run": unknown,
        "duplicate_run_records": duplicates,
        "no_gold": sum(1 for q in queries if not q.gold),
    }
    return Aligned(list(queries), status, records, hits, counts)


def _ranking_columns(al: Aligned, ks: Sequence[int], cols: dict, specs: dict) -> None:
    max_k = max(ks)
    depth = max(1, min(max_k, max((len(h) for h in al.hits), default=0)))
    grade_maps = [grade_map([(g.doc_id, g.grade) for g in q.gold]) for q in al.queries]
    gains = gain_matrix(al.top_ids(depth), grade_maps, depth)
    ideal = ideal_matrix(grade_maps, max_k)
    n_gold = np.array([len(m) for m in grade_maps], dtype=np.float64)
    no_gold = n_gold == 0
    for k in ks:
        cols[f"hit_rate@{k}"] = np.where(no_gold, np.nan, hit_rate_batch(gains, k))
        cols[f"recall@{k}"] = recall_batch(gains, n_gold, k)
        cols[f"mrr@{k}"] = np.where(no_gold, np.nan, mrr_batch(gains, k))
        cols[f"ndcg@{k}"] = ndcg_batch(gains, ideal, k)
    for name in ("hit_rate", "recall", "mrr", "ndcg"):
        for k in ks:
            specs[f"{name}@{k}"] = agg.Mean(f"{name}@{k}")


def _latency_columns(al: Aligned, cols: dict, specs: dict) -> None:
    lat = [r.latency_ms if r is not None and r.latency_ms is not None else math.nan for r in al.records]
    cols["latency_ms"] = np.array(lat, dtype=np.float64)
    for p in (50, 95, 99):
        specs[f"latency_ms_p{p}"] = agg.Quantile("latency_ms", p)


def _json_column(values: np.ndarray) -> list[float | None]:
    return [None if x != x else x for x in values.tolist()]


def _per_query(al: Aligned, cols: dict[str, np.ndarray], extras: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = ["query_id", "status", *cols, *extras]
    columns: list[list[Any]] = [
        [q.query_id for q in al.queries],
        al.status,
        *(_json_column(c) for c in cols.values()),
        *extras.values(),
    ]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def score(
    queries: Sequence[EvalQuery],
    run: Iterable[RunRecord],
    ks: Iterable[int] = DEFAULT_KS,
    *,
    oracle: Oracle | Literal["evalset"] | None = None,
    catalog: Any = None,
    bootstrap: bool = True,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Score ``run`` against ``queries``; returns a JSON-able dict (see the module docs for the shape)."""
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be integers >= 1, got {ks}")
    al = align(queries, run)
    cols: dict[str, np.ndarray] = {}
    specs: dict[str, agg.Spec] = {}
    extras: dict[str, list[Any]] = {}
    _ranking_columns(al, ks, cols, specs)
    _latency_columns(al, cols, specs)
    metrics = agg.aggregate(cols, specs)
    ci = agg.confidence_intervals(cols, specs, resamples=resamples, seed=seed) if bootstrap and queries else {}
    return {
        "format": METRICS_FORMAT,
        "config": {
            "ks": ks,
            "seed": seed,
            "bootstrap": {"resamples": resamples, "method": "percentile", "level": 0.95} if bootstrap else None,
        },
        "metrics": metrics,
        "ci": ci,
        "strata": {},
        "counts": al.counts,
        "per_query": _per_query(al, cols, extras),
    }


def compare(score_a: dict[str, Any], score_b: dict[str, Any], *, seed: int = 0) -> dict[str, Any]:
    """Paired comparison of two ``score`` results on the same eval set, metric by metric.

    For every per-query metric present in both, queries are aligned by ``query_id`` (only queries in
    both are used) and ``stats.paired_compare`` gives ``diff = mean(A - B)``, its bootstrap CI and the
    sign-flip p-value. Queries where either side is null (excluded) are dropped for that metric.
    """
    pa = {row["query_id"]: row for row in score_a["per_query"]}
    pb = {row["query_id"]: row for row in score_b["per_query"]}
    common = [qid for qid in pa if qid in pb]
    names = [m for m in score_a.get("metrics", {}) if common and m in pa[common[0]] and m in pb[common[0]]]
    out: dict[str, Any] = {}
    for name in names:
        a = np.array([math.nan if pa[q][name] is None else pa[q][name] for q in common], dtype=np.float64)
        b = np.array([math.nan if pb[q][name] is None else pb[q][name] for q in common], dtype=np.float64)
        out[name] = paired_compare(a, b, seed=seed)
    return {"queries": len(common), "metrics": out}
