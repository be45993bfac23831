"""Inline SVG charts for the HTML report, drawn in Python: no JavaScript, no fonts, no network.

Every chart is one ``<svg>`` element with a stable ``id`` (``chart-hit-rate``, ``chart-multi-hop``,
``chart-strata-<stratum>``, ``chart-leaks``, ``chart-citations``), a ``<title>`` for screen readers,
and a ``<title>`` on each bar or cell so hovering shows the exact number. Rates use a fixed 0–1
axis so charts of different runs compare by eye; counts scale to their maximum.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from drivebench.evaluator.report import _common as c

PALETTE = ("#2563eb", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d")
LEAK_COLOR = "#dc2626"
AXIS = "#6b7280"
GRID = "#e5e7eb"
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans',sans-serif"


@dataclass
class Series:
    name: str
    values: Sequence[float | None]
    cis: Sequence[Sequence[float] | None] | None = None
    color: str = PALETTE[0]


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _n(x: float) -> str:
    """Compact coordinates: at most one decimal."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def text_width(text: str, size: float = 12.0) -> float:
    """Rough rendered width: wide (CJK) characters 1 em, others 0.6 em."""
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else 0.6 * size for ch in str(text))


def _open(chart_id: str, title: str, width: float, height: float) -> list[str]:
    return [
        f'<svg id="{_e(chart_id)}" class="chart" role="img" '
        f'aria-labelledby="{_e(chart_id)}-title" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" style="{FONT}">',
        f'<title id="{_e(chart_id)}-title">{_e(title)}</title>',
        f'<text x="8" y="18" font-size="14" font-weight="600" fill="#111827">{_e(title)}</text>',
    ]


def empty_chart(chart_id: str, title: str, message: str, width: float = 520, height: float = 90) -> str:
    """A placeholder chart (same id) saying why there is nothing to draw."""
    width = max(width, text_width(title, 14) + 24, text_width(message, 13) + 24)
    parts = _open(chart_id, title, width, height)
    parts.append(
        f'<text x="{_n(width / 2)}" y="{_n(height / 2 + 14)}" font-size="13" fill="{AXIS}" '
        f'text-anchor="middle">{_e(message)}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exp:
            return step * exp
    return 10 * exp


def _ticks(y_max: float, count: int = 5) -> list[float]:
    return [y_max * i / count for i in range(count + 1)]


def _tick_label(v: float, y_max: float) -> str:
    if y_max <= 1.0:
        return f"{v:.1f}"
    return f"{v:g}" if v == int(v) else f"{v:.1f}"


def bar_chart(
    chart_id: str,
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    y_max: float | None = 1.0,
    y_label: str = "",
    width: float | None = None,
    height: float = 280,
) -> str:
    """Vertical grouped bars, one group per category, one bar per series, optional CI error bars."""
    if not categories or not series:
        return empty_chart(chart_id, title, "nothing to plot")
    values = [v for s in series for v in s.values if v is not None]
    highs = [ci[1] for s in series for ci in (s.cis or []) if ci]
    top = y_max if y_max is not None else _nice_max(max([*values, *highs, 0.0]))
    has_ci = any(s.cis for s in series)
    left, right, top_pad, bottom = 48.0, 16.0, 48.0, 44.0 + (14.0 if has_ci else 0.0)
    group_w = max(36.0, 22.0 * len(series) + 18.0, max(text_width(cat) for cat in categories) + 12)
    width = width or max(520.0, left + right + group_w * len(categories), text_width(title, 14) + 24)
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    group_w = plot_w / len(categories)
    bar_w = min(28.0, (group_w - 12.0) / len(series))

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - min(max(v / top, 0.0), 1.0))

    parts = _open(chart_id, title, width, height)
    # legend
    lx = left
    for s in series:
        parts.append(f'<rect x="{_n(lx)}" y="26" width="10" height="10" fill="{s.color}"/>')
        parts.append(f'<text x="{_n(lx + 14)}" y="35" font-size="11" fill="#374151">{_e(s.name)}</text>')
        lx += 24 + text_width(s.name, 11)
    if has_ci:
        parts.append(
            f'<text x="{_n(width - right)}" y="{_n(height - 6)}" font-size="11" fill="{AXIS}" text-anchor="end">'
            "whiskers: 95% bootstrap CI</text>"
        )
    for t in _ticks(top):
        ty = y(t)
        parts.append(f'<line x1="{_n(left)}" x2="{_n(width - right)}" y1="{_n(ty)}" y2="{_n(ty)}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{_n(left - 6)}" y="{_n(ty + 4)}" font-size="10" fill="{AXIS}" text-anchor="end">'
            f"{_tick_label(t, top)}</text>"
        )
    if y_label:
        parts.append(
            f'<text transform="translate(12 {_n(top_pad + plot_h / 2)}) rotate(-90)" font-size="11" '
            f'fill="{AXIS}" text-anchor="middle">{_e(y_label)}</text>'
        )
    base = y(0.0)
    for gi, cat in enumerate(categories):
        gx = left + gi * group_w
        start = gx + (group_w - bar_w * len(series)) / 2
        for si, s in enumerate(series):
            v = s.values[gi] if gi < len(s.values) else None
            bx = start + si * bar_w
            cx = bx + bar_w / 2
            ci = s.cis[gi] if s.cis and gi < len(s.cis) else None
            if v is None:
                parts.append(
                    f'<text x="{_n(cx)}" y="{_n(base - 4)}" font-size="10" fill="{AXIS}" text-anchor="middle">'
                    "n/a</text>"
                )
                continue
            tip = f"{s.name} · {cat}: {v:.3f}" + (f" (95% CI {ci[0]:.3f}–{ci[1]:.3f})" if ci else "")
            parts.append(
                f'<rect class="bar" x="{_n(bx + 1)}" y="{_n(y(v))}" width="{_n(bar_w - 2)}" '
                f'height="{_n(max(base - y(v), 0.0))}" fill="{s.color}"><title>{_e(tip)}</title></rect>'
            )
            if ci:
                lo, hi = y(ci[0]), y(ci[1])
                parts.append(
                    f'<path class="ci" d="M{_n(cx)} {_n(lo)}V{_n(hi)}M{_n(cx - 4)} {_n(lo)}H{_n(cx + 4)}'
                    f'M{_n(cx - 4)} {_n(hi)}H{_n(cx + 4)}" stroke="#111827" stroke-width="1.2" fill="none"/>'
                )
        parts.append(
            f'<text x="{_n(gx + group_w / 2)}" y="{_n(base + 16)}" font-size="12" fill="#374151" '
            f'text-anchor="middle">{_e(cat)}</text>'
        )
    parts.append(f'<line x1="{_n(left)}" x2="{_n(width - right)}" y1="{_n(base)}" y2="{_n(base)}" stroke="{AXIS}"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def hbar_chart(
    chart_id: str,
    title: str,
    rows: Sequence[tuple[str, Sequence[float | None], str]],
    *,
    series: Sequence[tuple[str, str]] = (("", PALETTE[0]),),
    x_max: float | None = 1.0,
    width: float = 440,
) -> str:
    """Horizontal bars: one row per ``(label, values, note)``, one bar per ``series`` entry
    ``(name, color)``; the note (e.g. ``n=12``) is printed after the last bar."""
    if not rows:
        return empty_chart(chart_id, title, "nothing to plot", width)
    values = [v for _, vs, _ in rows for v in vs if v is not None]
    top = x_max if x_max is not None else _nice_max(max([*values, 0.0]))
    named = [s for s in series if s[0]]
    label_w = min(180.0, max(text_width(label) for label, _, _ in rows) + 12)
    shown_max = "1.000" if top <= 1.0 else f"{top:g}"
    note_w = max(text_width(" / ".join([shown_max] * len(vs)) + " · " + note, 11) for _, vs, note in rows) + 14
    bar_h = 14.0 if len(series) == 1 else 11.0
    row_h = bar_h * len(series) + 8
    left, right, top_pad = label_w + 8, note_w, 34.0 + (16.0 if named else 0.0)
    height = top_pad + row_h * len(rows) + 24
    plot_w = max(120.0, width - left - right)
    width = max(left + plot_w + right, text_width(title, 14) + 24)
    parts = _open(chart_id, title, width, height)
    lx = left
    for name, color in named:
        parts.append(f'<rect x="{_n(lx)}" y="28" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{_n(lx + 14)}" y="37" font-size="11" fill="#374151">{_e(name)}</text>')
        lx += 24 + text_width(name, 11)
    for t in _ticks(top, 5):
        tx = left + plot_w * t / top
        parts.append(
            f'<line x1="{_n(tx)}" x2="{_n(tx)}" y1="{_n(top_pad - 4)}" y2="{_n(height - 20)}" stroke="{GRID}"/>'
        )
        parts.append(
            f'<text x="{_n(tx)}" y="{_n(height - 6)}" font-size="10" fill="{AXIS}" text-anchor="middle">'
            f"{_tick_label(t, top)}</text>"
        )
    for i, (label, vs, note) in enumerate(rows):
        ry = top_pad + i * row_h
        parts.append(
            f'<text x="{_n(left - 8)}" y="{_n(ry + row_h / 2 + 4)}" font-size="12" fill="#374151" '
            f'text-anchor="end">{_e(label)}</text>'
        )
        end_x = left
        shown_all = []
        for si, ((name, color), v) in enumerate(zip(series, vs, strict=False)):
            by = ry + 4 + si * bar_h
            if v is None:
                shown_all.append("n/a")
                continue
            w = plot_w * min(max(v / top, 0.0), 1.0)
            shown = f"{v:.3f}" if top <= 1.0 else f"{v:g}"
            shown_all.append(shown)
            tip = f"{label}: {name + ' ' if name else ''}{shown} ({note})"
            parts.append(
                f'<rect class="bar" x="{_n(left)}" y="{_n(by)}" width="{_n(max(w, 0.5))}" '
                f'height="{_n(bar_h - 2)}" fill="{color}"><title>{_e(tip)}</title></rect>'
            )
            end_x = max(end_x, left + w)
        parts.append(
            f'<text x="{_n(end_x + 6)}" y="{_n(ry + row_h / 2 + 4)}" font-size="11" fill="#111827">'
            f'{_e(" / ".join(shown_all))}<tspan fill="{AXIS}"> · {_e(note)}</tspan></text>'
        )
    parts.append(
        f'<line x1="{_n(left)}" x2="{_n(left)}" y1="{_n(top_pad - 4)}" y2="{_n(height - 20)}" stroke="{AXIS}"/>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def matrix_chart(
    chart_id: str,
    title: str,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    cells: Sequence[Sequence[tuple[int, str]]],
    *,
    footer: str = "",
) -> str:
    """A heat-map table: ``cells[r][c] = (count, caption)``; darker = more documents."""
    cell_w, cell_h = 170.0, 64.0
    left = max(text_width(r) for r in row_labels) + 24
    top_pad = 56.0
    width = left + cell_w * len(col_labels) + 16
    height = top_pad + cell_h * len(row_labels) + (34 if footer else 12)
    total = sum(n for row in cells for n, _ in row) or 1
    peak = max((n for row in cells for n, _ in row), default=0) or 1
    parts = _open(chart_id, title, width, height)
    for ci, label in enumerate(col_labels):
        parts.append(
            f'<text x="{_n(left + ci * cell_w + cell_w / 2)}" y="{_n(top_pad - 10)}" font-size="12" '
            f'font-weight="600" fill="#374151" text-anchor="middle">{_e(label)}</text>'
        )
    for ri, label in enumerate(row_labels):
        ry = top_pad + ri * cell_h
        parts.append(
            f'<text x="{_n(left - 10)}" y="{_n(ry + cell_h / 2 + 4)}" font-size="12" font-weight="600" '
            f'fill="#374151" text-anchor="end">{_e(label)}</text>'
        )
        for ci, (count, caption) in enumerate(cells[ri]):
            cx = left + ci * cell_w
            alpha = 0.08 + 0.8 * count / peak
            ink = "#ffffff" if alpha > 0.5 else "#111827"
            share = 100.0 * count / total
            parts.append(
                f'<rect class="cell" x="{_n(cx + 2)}" y="{_n(ry + 2)}" width="{_n(cell_w - 4)}" '
                f'height="{_n(cell_h - 4)}" rx="4" fill="#2563eb" fill-opacity="{alpha:.2f}">'
                f"<title>{_e(caption)}: {count} ({share:.0f}%)</title></rect>"
            )
            parts.append(
                f'<text x="{_n(cx + cell_w / 2)}" y="{_n(ry + 30)}" font-size="18" font-weight="600" '
                f'fill="{ink}" text-anchor="middle">{count}</text>'
            )
            parts.append(
                f'<text x="{_n(cx + cell_w / 2)}" y="{_n(ry + 48)}" font-size="11" fill="{ink}" '
                f'text-anchor="middle">{_e(caption)} · {share:.0f}%</text>'
            )
    if footer:
        parts.append(f'<text x="{_n(left)}" y="{_n(height - 12)}" font-size="11" fill="{AXIS}">{_e(footer)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# --- the report's charts ---------------------------------------------------------------------------


def hit_rate_chart(result: Mapping[str, Any]) -> str:
    """Hit Rate@K, Recall@K and nDCG@K for every K, each with its 95% CI whisker."""
    metrics, ci = result.get("metrics") or {}, result.get("ci") or {}
    ks = [k for k in c.ks_of(result) if f"hit_rate@{k}" in metrics]
    if not ks:
        return empty_chart("chart-hit-rate", "Hit Rate@K", "no ranking metrics in this run")
    series = [
        Series(label, [metrics.get(f"{fam}@{k}") for k in ks], [ci.get(f"{fam}@{k}") for k in ks], color)
        for (fam, label), color in zip(
            (("hit_rate", "Hit Rate"), ("recall", "Recall"), ("ndcg", "nDCG")), PALETTE, strict=False
        )
    ]
    return bar_chart("chart-hit-rate", "Hit Rate, Recall and nDCG by K", [f"K={k}" for k in ks], series)


def multi_hop_chart(result: Mapping[str, Any]) -> str:
    metrics = result.get("metrics") or {}
    comp = metrics.get("multi_hop_completeness") or {}
    full = metrics.get("full_chain_rate") or {}
    hops = sorted(set(comp) | set(full), key=c._int_or)
    title = f"Multi-hop completeness by hop count (K={(result.get('config') or {}).get('multi_hop_k', '?')})"
    if not hops:
        return empty_chart("chart-multi-hop", title, "no multi-hop questions in this eval set")
    counts = c.hop_counts(result)
    cats = [f"{h} hops (n={counts.get(str(h), '?')})" for h in hops]
    series = [
        Series("Completeness", [comp.get(h) for h in hops], color=PALETTE[0]),
        Series("Full chain", [full.get(h) for h in hops], color=PALETTE[1]),
    ]
    return bar_chart("chart-multi-hop", title, cats, series)


def _n_note(group: Mapping[str, Any]) -> str:
    """``n=12``; a group too small to read says so beside its bars."""
    n = f"n={group.get('n', '?')}"
    return f"{n}, too few to read" if c.is_small(group) else n


def strata_chart(result: Mapping[str, Any], stratum: str) -> str:
    """Hit Rate at the smallest K and at the main K, per value of ``stratum``."""
    k = c.main_k(result)
    ks = c.ks_of(result)
    low = min(ks) if ks and min(ks) < k else None
    groups = (result.get("strata") or {}).get(stratum) or {}
    label = c.STRATUM_LABEL.get(stratum, stratum)
    chart_id = f"chart-strata-{stratum}"
    shown = [low, k] if low is not None else [k]
    title = f"Hit Rate@{' and @'.join(map(str, shown))} by {label.lower()}"
    rows = [
        (v, [groups[v].get(f"hit_rate@{kk}") for kk in shown], _n_note(groups[v]))
        for v in c.stratum_values(result, stratum)
    ]
    if not rows:
        return empty_chart(chart_id, title, "no queries")
    series = [(f"Hit Rate@{kk}", color) for kk, color in zip(shown, (PALETTE[4], PALETTE[0]), strict=False)]
    return hbar_chart(chart_id, title, rows, series=series)


def leak_chart(result: Mapping[str, Any]) -> str:
    title = "Leaked documents by secret level"
    leaks = result.get("leaks")
    if leaks is None or not c.leak_measured(result):
        return empty_chart("chart-leaks", title, c.oracle_text(result, "leak"))
    rows = c.leak_level_rows(result)
    if not rows:
        return empty_chart("chart-leaks", title, "no leaks: every returned document was permitted")
    data = [(lv, [float(docs)], f"{leaks_n} leak(s)") for lv, docs, leaks_n in rows]
    return hbar_chart("chart-leaks", title, data, series=(("documents", LEAK_COLOR),), x_max=None)


def citation_chart(result: Mapping[str, Any]) -> str:
    title = "Citation diagnosis: where each gold document got lost"
    m = c.citation_matrix(result)
    if m is None:
        return empty_chart("chart-citations", title, "the run has no answers: nothing to diagnose")
    cells = [
        [(m["retrieved_cited"], "success"), (m["retrieved_not_cited"], "generation gap")],
        [(m["cited_not_retrieved"], "cited from elsewhere"), (m["neither"], "retrieval gap")],
    ]
    footer = f"non-gold citations: {m['wrong']} wrong, {m['unresolvable']} unresolvable"
    return matrix_chart(
        "chart-citations", title, ["retrieved", "not retrieved"], ["cited", "not cited"], cells, footer=footer
    )


def report_charts(result: Mapping[str, Any]) -> dict[str, str]:
    """Every chart of the HTML report, by element id, in page order."""
    charts = {
        "chart-hit-rate": hit_rate_chart(result),
        "chart-multi-hop": multi_hop_chart(result),
    }
    for stratum in c.strata_names(result):
        charts[f"chart-strata-{stratum}"] = strata_chart(result, stratum)
    charts["chart-leaks"] = leak_chart(result)
    charts["chart-citations"] = citation_chart(result)
    return charts
