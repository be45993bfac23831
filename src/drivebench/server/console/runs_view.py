"""The evaluation history for the console: runs, one run's report, a metric's trend, a comparison of two runs.

Read-only over ``evaluator.history.HistoryStore`` (the file ``drivebench eval`` records into): the console never
writes it and never creates it. The history file is ``app.state.ui_history`` when set, else
``$DRIVEBENCH_HISTORY`` (unless ``none``), else ``reports/history.sqlite3`` (the CLI's default), relative to the server's
working directory. Charts and the report are the HTML report's own code (``evaluator.report``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drivebench.drive.errors import InvalidRequest, NotFound
from drivebench.evaluator.history import DEFAULT_HISTORY, HistoryStore, RunSummary, trend_lines
from drivebench.evaluator.report._common import ordered_metric_names
from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.scoring import compare
from drivebench.evaluator.trends import line_name, metric_gates, trend_chart, trend_failures

HISTORY_ENV = "DRIVEBENCH_HISTORY"
HEADLINE = "hit_rate@10"
LOWER_IS_BETTER = ("leak_rate", "answer_leak_rate", "stale_version_hit_rate", "trashed_hit_rate", "latency_ms")


def history_path(configured: str | Path | None) -> Path:
    env = os.environ.get(HISTORY_ENV)
    if env and env.strip().lower() == "none":  # "do not record" for the CLI: read the default file
        env = None
    return Path(configured or env or DEFAULT_HISTORY)


def open_store(path: Path) -> HistoryStore | None:
    """The history at ``path``, or None when there is no such file (nothing recorded yet)."""
    return HistoryStore(path) if path.is_file() else None


@dataclass(frozen=True)
class RunRow:
    run: RunSummary
    headline: float | None


def run_rows(store: HistoryStore, metric: str = HEADLINE) -> list[RunRow]:
    values = {p.run.id: p.value for p in store.trend(metric, include_failed=True)}
    return [RunRow(r, values.get(r.id)) for r in reversed(store.runs())]  # newest first


def _run_id(store: HistoryStore, ref: str | int) -> int:
    try:
        return store.resolve(ref)
    except KeyError as exc:
        raise NotFound(str(exc.args[0])) from None
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


def report_html(store: HistoryStore, ref: str | int) -> str:
    """The run's HTML report (the same page ``drivebench eval report`` writes)."""
    run_id = _run_id(store, ref)
    return render_html(store.load(run_id), title=f"drivebench run #{run_id}")


@dataclass(frozen=True)
class TrendRow:
    point: Any  # history.TrendPoint
    line: int  # 1-based: the line (target, corpus version, label) the run belongs to
    failure: str | None  # why the run counts as failed (run failed, gate failed, leaked), None when it did not


@dataclass(frozen=True)
class Trend:
    metric: str
    rows: list[TrendRow]  # oldest first
    lines: list[str]  # "target T · corpus C · label L", in line order
    gates: list[Any]  # trends.GateLine: the thresholds drawn
    chart: str  # inline SVG: one polyline per line, gates dashed, failed runs red
    include_failed: bool
    failed_left_out: int


def trend(store: HistoryStore, metric: str, include_failed: bool = False) -> Trend:
    """``metric`` over the runs as ``eval trend`` shows it: one line per target, corpus version and label, the
    gates recorded on that metric as threshold lines, failed runs marked."""
    names = store.metric_names()
    if metric not in names:
        raise InvalidRequest(f"unknown metric {metric!r}; recorded: {', '.join(names) or 'none'}")
    points = store.trend(metric, include_failed=include_failed)
    lines = trend_lines(points)
    line_of = {p.run.id: n for n, line in enumerate(lines, 1) for p in line.points}
    failures = trend_failures(points, store.leak_counts([p.run.id for p in points]))
    gates = metric_gates(metric, [p.run for p in points])
    chart = trend_chart("trend", metric, lines, gates, failures)
    left_out = 0 if include_failed else len(store.trend(metric, include_failed=True)) - len(points)
    return Trend(
        metric,
        [TrendRow(p, line_of[p.run.id], failures.get(p.run.id)) for p in points],
        [line_name(line) for line in lines],
        gates,
        chart,
        include_failed,
        left_out,
    )


@dataclass(frozen=True)
class CompareRow:
    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci: list[float] | None
    p_value: float | None
    verdict: str  # better | worse | "" (not significant)


def comparison(store: HistoryStore, a: str, b: str) -> tuple[int, int, int, list[CompareRow]]:
    """(run A, run B, paired queries, rows): ``scoring.compare``, the function ``eval compare`` prints."""
    ida, idb = _run_id(store, a), _run_id(store, b)
    res_a, res_b = store.load(ida), store.load(idb)
    if not res_a.get("per_query") or not res_b.get("per_query"):
        raise InvalidRequest("both runs need per-query values to be compared")
    out = compare(res_a, res_b)
    rows = []
    for name in ordered_metric_names(out["metrics"]):
        r = out["metrics"][name]
        ci, p, diff = r.get("ci"), r.get("p_value"), r.get("diff")
        verdict = ""
        if diff is not None and ci is not None and p is not None and p < 0.05 and (ci[0] > 0 or ci[1] < 0):
            good = diff < 0 if name.startswith(LOWER_IS_BETTER) else diff > 0
            verdict = "better" if good else "worse"
        rows.append(CompareRow(name, r.get("n", 0), r.get("mean_a"), r.get("mean_b"), diff, ci, p, verdict))
    return ida, idb, int(out["queries"]), rows
