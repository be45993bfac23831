"""Evaluate a served simulator clean and under faults, and show the damage side by side.

``fault_comparison(sim, url, queries, faults)``:

1. switches the faults on through the control API (``PUT /_sim/faults`` with the admin token);
2. applies the scenario a state-dependent fault needs to show (``stale-acl``: revoke access to gold
   documents; ``stale-index``: publish new versions of pinned gold documents; see ``scenarios``);
3. evaluates the eval set (answer mode when asked, or when a citation fault needs answers);
4. switches every fault off (the server catches up: engine, index, dxf extraction) and evaluates
   the same queries again: the clean baseline;
5. returns both results, the paired ``compare`` and ``headline`` rows.

The leak oracle is the corpus's own policy, or, when the scenario changed grants, a permission
engine built from the drive's policy after the change (``evaluator.oracle.DriveOracle``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from drivebench.simulator.faults.catalog import Fault

ANSWER_FAULTS = frozenset({"citation-drop", "wrong-citation", "answer-unfiltered-context"})  # measured on answers


@dataclass
class FaultComparison:
    faults: list[Fault]
    clean: Any  # evaluator.evaluate.Evaluation
    faulted: Any
    comparison: dict[str, Any]
    mode: str
    scenario: dict[str, Any] = field(default_factory=dict)
    injected: dict[str, int] = field(default_factory=dict)

    def headline(self, k: int = 10) -> list[tuple[str, Any, Any]]:
        return headline_rows(self.clean, self.faulted, k)


def retries_of(records: Sequence[Any]) -> int:
    return sum(int((r.model_extra or {}).get("retries") or 0) for r in records)


def _stratum(result: dict[str, Any], stratum: str, value: str, metric: str) -> Any:
    return ((result.get("strata") or {}).get(stratum) or {}).get(value, {}).get(metric)


def headline_rows(clean: Any, faulted: Any, k: int = 10) -> list[tuple[str, Any, Any]]:
    """(label, clean value, faulted value) for the metrics the fault profiles are meant to move."""
    rows: list[tuple[str, Any, Any]] = []
    mc, mf = clean.result["metrics"], faulted.result["metrics"]
    for name in (f"hit_rate@{k}", f"leak_rate@{k}", f"stale_version_hit_rate@{k}"):
        rows.append((name, mc.get(name), mf.get(name)))
    file_types = sorted((clean.result.get("strata") or {}).get("file_type", {}))
    for ft in file_types:
        rows.append(
            (
                f"hit_rate@{k} · {ft}",
                _stratum(clean.result, "file_type", ft, f"hit_rate@{k}"),
                _stratum(faulted.result, "file_type", ft, f"hit_rate@{k}"),
            )
        )
    for name in ("source_coverage", "citation_precision", "answer_leak_rate", "latency_ms_p50", "latency_ms_p95"):
        rows.append((name, mc.get(name), mf.get(name)))
    rows.append(("errors", clean.result["counts"].get("errors"), faulted.result["counts"].get("errors")))
    rows.append(("retries", retries_of(clean.records), retries_of(faulted.records)))
    return rows


def set_faults_over_http(url: str, admin_token: str, faults: Sequence[Fault]) -> dict[str, Any]:
    resp = httpx.put(
        url.rstrip("/") + "/_sim/faults",
        json={"faults": [f.as_dict() for f in faults]},
        headers={"Authorization": f"Bearer {admin_token}"},
        timeout=600,
    )
    resp.raise_for_status()
    return dict(resp.json())


def fault_comparison(
    sim: Any,
    url: str,
    queries: Sequence[Any],
    faults: Sequence[Fault],
    *,
    ks: Sequence[int] = (1, 3, 5, 10),
    answers: bool = False,
    concurrency: int = 4,
    oracle: Callable[[Any, str], bool] | None = None,
    catalog: Any = None,
    progress: Callable[[str, int], Callable[[], None]] | None = None,
    run_info: dict[str, Any] | None = None,
    facts: Sequence[Any] | None = None,
    no_facts_reason: str | None = None,
) -> FaultComparison:
    from drivebench.evaluator.evaluate import evaluate
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.targets.http import HttpTarget
    from drivebench.experiments.fault_scenarios import (
        current_policy_oracle,
        publish_new_versions,
        revoke_gold_access,
    )

    names = {f.name for f in faults}
    mode = "answer" if answers or names & ANSWER_FAULTS else "recall"
    cfg = RunConfig(top_k=max(10, max(ks)), concurrency=concurrency, mode=mode)
    admin = sim.tokens.admin_token
    set_faults_over_http(url, admin, faults)
    scenario: dict[str, Any] = {}
    qs = list(queries)
    if "stale-acl" in names:
        _ = sim.engine  # the policy in force before the change (a server that has been answering)
        done = revoke_gold_access(sim, qs)
        scenario["revoked"] = done.changed
        oracle = current_policy_oracle(sim)
    if "stale-index" in names:
        done = publish_new_versions(sim, qs)
        scenario["new_versions"] = done.changed
        qs = done.queries

    def run(label: str) -> Any:
        tick = progress(label, len(qs)) if progress is not None else None
        return evaluate(
            HttpTarget(url, sim.tokens.eval_token),
            qs,
            ks=ks,
            run_config=cfg,
            oracle=oracle,
            catalog=catalog,
            progress=tick,
            run_info={**(run_info or {}), "faults": [f.full_spec() for f in faults] if label != "clean" else []},
            facts=facts,  # answer leaks (answer-unfiltered-context states forbidden facts citing permitted documents)
            no_facts_reason=no_facts_reason,
        )

    try:
        faulted = run("faulted")
        injected = dict(sim.faults.injected)
    finally:
        set_faults_over_http(url, admin, [])
    clean = run("clean")
    from drivebench.evaluator.scoring import compare

    return FaultComparison(
        list(faults), clean, faulted, compare(faulted.result, clean.result), mode, scenario, injected
    )


def comparison_table(cmp: FaultComparison, k: int = 10) -> Any:
    """A rich table: metric, clean, faulted, and for per-query metrics the paired diff, CI and p."""
    from rich.table import Table

    def fmt(v: Any, digits: int = 3) -> str:
        if v is None:
            return "—"
        return f"{v:.{digits}f}" if isinstance(v, float) else str(v)

    spec = ",".join(f.spec() for f in cmp.faults)
    table = Table(title=f"clean vs --fault {spec} ({cmp.mode} mode; Δ = faulted − clean)")
    rows = cmp.headline(k)
    table.add_column("metric", overflow="fold", min_width=min(30, max(len(r[0]) for r in rows)))
    for col in ("clean", "faulted", "Δ", "95% CI", "p"):
        table.add_column(col, justify="right", overflow="fold")  # at 80 columns: wrapped, never cut with "…"
    paired = cmp.comparison.get("metrics", {})
    for name, clean, faulted in rows:
        p = paired.get(name) or {}
        ci = p.get("ci")
        diff = p.get("diff")
        if diff is None and isinstance(clean, int | float) and isinstance(faulted, int | float):
            diff = faulted - clean
        changed = clean != faulted and clean is not None and faulted is not None
        style = "bold red" if changed else None
        table.add_row(
            name,
            fmt(clean),
            fmt(faulted),
            fmt(diff),
            f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "—",
            fmt(p.get("p_value"), 2),
            style=style,
        )
    return table


def corpus_catalog(corpus_dir: Any) -> Any:
    """The evaluator's catalog of a corpus directory (resolves cited names, trashed docs, strata)."""
    from drivebench.evaluator.catalog import Catalog
    from drivebench.formats.corpus import load_manifest

    return Catalog.from_manifest(load_manifest(corpus_dir))
