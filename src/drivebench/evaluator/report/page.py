"""The one page design of every HTML report drivebench writes: the evaluation (``report.html``), the leak probe
(``probe.html``) and the oversharing audit (``oversharing.html``).

One skeleton (``page``): a dark header with the title, a subtitle and the one-line verdict, coloured by its state;
sections as cards; tables (``table``) inside their own horizontally scrolling box, so a wide table never widens
the page (it reads at 390 px: the page itself never scrolls sideways); the same colours everywhere: red for a
failure, green for a pass, amber for a warning, grey italics for a group too small to read.

Self-contained and offline: inline CSS, no JavaScript, nothing loaded from anywhere; a Content-Security-Policy
forbids every external load and every script. The "sortable" tables are several renderings of the same rows
switched by CSS-only radio buttons (``sort_views``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STYLE_ID = "drivebench-report-style"  # every report's <style> carries it: one design, one stylesheet
VERDICT_ID = "verdict-headline"  # the one-line verdict in every report's header
STATES = ("failed", "passed", "warn", "none")

CSS = """
:root { --ink:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f9fafb; --card:#ffffff; --accent:#2563eb;
  --bad:#b91c1c; --bad-bg:#fef2f2; --ok:#15803d; --ok-bg:#f0fdf4; --warn:#b45309; --warn-bg:#fffbeb; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust:100%; text-size-adjust:100%; }
body { margin:0; background:var(--bg); color:var(--ink); overflow-wrap:anywhere;
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif; }
header.report-header { background:#111827; color:#f9fafb; padding:20px 32px; }
header.report-header h1 { margin:0 0 4px; font-size:22px; }
header.report-header p { margin:4px 0 0; color:#d1d5db; font-size:13px; }
header.report-header p.verdict { display:inline-block; margin:10px 0 0; padding:6px 12px; border-radius:6px;
  font-size:14px; font-weight:650; color:#111827; background:#e5e7eb; border-left:6px solid var(--muted); }
header.report-header p.verdict.state-failed { background:var(--bad-bg); color:var(--bad); border-left-color:var(--bad); }
header.report-header p.verdict.state-passed { background:var(--ok-bg); color:var(--ok); border-left-color:var(--ok); }
header.report-header p.verdict.state-warn { background:var(--warn-bg); color:var(--warn); border-left-color:var(--warn); }
header.report-header p.status-failed { color:#fca5a5; }
main { max-width:1200px; margin:0 auto; padding:16px 32px 48px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:16px 0;
  min-width:0; }
h2 { font-size:17px; margin:0 0 12px; }
h3 { font-size:14px; margin:16px 0 8px; }
p { margin:6px 0; }
.note { color:var(--muted); font-size:12px; margin:6px 0 0; }
.cards { display:flex; flex-wrap:wrap; gap:12px; }
.card { flex:1 1 150px; border:1px solid var(--line); border-radius:8px; padding:10px 14px; background:#fff; }
.card .label { color:var(--muted); font-size:12px; }
.card .value { font-size:24px; font-weight:650; }
.card .ci { color:var(--muted); font-size:11px; }
.card.bad .value { color:var(--bad); }
.status-failed, .bad { color:var(--bad); font-weight:600; }
.status-ok, .ok { color:var(--ok); font-weight:600; }
.warn { color:var(--warn); font-weight:600; }
.table-wrap { max-width:100%; overflow-x:auto; margin:4px 0 12px; border:1px solid var(--line); border-radius:6px; }
table { border-collapse:collapse; font-size:12.5px; width:100%; }
th, td { padding:4px 8px; border-bottom:1px solid var(--line); text-align:right; vertical-align:top; }
th { background:#f3f4f6; font-weight:600; vertical-align:bottom; overflow-wrap:normal; }
th:first-child, td:first-child { text-align:left; }
td { white-space:nowrap; }
td.left { text-align:left; }
td.wide { width:30%; min-width:22em; }
td.text { text-align:left; white-space:normal; min-width:8em; max-width:36em; overflow-wrap:anywhere; }
tr.small td { color:var(--muted); font-style:italic; }
tr.gate-failed td, td.status-failed { color:var(--bad); }
tr.row-failed td:first-child, tr.gate-failed td:first-child { box-shadow:inset 4px 0 0 var(--bad); }
tr.row-passed td:first-child, tr.gate-passed td:first-child { box-shadow:inset 4px 0 0 var(--ok); }
code { font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:12px; }
.grid { display:flex; flex-wrap:wrap; gap:20px; align-items:flex-start; }
.grid > div { flex:1 1 640px; min-width:0; max-width:100%; }
.grid > div.fig { flex:0 1 auto; }
svg.chart { max-width:100%; height:auto; background:#fff; }
details summary { cursor:pointer; font-weight:600; margin:4px 0; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:8px; }
.sortable > input.sort-key { position:absolute; opacity:0; width:1px; height:1px; margin:0; }
.sortable .sort-bar { display:flex; flex-wrap:wrap; gap:6px; align-items:center; margin:8px 0; font-size:12.5px; }
.sortable .sort-bar label { border:1px solid var(--line); border-radius:999px; padding:2px 10px; cursor:pointer;
  background:#fff; }
.sortable .sort-view { display:none; }
__SORT_RULES__
@media (max-width: 640px) {
  header.report-header { padding:14px 12px; }
  header.report-header h1 { font-size:19px; }
  main { padding:8px 8px 32px; }
  section { padding:12px 10px; margin:10px 0; }
  .card .value { font-size:20px; }
  .grid > div { flex-basis:100%; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display:block; width:100%; }
  table.stack thead { display:none; }
  table.stack tr { border-bottom:1px solid var(--line); padding:6px 0; }
  table.stack tr.row-failed { box-shadow:inset 4px 0 0 var(--bad); }
  table.stack tr.row-failed td:first-child { box-shadow:none; }
  table.stack td, table.stack td.wide { border:0; text-align:left; white-space:normal; min-width:0; max-width:none; width:100%; padding:2px 10px; }
  table.stack td::before { content:attr(data-label) ": "; font-weight:600; color:var(--muted); }
  table.stack td:empty { display:none; }
}
@media print { section { break-inside:avoid; } header.report-header { background:none; color:var(--ink); }
  .table-wrap { overflow:visible; } .sortable .sort-bar { display:none; } }
"""

SORT_SLOTS = 4  # radio buttons a sortable block may have (the CSS rules are written for this many)


def _sort_rules() -> str:
    """``.sortable`` blocks switch between renderings of one table without script: radio ``k`` shows view ``k``."""
    lines = []
    for k in range(SORT_SLOTS):
        lines.append(f".sortable > input.sort-key-{k}:checked ~ .sort-view-{k} {{ display:block; }}")
        lines.append(
            f".sortable > input.sort-key-{k}:checked ~ .sort-bar label.sort-label-{k} "
            "{ background:var(--ink); color:#fff; border-color:var(--ink); }"
        )
        lines.append(
            f".sortable > input.sort-key-{k}:focus-visible ~ .sort-bar label.sort-label-{k} "
            "{ outline:2px solid var(--accent); outline-offset:2px; }"
        )
    return "\n".join(lines)


STYLESHEET = CSS.replace("__SORT_RULES__", _sort_rules())


def e(text: Any) -> str:
    """HTML-escaped text (quotes too: safe in an attribute)."""
    return escape(str(text), quote=True)


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    text_cols: int = 1,
    table_id: str | None = None,
    row_classes: Sequence[str] | None = None,
    cell_classes: Sequence[str] | None = None,
    stack: bool = False,
) -> str:
    """A table in its own scrolling box: the first ``text_cols`` columns are left-aligned text that wraps, the
    rest numbers; ``row_classes`` gives each row a class (``""`` for none), ``cell_classes`` each column one
    (``text``: wrapping text, ``left``: a short label kept on one line, ``wide``: text that needs room).
    With ``stack`` a narrow screen shows each row as a card of "header: value" lines (for wide tables of long
    text, unreadable when squeezed). Every header and cell is escaped."""
    tid = f' id="{e(table_id)}"' if table_id else ""
    tid += ' class="stack"' if stack else ""

    def is_text(i: int) -> bool:
        classes = (cell_classes[i] if cell_classes is not None and i < len(cell_classes) else "").split()
        return i < text_cols or "text" in classes or "left" in classes

    head = "".join(
        f'<th style="text-align:left">{e(h)}</th>' if is_text(i) else f"<th>{e(h)}</th>" for i, h in enumerate(header)
    )
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, x in enumerate(row):
            cls = ["text"] if i < text_cols else []
            if cell_classes is not None and i < len(cell_classes) and cell_classes[i]:
                cls.append(cell_classes[i])
            attr = f' class="{" ".join(cls)}"' if cls else ""
            if stack and i < len(header):
                attr += f' data-label="{e(header[i])}"'
            cells.append(f"<td{attr}>{e(x)}</td>")
        row_class = row_classes[r] if row_classes is not None and r < len(row_classes) else ""
        body.append(f'<tr class="{e(row_class)}">{"".join(cells)}</tr>' if row_class else f"<tr>{''.join(cells)}</tr>")
    return f'<div class="table-wrap"><table{tid}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def section(section_id: str, title: str, *body: str) -> str:
    return f'<section id="{e(section_id)}"><h2>{e(title)}</h2>\n' + "\n".join(b for b in body if b) + "\n</section>"


def sort_views(name: str, views: Sequence[tuple[str, str]], legend: str = "Sort by") -> str:
    """One table rendered once per sort order (``views``: ``(label, html)``, the first shown by default), switched
    by radio buttons and CSS alone (the reports carry no script). At most ``SORT_SLOTS`` views."""
    views = list(views)[:SORT_SLOTS]
    radios = "".join(
        f'<input type="radio" class="sort-key sort-key-{k}" name="sort-{e(name)}" id="sort-{e(name)}-{k}"'
        f"{' checked' if k == 0 else ''}>"
        for k in range(len(views))
    )
    labels = "".join(
        f'<label class="sort-label-{k}" for="sort-{e(name)}-{k}">{e(label)}</label>'
        for k, (label, _) in enumerate(views)
    )
    bodies = "".join(
        f'<div class="sort-view sort-view-{k}" data-sort="{e(label)}">{body}</div>'
        for k, (label, body) in enumerate(views)
    )
    return (
        f'<div class="sortable" id="sortable-{e(name)}">{radios}'
        f'<div class="sort-bar"><span class="note">{e(legend)}:</span>{labels}</div>{bodies}</div>'
    )


def page(
    *,
    kind: str,
    title: str,
    subtitle: str = "",
    verdict: tuple[str, str] | None = None,
    banner: str = "",
    sections: Sequence[str] = (),
    footer: str = "",
    meta: Mapping[str, str] | None = None,
) -> str:
    """A whole report page. ``kind`` is ``eval``, ``probe`` or ``audit``; ``verdict`` is ``(state, line)`` with
    ``state`` one of ``STATES``; ``banner`` is extra header HTML (already escaped); ``sections`` are the body's
    ``<section>`` blocks (``section``)."""
    head = [f"<h1>{e(title)}</h1>"]
    if subtitle:
        head.append(f'<p class="subtitle">{e(subtitle)}</p>')
    if verdict is not None:
        state, line = verdict
        state = state if state in STATES else "none"
        head.append(f'<p class="verdict state-{state}" id="{VERDICT_ID}" data-state="{state}">{e(line)}</p>')
    if banner:
        head.append(banner)
    extra = "".join(f'<meta name="{e(k)}" content="{e(v)}">' for k, v in (meta or {}).items())
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="drivebench">',
            f'<meta name="drivebench-report" content="{e(kind)}">',
            extra,
            f"<title>{e(title)}</title>",
            f'<style id="{STYLE_ID}">{STYLESHEET}</style>',
            "</head>",
            "<body>",
            f'<header class="report-header" data-report="{e(kind)}">{"".join(head)}</header>',
            "<main>",
            *sections,
            "</main>",
            f"<footer>{e(footer)}</footer>" if footer else "",
            "</body>",
            "</html>",
            "",
        ]
    )
