"""What ``eval trend`` and the console's trend page show beside the values: the gates recorded with the runs (as
threshold lines), the runs that failed (a failed run, a failed gate, a leak), and the trend as one SVG line chart.

A gate is drawn on a metric's chart when it names that metric (``hit_rate@10<0.80`` on ``hit_rate@10``): its
threshold is a dashed line, labelled with the condition a run must meet to pass (``hit_rate@10 ≥ 0.80``). Gates
differ between runs (a threshold raised later); each distinct threshold is one line, saying on how many runs it was
checked.

A point is *failed* when its run failed (``status``: its figures are not the target's), failed a gate, or leaked
(queries returned documents their principal may not open; a run recorded with ``--allow-leaks`` passed its gates and
still leaked). The chart draws such a point red with a cross; the terminal marks it ``✗``.

The chart is inline SVG (no script): one ``<polyline class="trend-line">`` per line (a target on a corpus version
under a label, ``history.trend_lines``), a ``<circle class="point">`` per run (``point failed`` when it failed), a
``<line class="threshold">`` per gate threshold, and a ``<title>`` on each point stating the run, value and failure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drivebench.evaluator.gates import pass_condition
from drivebench.evaluator.history import RunSummary, TrendLine, TrendPoint
from drivebench.evaluator.report import charts
from drivebench.evaluator.report.charts import AXIS, GRID, LEAK_COLOR, PALETTE

FAILED_MARK = "✗"
FAILED_MARK_ASCII = "x"
THRESHOLD_COLOR = "#b45309"
MAX_WIDTH = 1200.0  # px: the widest trend chart; beyond it, not every run is labelled


@dataclass(frozen=True)
class GateLine:
    """One threshold of a gate on the trend's metric: ``expr`` as recorded (``hit_rate@10<0.80``), the threshold,
    the condition a run passes with (``hit_rate@10 ≥ 0.80``) and the ids of the runs it was checked on."""

    expr: str
    op: str
    threshold: float
    passes: str
    runs: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "expr": self.expr,
            "op": self.op,
            "threshold": self.threshold,
            "passes": self.passes,
            "runs": list(self.runs),
        }


def metric_gates(metric: str, runs: Sequence[RunSummary]) -> list[GateLine]:
    """The distinct gates on ``metric`` recorded with ``runs`` (by operator and threshold, in first-seen order)."""
    seen: dict[tuple[str, float], tuple[str, list[int]]] = {}
    for run in runs:
        for g in run.gates:
            op, threshold = g.get("op"), g.get("threshold")
            if g.get("name") != metric or not isinstance(op, str) or not isinstance(threshold, int | float):
                continue
            key = (op, float(threshold))
            expr, ids = seen.setdefault(key, (str(g.get("expr") or f"{metric}{op}{threshold:g}"), []))
            if run.id not in ids:
                ids.append(run.id)
    out = []
    for (op, threshold), (expr, ids) in seen.items():
        passes = pass_condition(op)
        out.append(GateLine(expr, op, threshold, f"{metric} {passes} {threshold:g}", tuple(ids)))
    return out


def failure(run: RunSummary, leaks: Mapping[int, int]) -> str | None:
    """Why the run counts as failed on a trend (``None`` when it does not): the run failed, its failed gates, its
    leaks."""
    reasons = []
    if run.failed:
        reasons.append("run failed")
    failed_gates = [str(g.get("expr")) for g in run.failed_gates]
    if failed_gates:
        reasons.append("gate failed: " + ", ".join(failed_gates))
    leaked = leaks.get(run.id, 0)
    leak_gates = ("queries_with_leak", "queries_with_answer_leak")
    if leaked and not any(g.get("name") in leak_gates for g in run.failed_gates):  # else a gate said so
        reasons.append(f"{leaked} quer{'y' if leaked == 1 else 'ies'} leaked")
    return "; ".join(reasons) or None


def line_name(line: TrendLine) -> str:
    """``target T · corpus acme@3 · label nightly`` (``—`` for what a run did not record)."""
    return f"target {line.target or '—'} · corpus {line.corpus_version or '—'} · label {line.label or '—'}"


def trend_chart(
    chart_id: str,
    metric: str,
    lines: Sequence[TrendLine],
    gates: Sequence[GateLine] = (),
    failures: Mapping[int, str] | None = None,
    *,
    bounded: bool | None = None,
) -> str:
    """``metric`` over the runs as one polyline per line, in run order (x: every run of every line, oldest first;
    a run's x is the same on every line), with the gate thresholds dashed and the failed runs red."""
    failures = failures or {}
    title = f"{metric} across runs"
    points = sorted((p for line in lines for p in line.points), key=lambda p: (p.run.when, p.run.id))
    if not points:
        return charts.empty_chart(chart_id, title, "no runs")
    values = [p.value for p in points if p.value is not None]
    if bounded is None:
        bounded = all(0.0 <= v <= 1.0 for v in values) and all(0.0 <= g.threshold <= 1.0 for g in gates)
    top = 1.0 if bounded else charts._nice_max(max([*values, *(g.threshold for g in gates), 0.0]))
    xs = {p.run.id: i for i, p in enumerate(points)}
    names = [f"L{n} {line_name(line)}" for n, line in enumerate(lines, 1)] if len(lines) > 1 else []
    left, right, legend_h = 48.0, 16.0, 16.0 * len(names)
    gate_labels = [f"gate {g.expr}: passes at {g.passes}" for g in gates]
    top_pad, bottom = 40.0 + legend_h, 40.0
    step = max(28.0, max((charts.text_width(f"#{p.run.id}", 10) + 8 for p in points), default=28.0))
    # many runs: the chart stops growing at MAX_WIDTH and labels every stride-th run (the points keep their titles)
    stride = max(1, math.ceil(step * len(points) / (MAX_WIDTH - left - right)))
    width = max(
        560.0,
        min(MAX_WIDTH, left + right + step * len(points)),
        charts.text_width(title, 14) + 24,
        *(charts.text_width(n, 11) + left + 30 for n in names),
    )
    height = 300.0 + legend_h
    plot_w, plot_h = width - left - right, height - top_pad - bottom

    def x(i: int) -> float:
        return left + plot_w * (i + 0.5) / len(points)

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - min(max(v / top, 0.0), 1.0))

    parts = charts._open(chart_id, title, width, height)
    for n, name in enumerate(names):
        color = PALETTE[n % len(PALETTE)]
        ly = 30 + 16 * n
        parts.append(f'<rect x="{charts._n(left)}" y="{ly}" width="10" height="10" fill="{color}"/>')
        parts.append(
            f'<text x="{charts._n(left + 14)}" y="{ly + 9}" font-size="11" fill="#374151">{charts._e(name)}</text>'
        )
    for t in charts._ticks(top):
        ty = y(t)
        parts.append(
            f'<line x1="{charts._n(left)}" x2="{charts._n(width - right)}" y1="{charts._n(ty)}" '
            f'y2="{charts._n(ty)}" stroke="{GRID}"/>'
        )
        parts.append(
            f'<text x="{charts._n(left - 6)}" y="{charts._n(ty + 4)}" font-size="10" fill="{AXIS}" '
            f'text-anchor="end">{charts._tick_label(t, top)}</text>'
        )
    for g, label in zip(gates, gate_labels, strict=True):
        gy = y(g.threshold)
        parts.append(
            f'<line class="threshold" data-expr="{charts._e(g.expr)}" x1="{charts._n(left)}" '
            f'x2="{charts._n(width - right)}" y1="{charts._n(gy)}" y2="{charts._n(gy)}" stroke="{THRESHOLD_COLOR}" '
            f'stroke-width="1.5" stroke-dasharray="6 4"><title>{charts._e(label)}</title></line>'
        )
        parts.append(
            f'<text x="{charts._n(width - right - 4)}" y="{charts._n(gy - 4)}" font-size="10" '
            f'fill="{THRESHOLD_COLOR}" text-anchor="end">{charts._e(label)}</text>'
        )
    for n, line in enumerate(lines, 1):
        color = PALETTE[(n - 1) % len(PALETTE)]
        coords = " ".join(
            f"{charts._n(x(xs[p.run.id]))},{charts._n(y(p.value))}" for p in line.points if p.value is not None
        )
        parts.append(
            f'<polyline class="trend-line" data-line="L{n}" points="{coords}" fill="none" stroke="{color}" '
            f'stroke-width="2"><title>{charts._e(line_name(line))}</title></polyline>'
        )
        for p in line.points:
            if p.value is None:
                continue
            cx, cy = x(xs[p.run.id]), y(p.value)
            why = failures.get(p.run.id)
            tip = f"run #{p.run.id} · {p.run.when[:16].replace('T', ' ')} · {metric} = {p.value:.3f}"
            tip += f" · FAILED: {why}" if why else ""
            fill, r = (LEAK_COLOR, 5.5) if why else (color, 4.0)
            parts.append(
                f'<circle class="point{" failed" if why else ""}" data-run="{p.run.id}" cx="{charts._n(cx)}" '
                f'cy="{charts._n(cy)}" r="{r}" fill="{fill}" stroke="#ffffff" stroke-width="1">'
                f"<title>{charts._e(tip)}</title></circle>"
            )
            if why:  # a cross as well as the colour: red alone is lost on some eyes and in print
                parts.append(
                    f'<path d="M{charts._n(cx - 3)} {charts._n(cy - 3)}L{charts._n(cx + 3)} {charts._n(cy + 3)}'
                    f'M{charts._n(cx - 3)} {charts._n(cy + 3)}L{charts._n(cx + 3)} {charts._n(cy - 3)}" '
                    'stroke="#ffffff" stroke-width="1.5"/>'
                )
    base = y(0.0)
    for p in points[::-1][::stride][::-1]:  # the newest run always labelled
        parts.append(
            f'<text x="{charts._n(x(xs[p.run.id]))}" y="{charts._n(base + 16)}" font-size="10" fill="#374151" '
            f'text-anchor="middle">#{p.run.id}</text>'
        )
    parts.append(
        f'<line x1="{charts._n(left)}" x2="{charts._n(width - right)}" y1="{charts._n(base)}" '
        f'y2="{charts._n(base)}" stroke="{AXIS}"/>'
    )
    if failures:
        parts.append(
            f'<text x="{charts._n(left)}" y="{charts._n(height - 6)}" font-size="11" fill="{AXIS}">'
            "red with a cross: a failed run (the run failed, a gate failed, or it leaked)</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def trend_failures(points: Sequence[TrendPoint], leaks: Mapping[int, int]) -> dict[int, str]:
    """``{run id: why it failed}`` for the failed runs among ``points``."""
    out = {}
    for p in points:
        why = failure(p.run, leaks)
        if why:
            out[p.run.id] = why
    return out
