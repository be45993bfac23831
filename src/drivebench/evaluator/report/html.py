"""Self-contained HTML report of one evaluation (``report.html`` beside ``metrics.json``).

One file that opens offline: inline CSS, inline SVG charts drawn by ``charts.py``, no JavaScript,
no fonts, images or stylesheets from anywhere. A Content-Security-Policy meta tag forbids every
external load, so a regression that adds one shows up as a console error in a browser (the e2e
test loads the page in headless Chromium and fails on any console message). The page skeleton, the stylesheet
and the tables are ``page.py``'s, shared with the probe and audit pages; the header carries the one-line verdict
(``verdict.summary_line``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report import charts, page
from drivebench.evaluator.report import verdict as v
from drivebench.evaluator.report.markdown import HIT_RATE_HEADER, hit_rate_rows
from drivebench.evaluator.result import RunResult, metrics_dict

CSP = page.CSP


def _e(text: Any) -> str:
    return page.e(text)


html_table = page.table
_section = page.section


def _cards(result: Mapping[str, Any]) -> str:
    out = []
    for label, value, ci in c.headline(result):
        bad = (label.startswith("Leak") and value not in ("—", "0.000", "not measured")) or (
            label == "Error rate" and not value.startswith("0.000")
        )
        out.append(
            f'<div class="card{" bad" if bad else ""}"><div class="label">{_e(label)}</div>'
            f'<div class="value">{_e(value)}</div><div class="ci">{"95% CI " + _e(ci) if ci != "—" else "&nbsp;"}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>' if out else ""


def _faults_banner(result: Mapping[str, Any]) -> str:
    """The faults the run was measured under, in the header (red when any)."""
    line = c.faults_line(result)
    if not line:
        return ""
    cls = "status-failed" if (result.get("run_info") or {}).get("faults") else "note"
    return f'<p class="{cls}" id="run-faults"><strong>{_e(line)}</strong></p>'


def _verdict_section(result: Mapping[str, Any]) -> str:
    """The verdict, the failed gates' reasons and the gates table (failed rows marked)."""
    failed = v.is_failed(result)
    rows = v.gate_rows(result)
    head = "".join(f'<th style="text-align:left">{_e(h)}</th>' for h in v.GATE_HEADER)
    body = "".join(
        f'<tr class="gate-{"failed" if row[1] == "FAILED" else "passed"}">'
        + "".join(f'<td class="text{" status-failed" if row[1] == "FAILED" else ""}">{_e(x)}</td>' for x in row)
        + "</tr>"
        for row in rows
    )
    reasons = "".join(f"<li>{_e(r)}</li>" for r in v.reasons(result))
    return _section(
        "verdict",
        "Verdict",
        f'<p class="{"status-failed" if failed else "status-ok"}" id="verdict-line"><strong>'
        f"{_e(v.verdict_line(result))}</strong></p>",
        f'<ul class="status-failed">{reasons}</ul>' if reasons else "",
        f'<div class="table-wrap"><table id="table-gates"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        "</div>"
        if rows
        else "",
    )


def render_html(result: RunResult | Mapping[str, Any], title: str = "drivebench evaluation report") -> str:
    result = metrics_dict(result)
    svgs = charts.report_charts(result)
    info = result.get("run_info") or {}
    counts = result.get("counts") or {}
    subtitle = " · ".join(
        str(x)
        for x in (
            info.get("target"),
            info.get("label") and f"label {info['label']}",
            info.get("corpus") and f"corpus {info['corpus']}",
            info.get("started_at"),
            counts.get("queries") is not None and f"{counts['queries']} queries",
        )
        if x
    )
    k = c.main_k(result)
    sections: list[str] = [_verdict_section(result)] if v.has_verdict(result) else []  # the verdict opens the report

    err_rows = c.error_rows(result)
    pre = result.get("preflight")
    unmapped = c.unmapped_line(result)
    sections.append(
        _section(
            "errors",
            "Errors",
            f'<p class="{"status-failed" if c.is_failed(result) else "status-ok"}"><strong>'
            f"{_e(c.status_line(result))}</strong></p>",
            f'<p class="note">Preflight ({_e(pre.get("kind"))}): {_e(pre.get("diagnosis"))}</p>'
            if pre and not pre.get("ok")
            else "",
            html_table(c.ERROR_HEADER, err_rows, text_cols=1, table_id="table-errors") if err_rows else "",
            f"<p>{_e(unmapped)}</p>" if unmapped else "",
            html_table(c.UNMAPPED_HEADER, c.unmapped_rows(result), table_id="table-unmapped")
            if c.unmapped_rows(result)
            else "",
        )
    )
    sections.append(
        _section(
            "summary",
            "Summary",
            _cards(result),
            f'<p class="note">Errors {_e(counts.get("errors", 0))} · timeouts {_e(counts.get("timeouts", 0))} · '
            f"missing from run {_e(counts.get('missing_from_run', 0))} · queries without gold "
            f"{_e(counts.get('no_gold', 0))}</p>",
        )
    )
    sections.append(
        _section(
            "hit-rate",
            "Hit Rate@K",
            '<div class="grid"><div class="fig">',
            svgs["chart-hit-rate"],
            "</div><div>",
            html_table(HIT_RATE_HEADER, hit_rate_rows(result), table_id="table-hit-rate"),
            '<p class="note">Whiskers and intervals: 95% percentile bootstrap over queries.</p>',
            "</div></div>",
        )
    )
    hop_rows = c.hop_rows(result)
    sections.append(
        _section(
            "multi-hop",
            "Multi-hop completeness by hop count",
            '<div class="grid"><div class="fig">',
            svgs["chart-multi-hop"],
            "</div><div>",
            html_table(c.HOP_HEADER, hop_rows, table_id="table-multi-hop")
            if hop_rows
            else '<p class="note">No multi-hop questions in this eval set.</p>',
            "</div></div>",
        )
    )
    strata_parts = [f'<p class="note">Every metric at K={k}; n = queries in the group.</p>']
    if c.has_small(result):
        strata_parts.append(f'<p class="note small-note">{_e(c.SMALL_NOTE)} They are greyed.</p>')
    for stratum in c.strata_names(result):
        label = c.STRATUM_LABEL.get(stratum, stratum)
        strata_parts += [
            f'<h3 id="stratum-{_e(stratum)}">{_e(label)} <code>{_e(stratum)}</code></h3>',
            '<div class="grid"><div class="fig">',
            svgs[f"chart-strata-{stratum}"],
            "</div><div>",
            html_table(
                c.strata_header(result),
                c.strata_rows(result, stratum),
                table_id=f"table-strata-{stratum}",
                row_classes=["small" if small else "" for small in c.small_values(result, stratum)],
            ),
            "</div></div>",
        ]
    if len(strata_parts) == 1:
        strata_parts.append('<p class="note">No strata in this metrics file.</p>')
    sections.append(_section("strata", "Strata", *strata_parts))

    leaks = result.get("leaks")
    if leaks is None or not c.leak_measured(result):
        leak_body = [f'<p class="note">{_e(c.leak_sentence(result))}.</p>', svgs["chart-leaks"]]
    else:
        level_rows = c.leak_level_rows(result)
        leak_body = [
            f"<p>{_e(c.leak_sentence(result))} (depth: {_e(leaks.get('depth', 'all returned results'))}).</p>",
            '<div class="grid"><div class="fig">',
            svgs["chart-leaks"],
            "</div><div>",
            html_table(c.LEAK_LEVEL_HEADER, level_rows, table_id="table-leaks") if level_rows else "",
            "</div></div>",
        ]
        cause_rows = c.leak_cause_rows(result)
        if cause_rows:
            leak_body += [
                "<h3>Leaks by cause</h3>",
                html_table(c.LEAK_CAUSE_HEADER, cause_rows, table_id="table-leak-causes"),
                f'<p class="note">{_e(c.LEAK_CAUSE_NOTE)}</p>',
            ]
        docs = c.leak_doc_rows(result)
        if docs:
            leak_body += [
                "<h3>Leaked documents</h3>",
                html_table(
                    c.LEAK_DOC_HEADER,
                    docs,
                    text_cols=3,
                    cell_classes=["", "", "", "", "", "text wide"],
                    table_id="table-leaked-documents",
                    stack=True,
                    row_classes=["row-failed"] * len(docs),
                ),
                f'<p class="note">{_e(c.LEAK_ID_NOTE)}</p>' if c.leak_docs_unnamed(result) else "",
            ]
    sections.append(_section("leaks", "Permission leaks", *leak_body))
    answer_leaks = c.answer_leak_sentence(result)
    if answer_leaks is not None:  # facts of forbidden documents stated in the answers, whatever they cite
        rows = c.answer_leak_rows(result)
        answer_body = [f"<p>{_e(answer_leaks)}.</p>"]
        if rows:
            answer_body += [
                html_table(
                    c.ANSWER_LEAK_HEADER,
                    rows,
                    text_cols=4,
                    cell_classes=["", "", "", "text wide"],
                    table_id="table-answer-leaks",
                    stack=True,
                    row_classes=["row-failed"] * len(rows),
                ),
                f'<p class="note">{_e(c.ANSWER_LEAK_NOTE)}</p>',
            ]
        sections.append(_section("answer-leaks", "Answer leaks", *answer_body))
    over = c.over_restriction_sentence(result)
    if over is not None:  # the opposite of a leak: documents the asker may see that the target withheld
        withheld = c.over_restricted_rows(result)
        over_body = [f"<p>{_e(over)}.</p>"]
        if withheld:
            over_body.append(
                html_table(c.OVER_RESTRICTED_HEADER, withheld, text_cols=3, table_id="table-withheld-documents")
            )
        sections.append(_section("over-restriction", "Over-restriction", *over_body))
    under = c.under_fill_sentence(result)
    if under is not None:  # short lists for askers who see little: a filter applied after a fixed top-k
        by_share = c.under_fill_rows(result)
        under_body = [f"<p>{_e(under)}.</p>"]
        if by_share:
            under_body.append(html_table(c.UNDER_FILL_HEADER, by_share, table_id="table-under-fill"))
        sections.append(_section("under-fill", "Under-fill", *under_body))

    failed = c.failed_rows(result)  # user data (questions, file names): html_table escapes every cell
    failed_body = [f"<p>{_e(' '.join(c.failed_sentences(result)))}</p>"]
    if failed:  # one rendering per order, switched by CSS-only radio buttons (the report has no script)
        views = []
        for key, label, rows in c.failed_orders(result):
            table = html_table(
                c.FAILED_HEADER,
                rows,
                text_cols=len(c.FAILED_HEADER),
                table_id="table-failed" if key == "query" else f"table-failed-by-{key}",
                stack=True,
                row_classes=["row-failed" if row[6] else "" for row in rows],
            )
            views.append((label, table))
        failed_body.append(page.sort_views("failed", views))
        section = c.failed_section(result) or {}
        failed_body.append(
            f'<p class="note">Every missed or leaking query, with its gold and top results: '
            f"<code>{_e(section.get('file') or 'failed_queries.jsonl')}</code> beside metrics.json.</p>"
        )
    sections.append(_section("failed-queries", "Queries that missed or leaked", *failed_body))

    m = c.citation_matrix(result)
    cit_body = [svgs["chart-citations"]]
    if m is not None:
        cit_body.append(
            '<p class="note">Generation gap: retrieved but not cited. Retrieval gap: never retrieved. '
            "Counts are gold documents of queries with gold.</p>"
        )
    if c.gap_sentence(result):
        cit_body.append(f'<p class="note" id="larger-gap">{_e(c.gap_sentence(result) or "")}.</p>')
    cit_body.append(f'<p class="note" id="answer-facts">{_e(c.answer_fact_sentence(result))}.</p>')
    sections.append(_section("citations", "Citation diagnosis", *cit_body))

    sections.append(
        _section(
            "all-metrics",
            "All metrics",
            html_table(
                ["Metric", "Label", "Value", "95% CI"], c.metric_rows(result), text_cols=2, table_id="table-metrics"
            ),
            "<details><summary>Definitions</summary>",
            html_table(["Metric", "Meaning"], c.definition_rows(result), text_cols=2),
            "</details>",
        )
    )
    sections.append(
        _section(
            "run",
            "Run",
            '<div class="grid"><div class="fig">',
            html_table(["Key", "Value"], c.run_info_rows(result), text_cols=2, table_id="table-run-info"),
            "</div><div>",
            html_table(["Count", "Value"], c.count_rows(result), table_id="table-counts"),
            "</div></div>",
        )
    )
    return page.page(
        kind="eval",
        title=title,
        subtitle=subtitle,
        verdict=(v.line_state(result), v.summary_line(result)),
        banner=_faults_banner(result),
        sections=sections,
        footer=f"{result.get('format', '')} · generated by drivebench {info.get('drivebench_version', '')}",
    )
