"""Per-query columns, one builder per metric family, each reading the aligned run once.

Every builder adds float columns (``NaN`` = excluded), the specs that aggregate them, and optional
per-query extras (JSON lists), report sections and counts. Columns whose name starts with ``_``
are internal (not written to ``per_query``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Any

import numpy as np

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.citations import cited_statements, extract_citations
from drivebench.evaluator.failed_queries import explainer, leaked_doc
from drivebench.evaluator.metrics import _aggregate as agg
from drivebench.evaluator.metrics import over_restriction, under_fill
from drivebench.evaluator.metrics._common import gain_matrix, ideal_matrix
from drivebench.evaluator.metrics._run import Aligned
from drivebench.evaluator.metrics.answer_fact_recall import distinct_facts, fact_counts
from drivebench.evaluator.metrics.answer_leak import answer_leaks
from drivebench.evaluator.metrics.citation_diagnosis import CATEGORIES, NON_GOLD, diagnose, larger_gap
from drivebench.evaluator.metrics.hit_rate import hit_rate_batch
from drivebench.evaluator.metrics.hit_rate_permitted import hit_rate_permitted_batch
from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.metrics.leak_rate import leak_batch
from drivebench.evaluator.metrics.mrr import mrr_batch
from drivebench.evaluator.metrics.ndcg import ndcg_batch
from drivebench.evaluator.metrics.recall import recall_batch
from drivebench.evaluator.metrics.version_exact import any_batch
from drivebench.formats.evalset import EvalQuery
from drivebench.formats.facts import CorpusFact

Oracle = Callable[[EvalQuery, str], bool]
_doc_id = attrgetter("doc_id")


@dataclass
class Table:
    ks: list[int]
    width: int  # ranking depth actually materialised: min(max K, longest result list), ≥ 1
    cols: dict[str, np.ndarray] = field(default_factory=dict)
    specs: dict[str, agg.Spec] = field(default_factory=dict)
    extras: dict[str, list[Any]] = field(default_factory=dict)
    sections: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def mean_metric(self, name: str, values: np.ndarray) -> None:
        self.cols[name] = values
        self.specs[name] = agg.Mean(name)

    def null_metric(self, *names: str) -> None:
        for name in names:
            self.specs[name] = agg.Null()


def _flags(n: int, width: int, cells: list[tuple[int, int]]) -> np.ndarray:
    out = np.zeros((n, width), dtype=bool)
    if cells:
        rows, cols = zip(*cells, strict=True)
        out[list(rows), list(cols)] = True
    return out


def ranking(al: Aligned, t: Table) -> None:
    """hit_rate, recall, mrr, ndcg at every K."""
    # same as _common.grade_map (first entry of a duplicated gold doc wins), inlined for speed
    grade_maps = [{g.doc_id: g.grade for g in reversed(q.gold)} for q in al.queries]
    gains = gain_matrix(al.top_ids(t.width), grade_maps, t.width)
    ideal = ideal_matrix(grade_maps, max(t.ks))
    n_gold = np.array([len(m) for m in grade_maps], dtype=np.float64)
    no_gold = n_gold == 0
    per_k = {
        "hit_rate": lambda k: np.where(no_gold, np.nan, hit_rate_batch(gains, k)),
        "recall": lambda k: recall_batch(gains, n_gold, k),
        "mrr": lambda k: np.where(no_gold, np.nan, mrr_batch(gains, k)),
        "ndcg": lambda k: ndcg_batch(gains, ideal, k),
    }
    for name, fn in per_k.items():
        for k in t.ks:
            t.mean_metric(f"{name}@{k}", fn(k))


def permissions(
    al: Aligned, t: Table, oracle: Oracle | None, catalog: Catalog | None, top_k: int | None = None
) -> None:
    """leak_rate@K, hit_rate_permitted@K, the leaked-documents report and over-restriction (``top_k``: the depth the
    target was asked for, ``None`` when unknown)."""
    names = [f"{m}@{k}" for m in ("leak_rate", "hit_rate_permitted") for k in t.ks]
    if oracle is None:
        t.null_metric(*names)
        t.sections["leaks"] = None
        t.sections["over_restriction"] = {
            "measured": False,
            "reason": "no leak oracle to say which documents the asker may see",
            "definition": over_restriction.DEFINITION,
        }
        return
    n, width = len(al.queries), t.width
    denied: list[tuple[int, int]] = []
    permitted_gains: list[dict[str, float]] = []
    refusal = np.zeros(n, dtype=bool)
    defined = np.ones(n, dtype=bool)
    leaked_lists: list[list[str]] = []
    withheld: list[list[str] | None] = []
    batch = getattr(oracle, "denied", None)
    for qi, (q, hits) in enumerate(zip(al.queries, al.hits, strict=True)):
        # an unmapped result (idmap) is not a document of the corpus: the oracle cannot judge it
        returned = dict.fromkeys(h.doc_id for h in hits if not (h.model_extra or {}).get("unmapped"))
        asked = [*returned, *(g for g in q.gold_ids if g not in returned)]
        bad = set(batch(q, asked)) if batch is not None else {d for d in asked if not oracle(q, d)}
        permitted = {g: 1.0 for g in q.gold_ids if g not in bad}
        permitted_gains.append(permitted)
        if al.status[qi] == "ok" and top_k is not None:
            withheld.append(over_restriction.withheld(list(permitted), list(returned), len(hits), top_k))
        if not permitted:
            refusal[qi] = bool(q.gold or q.forbidden)
            defined[qi] = refusal[qi]
        if bad:
            denied += [(qi, i) for i, h in enumerate(hits[:width]) if h.doc_id in bad]
            leaked_lists.append([d for d in returned if d in bad])
        else:
            leaked_lists.append([])
    denied_m = _flags(n, width, denied)
    pgains = gain_matrix(al.top_ids(width), permitted_gains, width)
    ok = np.array(al.ok, dtype=bool)
    for k in t.ks:  # a failed query showed nothing we can judge: excluded, never "did not leak"
        t.mean_metric(f"leak_rate@{k}", np.where(ok, leak_batch(denied_m, k), np.nan))
    for k in t.ks:
        values = hit_rate_permitted_batch(pgains, denied_m, refusal, ok, k)
        t.mean_metric(f"hit_rate_permitted@{k}", np.where(defined, values, np.nan))
    t.extras["leaked"] = leaked_lists
    t.counts["refusals"] = int(refusal.sum())
    t.counts["queries_with_leak"] = sum(1 for x in leaked_lists if x)
    t.sections["leaks"] = _leak_report(leaked_lists, catalog, judged=int(ok.sum()))
    longest = max((len(h) for h, ok in zip(al.hits, al.ok, strict=True) if ok), default=0)
    section = over_restriction.section(withheld, longest, top_k, lambda d: _named(d, catalog))
    t.sections["over_restriction"] = section
    if section["measured"]:
        t.counts["queries_over_restricted"] = section["queries_over_restricted"]
        judged = iter(withheld)
        t.extras["withheld"] = [(next(judged) or []) if ok and top_k is not None else [] for ok in al.ok]


def selectivity(al: Aligned, t: Table, oracle: Oracle | None, top_k: int | None) -> None:
    """Each query's visible share of the corpus (``extras["visible_share"]``: the ``visible_share`` stratum) and
    under_fill_rate (``top_k``: the depth the target was asked for). Both need an oracle that lists what the asker
    may preview (the corpus oracle); under-fill also the corpus's texts."""
    share_of = getattr(oracle, "visible_share", None)
    matching = getattr(oracle, "matching_permitted", None)
    n = len(al.queries)
    t.extras["visible_share"] = [share_of(q) for q in al.queries] if share_of is not None else [None] * n
    longest = max((len(h) for h, ok in zip(al.hits, al.ok, strict=True) if ok), default=0)
    can_count = matching is not None and getattr(oracle, "corpus_terms", None) is not None
    reason = under_fill.not_measured_reason(top_k, can_count, sum(al.ok))
    if reason is not None or top_k is None or matching is None:
        t.null_metric("under_fill_rate")
        t.sections["under_fill"] = under_fill.section([], top_k, reason)
        return
    per_query: list[bool | None] = []
    for q, hits, ok in zip(al.queries, al.hits, al.ok, strict=True):
        if not ok:
            per_query.append(None)
        elif len(hits) >= top_k:  # a full list: the permitted matches need not be counted
            per_query.append(False)
        else:
            per_query.append(under_fill.under_filled(len(hits), top_k, matching(q, top_k)))
    t.mean_metric("under_fill_rate", np.array([np.nan if u is None else float(u) for u in per_query]))
    section = under_fill.section(per_query, top_k, None, longest)
    t.sections["under_fill"] = section
    t.counts["queries_under_filled"] = section["queries_under_filled"]


def _named(doc_id: str, catalog: Catalog | None) -> dict[str, str]:
    """A document's secret level, name and path from the catalog (nothing it does not know)."""
    doc = catalog.get(doc_id) if catalog is not None else None
    if doc is None:
        return {}
    return {k: v for k, v in (("secret_level", doc.secret_level), ("name", doc.name), ("path", doc.path)) if v}


def _leak_report(leaked_lists: list[list[str]], catalog: Catalog | None, judged: int) -> dict[str, Any]:
    """The leaked documents; ``judged``: the answered queries, over which ``upper_bound_95`` bounds the share that
    leak (``leak_bound``: 0 of 200 is at most 1.5 %, never "never leaks")."""
    per_doc = Counter(d for docs in leaked_lists for d in docs)

    def level(doc_id: str) -> str:
        doc = catalog.get(doc_id) if catalog is not None else None
        return (doc.secret_level if doc is not None else None) or "unknown"

    def named(doc_id: str) -> dict[str, str]:
        """The name and path the reports show a leaked document by (nothing when the catalog does not know it)."""
        doc = catalog.get(doc_id) if catalog is not None else None
        return {k: v for k, v in (("name", doc.name), ("path", doc.path)) if v} if doc is not None else {}

    by_level: Counter[str] = Counter()
    for doc_id, count in per_doc.items():
        by_level[level(doc_id)] += count
    leaking = sum(1 for x in leaked_lists if x)
    return {
        "depth": "all returned results",
        "queries_with_leak": leaking,
        "queries_judged": judged,
        "upper_bound_95": upper_bound(leaking, judged),
        "documents": [
            {"doc_id": d, "queries": c, "secret_level": level(d), **named(d)} for d, c in per_doc.most_common()
        ],
        "catalog": catalog is not None,
        "by_secret_level": dict(sorted(by_level.items())),
    }


def versions(al: Aligned, t: Table) -> None:
    """version_exact_hit_rate@K and stale_version_hit_rate@K over version-pinned queries."""
    names = [f"{m}@{k}" for m in ("version_exact_hit_rate", "stale_version_hit_rate") for k in t.ks]
    pinned = np.array([any(g.version_id is not None for g in q.gold) for q in al.queries], dtype=bool)
    t.counts["version_pinned"] = int(pinned.sum())
    if not pinned.any():
        t.null_metric(*names)
        return
    exact: list[tuple[int, int]] = []
    stale: list[tuple[int, int]] = []
    for qi in np.flatnonzero(pinned).tolist():
        pins: dict[str, str | None] = {}
        for g in al.queries[qi].gold:
            pins.setdefault(g.doc_id, g.version_id)
        seen: set[str] = set()
        for i, h in enumerate(al.hits[qi][: t.width]):
            if h.doc_id in seen or h.doc_id not in pins:
                continue
            seen.add(h.doc_id)
            pin = pins[h.doc_id]
            if pin is None or pin == h.version_id:
                exact.append((qi, i))
            elif h.version_id is not None:
                stale.append((qi, i))
    n = len(al.queries)
    exact_m, stale_m = _flags(n, t.width, exact), _flags(n, t.width, stale)
    for name, m in (("version_exact_hit_rate", exact_m), ("stale_version_hit_rate", stale_m)):
        for k in t.ks:
            t.mean_metric(f"{name}@{k}", np.where(pinned, any_batch(m, k), np.nan))


def trashed(al: Aligned, t: Table, catalog: Catalog | None) -> None:
    """trashed_hit_rate@K: results in the recycle bin at the query's time."""
    if catalog is None:
        t.null_metric(*(f"trashed_hit_rate@{k}" for k in t.ks))
        return
    cells = [
        (qi, i)
        for qi, (q, hits) in enumerate(zip(al.queries, al.hits, strict=True))
        for i, h in enumerate(hits[: t.width])
        if catalog.is_trashed(h.doc_id, q.as_of)
    ]
    m = _flags(len(al.queries), t.width, cells)
    for k in t.ks:
        t.mean_metric(f"trashed_hit_rate@{k}", any_batch(m, k))


def citation_catalog(al: Aligned, catalog: Catalog | None) -> Catalog:
    """The given catalog, or one made of every id the eval set and run mention (plus any ``name``,
    ``path`` or ``title`` the run's results carry as extra fields)."""
    if catalog is not None:
        return catalog
    out = Catalog()
    for q in al.queries:
        for d in [*q.gold_ids, *(q.hops or ()), *q.forbidden]:
            out.add(CatalogDoc(doc_id=d))
    for hits in al.hits:
        for h in hits:
            extra = h.model_extra or {}
            if h.doc_id not in out or extra:
                out.add(
                    CatalogDoc(
                        doc_id=h.doc_id,
                        name=str(extra.get("name") or extra.get("file_name") or ""),
                        path=str(extra.get("path") or ""),
                        title=extra.get("title"),
                    )
                )
    return out


def citations(al: Aligned, t: Table, catalog: Catalog | None) -> None:
    """source_coverage (micro/macro), citation_precision and the per-document diagnosis."""
    names = ("source_coverage", "source_coverage_macro", "citation_precision")
    answered = [r is not None and r.answer is not None for r in al.records]
    t.counts["with_answer"] = sum(answered)
    if not any(answered):
        t.null_metric(*names)
        t.sections["citations"] = None
        return
    cat = citation_catalog(al, catalog)
    n = len(al.queries)
    cited_gold, n_gold, n_cited = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    per_query: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    ambiguous = 0
    for qi, (q, rec, hits, ok) in enumerate(zip(al.queries, al.records, al.hits, al.ok, strict=True)):
        retrieved = {h.doc_id for h in hits}
        found = extract_citations(rec.answer if ok and rec is not None else None, cat, prefer=retrieved)
        diag = diagnose(q.gold_ids, retrieved, found.cited, found.unresolvable)
        ambiguous += found.ambiguous
        if q.gold:
            cited_gold[qi] = len(diag["retrieved_cited"]) + len(diag["cited_not_retrieved"])
            n_gold[qi] = len(q.gold_ids)
            n_cited[qi] = len(found.cited) + len(found.unresolvable)
        totals.update({k: len(v) for k, v in diag.items()})
        per_query.append({"cited": found.cited, **{k: v for k, v in diag.items() if v}})
    t.cols["_cited_gold"], t.cols["_n_gold"], t.cols["_n_cited"] = cited_gold, n_gold, n_cited
    with np.errstate(divide="ignore", invalid="ignore"):
        t.cols["source_coverage_macro"] = cited_gold / n_gold
        t.cols["citation_precision"] = np.where(n_cited > 0, cited_gold / n_cited, np.nan)
    t.specs["source_coverage"] = agg.Ratio("_cited_gold", "_n_gold")
    t.specs["source_coverage_macro"] = agg.Mean("source_coverage_macro")
    t.specs["citation_precision"] = agg.Ratio("_cited_gold", "_n_cited")
    t.extras["citations"] = per_query
    t.counts["citations_unresolvable"] = totals["unresolvable"]
    t.counts["citations_ambiguous"] = ambiguous
    t.sections["citations"] = {
        "gold_docs": {k: totals[k] for k in CATEGORIES},
        "non_gold_citations": {k: totals[k] for k in NON_GOLD},
        "larger_gap": larger_gap(totals),  # the article's rule: generation (recalled, not cited) or retrieval
        "scope": "gold docs and citations of queries with gold; wrong/unresolvable of every answered query",
    }


ANSWER_FACT_METRICS: tuple[str, ...] = ("answer_fact_recall", "claim_support")
NO_FACTS = "no corpus facts were given (the facts.jsonl of --corpus says which documents own which facts)"


def answer_leak(
    al: Aligned,
    t: Table,
    oracle: Oracle | None,
    facts: Sequence[CorpusFact] | None,
    catalog: Catalog | None,
    no_facts_reason: str = NO_FACTS,
) -> dict[str, Any]:
    """answer_leak_rate over the answered queries with an answer: answers stating a fact none of whose owners the
    asker may preview at the query's time (the leak oracle's own decision), whatever they cite; each leaked fact in
    ``per_query[].answer_leaked`` with its owner document and why it is forbidden, the totals and the bound in
    ``answer_leaks``. Returns the ``oracles["answer_leak"]`` entry: measured, or why not (``no_facts_reason`` when
    ``facts`` is None, no oracle, no answer): never 0."""
    answered = [ok and rec is not None and rec.answer is not None for ok, rec in zip(al.ok, al.records, strict=True)]
    reason = (
        no_facts_reason
        if facts is None
        else "no leak oracle to say which documents the asker may preview"
        if oracle is None
        else "the run has no answers (run with --answers)"
        if not any(answered)
        else None
    )
    if reason is not None or facts is None or oracle is None:
        t.null_metric("answer_leak_rate")
        t.sections["answer_leaks"] = None
        return {"measured": False, "reason": reason}
    explain = explainer(oracle, al.queries)
    leaked = np.full(len(al.queries), np.nan)
    rows: list[list[dict[str, Any]]] = []
    for qi, (q, rec) in enumerate(zip(al.queries, al.records, strict=True)):
        if not answered[qi] or rec is None or rec.answer is None:
            rows.append([])
            continue
        returned = [h.doc_id for h in al.hits[qi]]  # judged for result leaks already: their decisions are cached
        found = answer_leaks(rec.answer, facts, partial(oracle, q), prefer=returned)
        leaked[qi] = 1.0 if found else 0.0
        rows.append(
            [
                {"fact_id": f.fact.fact_id, "text": f.fact.text, "attribute": f.fact.attribute}
                | leaked_doc(q, f.doc_id, catalog, explain)
                for f in found
            ]
        )
    t.mean_metric("answer_leak_rate", leaked)
    t.extras["answer_leaked"] = rows
    judged, leaking = int(np.count_nonzero(~np.isnan(leaked))), int(np.nansum(leaked))
    t.counts["queries_with_answer_leak"] = leaking
    t.sections["answer_leaks"] = {
        "queries_judged": judged,
        "queries_with_answer_leak": leaking,
        "facts_leaked": sum(len(r) for r in rows),
        "upper_bound_95": upper_bound(leaking, judged),
    }
    return {
        "measured": True,
        "source": f"the corpus's {len(facts)} facts (facts.jsonl) stated in the answers, matched after normalisation "
        f"(no LLM); a fact leaks when its asker may preview none of its owners "
        f"({getattr(oracle, 'description', 'a custom oracle callable')})",
    }


def answer_facts(al: Aligned, t: Table, catalog: Catalog | None) -> dict[str, Any]:
    """answer_fact_recall and claim_support, per-query means over queries with answer facts (claim_support: those
    whose answer states at least one).

    Returns the ``oracles["answer_facts"]`` entry: measured, or why not (no facts, no answers)."""
    with_facts = [bool(distinct_facts(q.answer_facts)) for q in al.queries]
    answered = [r is not None and r.answer is not None for r in al.records]
    t.counts["with_answer_facts"] = sum(with_facts)
    if not any(with_facts) or not any(answered):
        t.null_metric(*ANSWER_FACT_METRICS)
        reason = (
            "the eval set lists no answer_facts"
            if not any(with_facts)
            else "the run has no answers (run with --answers)"
        )
        return {"measured": False, "reason": reason}
    cat = citation_catalog(al, catalog)
    n = len(al.queries)
    recall, n_stated, n_supported = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for qi, (q, rec, hits, ok) in enumerate(zip(al.queries, al.records, al.hits, al.ok, strict=True)):
        if not with_facts[qi]:
            continue
        answer = rec.answer if ok and rec is not None else None
        statements = cited_statements(answer, cat, prefer={h.doc_id for h in hits})
        total, found, supported = fact_counts(q.answer_facts, statements)
        recall[qi], n_stated[qi], n_supported[qi] = found / total, found, supported
    t.mean_metric("answer_fact_recall", recall)
    with np.errstate(divide="ignore", invalid="ignore"):
        t.mean_metric("claim_support", np.where(n_stated > 0, n_supported / n_stated, np.nan))
    return {
        "measured": True,
        "source": f"the eval set's answer_facts ({sum(with_facts)} queries), matched after normalisation (no LLM)",
    }


def multi_hop(al: Aligned, t: Table) -> None:
    """multi_hop_completeness, full_chain_rate and hop_position_hit_rate at K = max(ks)."""
    k = max(t.ks)
    n = len(al.queries)
    chains = [list(dict.fromkeys(q.hops)) if q.hops else [] for q in al.queries]
    longest = max((len(c) for c in chains), default=0)
    hops = np.array([len(c) or np.nan for c in chains], dtype=np.float64)
    completeness, full = np.full(n, np.nan), np.full(n, np.nan)
    positions = np.full((n, max(longest, 1)), np.nan)
    for qi, (chain, hits) in enumerate(zip(chains, al.hits, strict=True)):
        if not chain:
            continue
        top = {h.doc_id for h in hits[:k]}
        found = [d in top for d in chain]
        completeness[qi] = sum(found) / len(chain)
        full[qi] = float(all(found))
        positions[qi, : len(chain)] = found
    t.cols["hops"], t.cols["multi_hop_completeness"], t.cols["full_chain"] = hops, completeness, full
    for p in range(1, longest + 1):
        t.cols[f"_hop_hit_{p}"] = positions[:, p - 1]
    t.specs["multi_hop_completeness"] = agg.ByHop("multi_hop_completeness")
    t.specs["full_chain_rate"] = agg.ByHop("full_chain")
    t.specs["hop_position_hit_rate"] = agg.HopPositions("_hop_hit_")
    t.counts["multi_hop"] = int(np.count_nonzero(~np.isnan(hops)))


def latency(al: Aligned, t: Table) -> None:
    lat = [r.latency_ms if r is not None and r.latency_ms is not None else math.nan for r in al.records]
    t.cols["latency_ms"] = np.array(lat, dtype=np.float64)
    for p in (50, 95, 99):
        t.specs[f"latency_ms_p{p}"] = agg.Quantile("latency_ms", p)


def ranking_width(hits: Sequence[Sequence[object]], ks: Sequence[int]) -> int:
    return max(1, min(max(ks), max((len(h) for h in hits), default=0)))
