"""The article's three metrics, first: Hit Rate@K (is a right file in the top K), Source Recall Coverage (do
the answers cite the gold files: share of gold documents retrieved and cited) and Multi-hop Completeness by
hop count (how much of each chain the top K holds). A metric that could not be computed reads "not measured"
with the reason (no answers were asked for, no chain in the eval set), never 0."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table


def print_headline(result: Mapping[str, Any], console: Console) -> None:
    """The failures first (a failed query counts as a miss in every figure below), then the three metrics."""
    counts = result.get("counts") or {}
    failed = (counts.get("errors") or 0) + (counts.get("missing_from_run") or 0)
    if failed:
        console.print(
            f"[red]{failed} of {counts.get('queries', '?')} queries failed[/]: each counts as a miss below",
            highlight=False,
        )
    console.print(headline_table(result))


def _value(x: Any) -> str:
    return "not measured" if x is None else f"{x:.3f}"


def headline_table(result: Mapping[str, Any]) -> Table:
    metrics = result.get("metrics") or {}
    ks = (result.get("config") or {}).get("ks") or [1, 3, 5, 10]
    table = Table(title="The article's three metrics")
    table.add_column("metric", justify="left")
    table.add_column("value", justify="right")
    table.add_column("what it says", justify="left")
    for k in ks:
        table.add_row(f"Hit Rate@{k}", _value(metrics.get(f"hit_rate@{k}")), f"a gold document in the top {k}")
    coverage = metrics.get("source_coverage")
    counts = result.get("counts") or {}
    why = "share of gold documents the answer cites" if coverage is not None else "no answers: run with --answers"
    if coverage is None and counts.get("with_answer"):
        why = "no answer could be scored"
    table.add_row("Source Recall Coverage", _value(coverage), why)
    by_hops = metrics.get("multi_hop_completeness") or {}
    full = metrics.get("full_chain_rate") or {}
    k = (result.get("config") or {}).get("multi_hop_k", 10)
    if not by_hops:
        table.add_row("Multi-hop Completeness", "not measured", "no chain in the eval set")
    for hops in sorted(by_hops, key=lambda h: int(h) if str(h).isdigit() else 0):
        table.add_row(
            f"Multi-hop Completeness, {hops} hops",
            _value(by_hops[hops]),
            f"share of each chain's documents in the top {k}; whole chains {_value(full.get(hops))}",
        )
    return table
