"""``eval compare`` over N runs: every run against the first (the baseline), metric by metric.

``compare_runs(results)`` pairs each run with the baseline by ``query_id`` (``scoring.compare``: mean
difference run − baseline, its paired bootstrap 95% CI, the two-sided sign-flip randomization p-value)
and adds, per metric, Holm's step-down adjustment of the N − 1 p-values (``p_holm``): comparing
several runs with one baseline is several tests, and the family-wise error rate stays at the level.

``corpus_mismatch(results)`` says when the runs were scored on different built-in corpus versions
(``run_info.corpus_version``, e.g. ``acme-zh@1`` vs ``acme-zh@2``): their numbers do not compare.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from drivebench.evaluator.scoring import comparable_metrics, compare


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm (1979) step-down adjusted p-values, in the input order (``None`` stays ``None``).

    Sorted ascending p_(1) ≤ … ≤ p_(m): adjusted p_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)).
    Equals ``statsmodels.stats.multitest.multipletests(p, method="holm")[1]``."""
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def corpus_versions(results: Sequence[dict[str, Any]]) -> list[str | None]:
    return [(r.get("run_info") or {}).get("corpus_version") for r in results]


def corpus_mismatch(results: Sequence[dict[str, Any]]) -> bool:
    """True when at least two runs name different corpus versions (runs that name none are not counted)."""
    return len({v for v in corpus_versions(results) if v}) > 1


def compare_runs(
    results: Sequence[dict[str, Any]], *, seed: int = 0, progress: Callable[[int, int], None] | None = None
) -> list[dict[str, Any]]:
    """For each run after the first: ``{"queries", "metrics": {name: {n, mean_a, mean_b, diff, ci,
    p_value, p_holm}}}`` where A is the run and B the baseline (``diff = run − baseline``).
    ``progress(done, total)``: paired comparisons (run x metric) done, from ``(0, total)``."""
    if len(results) < 2:
        raise ValueError("compare needs at least two runs: a baseline and one more")
    baseline, others = results[0], results[1:]
    total = sum(len(comparable_metrics(run, baseline)[1]) for run in others)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    if progress is not None:
        progress(0, total)
    out = [compare(run, baseline, seed=seed, on_metric=tick) for run in others]
    names = {name for cmp in out for name in cmp["metrics"]}
    for name in names:
        rows = [cmp["metrics"].get(name) for cmp in out]
        adjusted = holm([row.get("p_value") if row else None for row in rows])
        for row, p in zip(rows, adjusted, strict=True):
            if row is not None:
                row["p_holm"] = p
    return out


#: The metric groups ``eval compare`` shows its rows under, in this order: (group, heading, the families it holds).
#: A metric of no listed family goes under ``other``, last.
METRIC_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "retrieval",
        "Retrieval: hit rate, recall, MRR, nDCG",
        ("hit_rate", "recall", "mrr", "ndcg", "hit_rate_permitted", "version_exact_hit_rate"),
    ),
    ("multi_hop", "Multi-hop", ("multi_hop_completeness", "full_chain_rate", "full_chain", "hop_position_hit_rate")),
    (
        "answers",
        "Answers: source coverage, citation precision, answer facts",
        ("source_coverage", "source_coverage_macro", "citation_precision", "answer_fact_recall", "claim_support"),
    ),
    ("safety", "Safety: leaks, stale versions", ("leak_rate", "stale_version_hit_rate", "trashed_hit_rate")),
    ("cost", "Cost and latency", ("latency_ms", "cost", "tokens")),
)
OTHER_GROUP = ("other", "Other metrics")
_GROUP_OF = {family: group for group, _, families in METRIC_GROUPS for family in families}


def metric_group(name: str) -> str:
    """``hit_rate@10`` -> ``retrieval``, ``leak_rate@5`` -> ``safety``, ``multi_hop_completeness[3]`` ->
    ``multi_hop``; ``other`` for a metric of no known family."""
    from drivebench.evaluator.report._common import family_of

    family = family_of(name.split("[", 1)[0])[0]
    return _GROUP_OF.get(family, OTHER_GROUP[0])


def grouped_metrics(names: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """``names`` as ``(group, heading, metrics)`` in group order (groups with no metric left out), each group's
    metrics in report order."""
    from drivebench.evaluator.report._common import ordered_metric_names

    headings = [(g, h) for g, h, _ in METRIC_GROUPS] + [OTHER_GROUP]
    ordered = ordered_metric_names(set(names))
    out = []
    for group, heading in headings:
        members = [n for n in ordered if metric_group(n) == group]
        if members:
            out.append((group, heading, members))
    return out


def add_groups(payload: dict[str, Any]) -> dict[str, Any]:
    """Give every row of an ``eval compare`` payload its ``family`` (the group it is shown under) and the payload
    its ``families``: ``[{"family", "heading", "metrics"}]`` in the order the tables show them."""
    names = [m for c in payload["comparisons"] for m in c["metrics"]]
    for c in payload["comparisons"]:
        for name, row in c["metrics"].items():
            row["family"] = metric_group(name)
    payload["families"] = [
        {"family": g, "heading": h, "metrics": members} for g, h, members in grouped_metrics(list(dict.fromkeys(names)))
    ]
    return payload


def _p_text(p: float | None) -> str:
    return "—" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def _cell(text: Any) -> str:
    """Text in a Markdown table cell: a ``|`` would end the cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def compare_markdown(payload: dict[str, Any], lower_is_better: Sequence[str] = ()) -> str:
    """The comparison as Markdown: one heading and one table per metric group, in ``payload["families"]`` order
    (``add_groups``); a row per (metric, run). ``lower_is_better``: metric prefixes where a fall is an
    improvement (the verdict column)."""
    lines = [
        "# Run comparison",
        "",
        f"Baseline: {_cell(payload['baseline'])}. Δ = run − baseline, 95% paired bootstrap CI, randomization p-value and "
        "its Holm adjustment over the runs compared. *better*/*worse*: Holm p < 0.05 and the CI excludes 0.",
        "",
    ]
    for fam in payload["families"]:
        lines += [f"## {fam['heading']}", ""]
        lines += [
            "| Metric | Run | baseline | run | Δ | 95% CI | p | p (Holm) | n | |",
            "|---|---|--:|--:|--:|--:|--:|--:|--:|---|",
        ]
        for name in fam["metrics"]:
            for c in payload["comparisons"]:
                r = c["metrics"].get(name) or {}
                if r.get("n", 0) == 0:
                    lines.append(f"| `{name}` | {_cell(c['run'])} | — | — | — | — | — | — | 0 | |")
                    continue
                ci, p = r.get("ci"), r.get("p_value")
                p_adj = r.get("p_holm", p)
                verdict = ""
                if ci is not None and p_adj is not None and p_adj < 0.05 and (ci[0] > 0 or ci[1] < 0):
                    good = (r["diff"] < 0) if name.startswith(tuple(lower_is_better)) else (r["diff"] > 0)
                    verdict = "*better*" if good else "*worse*"
                lines.append(
                    f"| `{name}` | {_cell(c['run'])} | {r['mean_b']:.3f} | {r['mean_a']:.3f} | {r['diff']:+.3f} | "
                    + (f"{ci[0]:+.3f} to {ci[1]:+.3f}" if ci else "—")
                    + f" | {_p_text(p)} | {_p_text(p_adj)} | {r['n']} | {verdict} |"
                )
        lines.append("")
    return "\n".join(lines)
