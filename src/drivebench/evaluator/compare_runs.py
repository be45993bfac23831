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
