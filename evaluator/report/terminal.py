"""Rich tables for the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def hit_rate_table(result: dict[str, Any], title: str = "Hit Rate@K") -> Table:
    """One row per K: the article's Hit Rate@K with its 95% bootstrap interval, plus recall/MRR/nDCG."""
    metrics, ci = result.get("metrics", {}), result.get("ci", {})
    table = Table(title=title)
    for col in ("K", "Hit Rate@K", "95% CI", "Recall@K", "MRR@K", "nDCG@K", "Leak rate@K"):
        table.add_column(col, justify="right")
    for k in result.get("config", {}).get("ks", []):
        lo_hi = ci.get(f"hit_rate@{k}")
        interval = f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else "—"
        table.add_row(
            str(k),
            _fmt(metrics.get(f"hit_rate@{k}")),
            interval,
            _fmt(metrics.get(f"recall@{k}")),
            _fmt(metrics.get(f"mrr@{k}")),
            _fmt(metrics.get(f"ndcg@{k}")),
            _fmt(metrics.get(f"leak_rate@{k}")),
        )
    return table


def print_summary(result: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    console.print(hit_rate_table(result))
    counts = result.get("counts", {})
    metrics = result.get("metrics", {})
    lat = [metrics.get(f"latency_ms_{p}") for p in ("p50", "p95", "p99")]
    console.print(
        f"queries {counts.get('queries', '?')} · errors {counts.get('errors', 0)} · "
        f"missing {counts.get('missing_from_run', 0)} · latency ms p50/p95/p99 " + "/".join(_fmt(x) for x in lat)
    )
