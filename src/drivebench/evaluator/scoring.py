"""Score a run against an eval set: ``score(queries, run) -> metrics.json`` dict, and ``compare``.

The orchestrator aligns the run with the eval set, computes every per-query value once (float
columns, ``NaN`` = excluded), then aggregates the same columns for the whole set, for each stratum
and for the bootstrap CIs. Metric definitions, edge cases and references: one module per metric in
``drivebench.evaluator.metrics``; the shared conventions are listed there.

Shape of the returned (JSON-able, NaN-free) dict, ``format = "drivebench-metrics/1"``::

    {
      "format": "drivebench-metrics/1",
      "errors":  {"queries", "answered", "failed", "rate",          # failed = error records + missing ones
                  "retries": {"total", "queries", "max"},            # from run.jsonl's per-query retries
                  "by_kind": {kind: {"count", "meaning", "sample", "queries"}}},   (failures.errors_section)
      "unmapped": {"results", "queries", "reasons", "samples"},    # results whose id mapped to no document
      "oracles": {"leak" | "version" | "trashed" | "answer_facts" | "answer_leak":
                  {"measured": true, "source"} | {"measured": false, "reason"}},
      "metrics_scope": {...},  # what "metrics" and "metrics_answered" are computed over
      "config":  {"ks": [1, 3, 5, 10], "multi_hop_k": 10, "seed": 0, "oracle": true, "catalog": true,
                  "bootstrap": {"resamples": 1000, "method": "percentile", "level": 0.95} | null,
                  "per_query_metrics": [names of the metrics that are per-query means],
                  "strata": {"tags": [tag strata, e.g. "phrasing"], "small_below": 5}},
      "metrics": {"hit_rate@K", "recall@K", "mrr@K", "ndcg@K",              # every K
                  "leak_rate@K", "hit_rate_permitted@K",                     # null without oracle
                  "under_fill_rate",              # null without a corpus oracle, top_k or a full list
                  "version_exact_hit_rate@K", "stale_version_hit_rate@K",    # null without pinned gold
                  "trashed_hit_rate@K",                                      # null without catalog
                  "source_coverage", "source_coverage_macro", "citation_precision",  # null without answers
                  "answer_fact_recall", "claim_support",     # null without answers or without answer_facts
                  "answer_leak_rate",      # null without answers, without the corpus's facts or without an oracle
                  "multi_hop_completeness": {"2": ..}, "full_chain_rate": {"2": ..},
                  "hop_position_hit_rate": {"2": {"1": .., "2": ..}},
                  "latency_ms_p50", "latency_ms_p95", "latency_ms_p99"},
                                          # over all queries, a failed query a miss; leak rates: answered only;
                                          # every value null when no query was answered
      "metrics_answered": {same names}    # over answered queries only
      "ci":      {metric: [lo, hi] | null}     # every per-query-mean and micro-ratio metric
      "strata":  {stratum: {value: {"n": .., "small": n < 5, <every metric above>}}},
                                          # the built-in strata (department, file_type, length, hops, role,
                                          # kind, secret_level, visible_share), then a stratum per tag of config.strata.tags:
                                          # phrasing/style/noise when the eval set has them, plus every `by`
                                          # tag (value tags[TAG], "unknown" when absent); "small": a group
                                          # too small to read. See drivebench.evaluator.strata
      "counts":  {"queries", "scored", "errors", "timeouts", "missing_from_run", "unknown_in_run",
                  "duplicate_run_records", "no_gold", "version_pinned", "multi_hop", "with_answer",
                  "with_answer_facts", "refusals", "queries_with_leak"          (with an oracle),
                  "queries_with_answer_leak"                       (answer leaks measured),
                  "citations_unresolvable", "citations_ambiguous"  (with answers)},
      "leaks":     {"depth", "queries_with_leak", "queries_judged" (answered), "upper_bound_95" (leak_bound: the
                    exact one-sided 95 % upper bound of queries_with_leak / queries_judged),
                    "documents": [{"doc_id", "queries", "secret_level", "causes", "why"}],
                    "by_secret_level": {level: n}, "by_cause": [{"cause", "label", "leaks", "documents"}]} | null,
      "answer_leaks": {"queries_judged", "queries_with_answer_leak", "facts_leaked", "upper_bound_95"} | null,
                                          # each leaked fact in per_query[].answer_leaked: fact_id, text, attribute,
                                          # its owner doc_id, name, path, why, causes
      "over_restriction": {"measured", "definition", "top_k", "queries_judged", "queries_not_judged",
                    "queries_over_restricted", "documents": [{"doc_id", "queries", ...}]} | {"measured": false, "reason"},
      "answer_outcomes": {"measured", "source", "queries_judged", "queries_not_judged", "n", "small",
                    "outcomes": {outcome | "right": {"count", "rate", "ci"}}, "strata": {stratum: {value: ..}},
                    "per_query": [{"query_id", "outcome", "right", "stated", "competing"}]}
                    | {"measured": false, "reason"}    (metrics.answer_outcome; facts: the corpus's facts.jsonl)
      "under_fill": {"measured", "definition", "top_k", "queries_judged", "queries_under_filled",
                     "under_fill_rate", "upper_bound_95"} | {"measured": false, "reason"},   # metrics.under_fill_rate, by stratum
      "citations": {"gold_docs": {"retrieved_cited", "retrieved_not_cited", "cited_not_retrieved", "neither"},
                    "non_gold_citations": {"wrong", "unresolvable"}, "scope",
                    "larger_gap": "generation" | "retrieval" | "both" | "none"} | null,
      "per_query": [{"query_id", "status": "ok" | "error" | "missing", <per-query metric values>,
                     "hops", "full_chain", "latency_ms", "leaked": [..], "citations": {..}}],
    }

``oracle`` is a ``may_preview(query, doc_id) -> bool`` callable (optionally with a batch method
``denied(query, doc_ids) -> set``), or ``"evalset"`` for ``oracle_from_evalset(queries)``.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.failures import errors_section, unmapped_section
from drivebench.evaluator.metrics import _aggregate as agg
from drivebench.evaluator.metrics import _columns as fam
from drivebench.evaluator.metrics._run import Aligned, align, is_timeout
from drivebench.evaluator.metrics.answer_outcome import answer_outcomes
from drivebench.evaluator.metrics.leak_rate import oracle_from_evalset
from drivebench.evaluator.stats import RESAMPLES, paired_compare
from drivebench.evaluator.strata import SMALL_GROUP, strata_table, tag_strata
from drivebench.formats.evalset import EvalQuery, RunRecord
from drivebench.formats.facts import CorpusFact

__all__ = [
    "DEFAULT_KS",
    "METRICS_FORMAT",
    "Aligned",
    "Oracle",
    "align",
    "compare",
    "is_timeout",
    "oracle_from_evalset",
    "score",
]

METRICS_FORMAT = "drivebench-metrics/1"
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
Oracle = Callable[[EvalQuery, str], bool]


def _json_column(values: np.ndarray) -> list[float | None]:
    return [None if x != x else x for x in values.tolist()]


def _per_query(al: Aligned, t: fam.Table) -> list[dict[str, Any]]:
    public = {name: col for name, col in t.cols.items() if not name.startswith("_")}
    names = ["query_id", "status", "n_results", *public, *t.extras]
    columns: list[list[Any]] = [
        [q.query_id for q in al.queries],
        al.status,
        [len(h) for h in al.hits],
        *(_json_column(c) for c in public.values()),
        *t.extras.values(),
    ]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _strata(queries: Sequence[EvalQuery], catalog: Catalog | None, t: fam.Table, tags: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, values in strata_table(queries, catalog, tags, t.extras.get("visible_share")).items():
        arr = np.array(values, dtype=object)
        out[name] = {}
        for value in sorted(set(values)):
            rows = np.flatnonzero(arr == value)
            n = len(rows)
            out[name][value] = {"n": n, "small": n < SMALL_GROUP, **agg.aggregate(t.cols, t.specs, rows)}
    return out


def score(
    queries: Sequence[EvalQuery],
    run: Iterable[RunRecord],
    ks: Iterable[int] = DEFAULT_KS,
    *,
    oracle: Oracle | Literal["evalset"] | None = None,
    catalog: Catalog | None = None,
    bootstrap: bool = True,
    seed: int = 0,
    resamples: int = RESAMPLES,
    by: Iterable[str] = (),
    top_k: int | None = None,
    facts: Sequence[CorpusFact] | None = None,
    no_facts_reason: str = fam.NO_FACTS,
) -> dict[str, Any]:
    """Score ``run`` against ``queries``; returns a JSON-able dict (see the module docs for the shape).
    ``top_k``: how many results the target was asked for (over-restriction is not measured without it).
    ``facts``: the corpus's facts (``formats.facts.load_facts``): answers are checked against them for answer leaks,
    and answer outcomes use them to tell an old version's value and a leak. None: answer leaks are not measured
    (``no_facts_reason`` says why), outcomes do not tell those and permission questions are not judged.

    ``by``: eval-set tags to break metrics down by, besides the built-in strata and the default tags
    (``strata.tag_strata``); a tag no query carries raises ``strata.UnknownTagError`` (a ValueError)."""
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be integers >= 1, got {ks}")
    tags = tag_strata(queries, by)
    with _no_gc():  # only acyclic lists/dicts are built: collections would just re-scan the caller's data
        return _score(
            queries, run, ks, oracle, catalog, bootstrap, seed, resamples, tags, top_k, facts, no_facts_reason
        )


@contextmanager
def _no_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _score(
    queries: Sequence[EvalQuery],
    run: Iterable[RunRecord],
    ks: list[int],
    oracle: Oracle | Literal["evalset"] | None,
    catalog: Catalog | None,
    bootstrap: bool,
    seed: int,
    resamples: int,
    tags: Sequence[str],
    top_k: int | None = None,
    facts: Sequence[CorpusFact] | None = None,
    no_facts_reason: str = fam.NO_FACTS,
) -> dict[str, Any]:
    al = align(queries, run)
    oracle, oracles = resolve_oracles(queries, oracle, catalog)
    t = fam.Table(ks=ks, width=fam.ranking_width(al.hits, ks))
    fam.ranking(al, t)
    fam.permissions(al, t, oracle, catalog, top_k)
    fam.selectivity(al, t, oracle, top_k)
    fam.versions(al, t)
    fam.trashed(al, t, catalog)
    fam.citations(al, t, catalog)
    oracles["answer_facts"] = fam.answer_facts(al, t, catalog)
    oracles["answer_leak"] = fam.answer_leak(al, t, oracle, facts, catalog, no_facts_reason)
    fam.multi_hop(al, t)
    fam.latency(al, t)
    errors = errors_section(al)
    answered_rows = np.flatnonzero(np.array(al.ok, dtype=bool))
    if errors["answered"] == 0:  # nothing was answered: no figure means anything
        metrics = {name: None for name in t.specs}
        metrics_answered = dict(metrics)
        ci: dict[str, Any] = {}
    else:
        metrics = agg.aggregate(t.cols, t.specs)
        metrics_answered = agg.aggregate(t.cols, t.specs, answered_rows)
        ci = agg.confidence_intervals(t.cols, t.specs, resamples=resamples, seed=seed) if bootstrap and queries else {}
    _not_measured_without_answers(oracles, errors["answered"])
    if errors["answered"] and all(not al.hits[i] for i in answered_rows) and oracles["leak"].get("measured"):
        # nothing was shown: "0 leaked" would be a figure about nothing
        oracles["leak"] = {"measured": False, "reason": "every answered query returned an empty list: nothing to judge"}
        for table in (metrics, metrics_answered):
            for name in table:
                if name.startswith("leak_rate@"):
                    table[name] = None
        ci = {name: v for name, v in ci.items() if not name.startswith("leak_rate@")}
    if t.counts.get("version_pinned", 0) == 0:
        oracles["version"] = {"measured": False, "reason": "no gold document of the eval set pins a version_id"}
    per_query_metrics = [m for m, spec in t.specs.items() if isinstance(spec, agg.Mean)]
    return {
        "format": METRICS_FORMAT,
        "errors": errors,
        "unmapped": unmapped_section(al),
        "oracles": oracles,
        "metrics_scope": {
            "metrics": "over all queries of the eval set; failed queries count as misses (leak rates: answered only)",
            "metrics_answered": f"over the {errors['answered']} answered queries only",
        },
        "config": {
            "ks": ks,
            "multi_hop_k": max(ks),
            "seed": seed,
            "oracle": bool(oracles["leak"]["measured"]),
            "catalog": catalog is not None,
            "bootstrap": {"resamples": resamples, "method": "percentile", "level": 0.95} if bootstrap else None,
            "per_query_metrics": per_query_metrics,
            "strata": {"tags": list(tags), "small_below": SMALL_GROUP},
        },
        "metrics": metrics,
        "metrics_answered": metrics_answered,
        "ci": ci,
        "strata": _strata(queries, catalog, t, tags),
        "counts": {**al.counts, **t.counts},
        **t.sections,
        "answer_outcomes": answer_outcomes(
            al.queries,
            al.records,
            facts,
            status=al.status,
            strata=strata_table(queries, catalog, tags),
            bootstrap=bootstrap,
            resamples=resamples,
            seed=seed,
        ),
        "per_query": _with_errors(_per_query(al, t), al),
    }


def _with_errors(rows: list[dict[str, Any]], al: Aligned) -> list[dict[str, Any]]:
    """Failed queries carry their error kind and message in ``per_query``."""
    from drivebench.evaluator.failures import classify

    for row, rec in zip(rows, al.records, strict=True):
        if row["status"] == "error" and rec is not None and rec.error is not None:
            row["error_kind"] = rec.error_kind or classify(rec.error)
            row["error"] = rec.error[:300]
        elif row["status"] == "missing":
            row["error_kind"] = "missing"
    return rows


def resolve_oracles(
    queries: Sequence[EvalQuery], oracle: Oracle | Literal["evalset"] | None, catalog: Catalog | None
) -> tuple[Oracle | None, dict[str, Any]]:
    """The leak oracle to use and what every oracle-dependent metric is measured against.

    ``"evalset"`` is an oracle only when some query lists ``forbidden`` or ``allowed``: otherwise
    leaks are "not measured", never 0.
    """
    out: dict[str, Any] = {}
    if oracle == "evalset":
        if any(q.forbidden or q.allowed is not None for q in queries):
            oracle = oracle_from_evalset(queries)
        else:
            oracle = None
            out["leak"] = {
                "measured": False,
                "reason": "no leak oracle: the eval set lists no forbidden/allowed documents and no corpus "
                "was given (--corpus) whose policies could judge the results",
            }
    if oracle is None:
        out.setdefault(
            "leak", {"measured": False, "reason": "no leak oracle was given (--corpus, or forbidden/allowed lists)"}
        )
    else:
        out["leak"] = {"measured": True, "source": str(getattr(oracle, "description", "a custom oracle callable"))}
    out["version"] = {"measured": True, "source": "the eval set's pinned gold version_ids"}
    out["trashed"] = (
        {"measured": True, "source": "the document catalog's trash times"}
        if catalog is not None
        else {"measured": False, "reason": "no document catalog (--corpus) to say what was in the recycle bin"}
    )
    return oracle, out


def _not_measured_without_answers(oracles: dict[str, Any], answered: int) -> None:
    if answered:
        return
    for name, entry in oracles.items():
        oracles[name] = {"measured": False, "reason": "no query was answered (every query failed)"}
        if entry.get("measured"):
            oracles[name]["would_use"] = entry.get("source")


def comparable_metrics(score_a: dict[str, Any], score_b: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The query ids in both results and the per-query metrics both carry (what ``compare`` compares)."""
    pa = {row["query_id"]: row for row in score_a["per_query"]}
    pb = {row["query_id"]: row for row in score_b["per_query"]}
    common = [qid for qid in pa if qid in pb]
    wanted = score_a.get("config", {}).get("per_query_metrics") or list(score_a.get("metrics", {}))
    return common, [m for m in wanted if common and m in pa[common[0]] and m in pb[common[0]]]


def compare(
    score_a: dict[str, Any], score_b: dict[str, Any], *, seed: int = 0, on_metric: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Paired comparison of two ``score`` results on the same eval set, metric by metric.

    For every per-query metric present in both, queries are aligned by ``query_id`` (only queries in
    both are used) and ``stats.paired_compare`` gives ``diff = mean(A - B)``, its bootstrap CI and the
    sign-flip p-value. Queries where either side is null (excluded) are dropped for that metric.
    ``on_metric`` is called after each metric (a progress count).
    """
    pa = {row["query_id"]: row for row in score_a["per_query"]}
    pb = {row["query_id"]: row for row in score_b["per_query"]}
    common, names = comparable_metrics(score_a, score_b)
    out: dict[str, Any] = {}
    for name in names:
        a = np.array([math.nan if pa[q][name] is None else pa[q][name] for q in common], dtype=np.float64)
        b = np.array([math.nan if pb[q][name] is None else pb[q][name] for q in common], dtype=np.float64)
        out[name] = paired_compare(a, b, seed=seed)
        if on_metric is not None:
            on_metric()
    return {"queries": len(common), "metrics": out}
