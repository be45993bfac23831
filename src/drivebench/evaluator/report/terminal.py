"""Rich tables for the terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console, JustifyMethod, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from drivebench.evaluator.report.headline import print_headline
from drivebench.evaluator.result import RunResult, metrics_dict


def fit_table(table: Table, console: Console) -> RenderableType:
    """``table`` when every cell fits the console's width by wrapping between words; else the same rows laid out
    vertically (one block per row, a line per column: ``header  value``), so that a table too wide for an
    80-column terminal is neither cut with "…" nor folded inside its words."""
    unbounded = console.options.update_width(10_000)  # measured at the width the table would like, not clamped
    if Measurement.get(console, unbounded, table).minimum <= console.width:
        return table
    vertical = Table(
        title=table.title,
        caption=table.caption,
        show_header=False,
        box=box.SIMPLE,
        show_edge=False,
        title_justify="left",
        caption_justify="left",
    )
    vertical.add_column("field", style="bold", no_wrap=True)
    vertical.add_column("value", overflow="fold")
    columns = [(str(col.header), list(col.cells)) for col in table.columns]
    for i in range(table.row_count):
        fields = [(header, cells[i]) for header, cells in columns if i < len(cells) and cells[i] not in ("", None)]
        for j, (header, cell) in enumerate(fields):
            vertical.add_row(header.replace("\n", " "), cell, end_section=j == len(fields) - 1)
    return vertical


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def hit_rate_table(result: Mapping[str, Any], title: str = "Hit Rate@K") -> Table:
    """One row per K: the article's Hit Rate@K with its 95% bootstrap interval, plus recall/MRR/nDCG.

    Hit Rate is over all queries (failed ones as misses) and, in its own column, over answered ones."""
    from drivebench.evaluator.report import _common as c

    metrics, ci = result.get("metrics", {}), result.get("ci", {})
    answered = result.get("metrics_answered")
    measured = c.leak_measured(result)
    table = Table(title=title)
    cols = ["K", "Hit Rate@K (all)", "95% CI", *(["Hit Rate@K (answered)"] if answered is not None else [])]
    for col in (*cols, "Recall@K", "MRR@K", "nDCG@K", "Leak rate@K"):
        table.add_column(col, justify="right", overflow="fold")  # at 80 columns a word wraps, never ends in "…"
    for k in result.get("config", {}).get("ks", []):
        lo_hi = ci.get(f"hit_rate@{k}")
        interval = f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else "—"
        table.add_row(
            str(k),
            _fmt(metrics.get(f"hit_rate@{k}")),
            interval,
            *([_fmt(answered.get(f"hit_rate@{k}"))] if answered is not None else []),
            _fmt(metrics.get(f"recall@{k}")),
            _fmt(metrics.get(f"mrr@{k}")),
            _fmt(metrics.get(f"ndcg@{k}")),
            _fmt(metrics.get(f"leak_rate@{k}")) if measured else "not measured",
        )
    return table


def print_errors(result: Mapping[str, Any], console: Console) -> None:
    """The run's state, error count and rate, and a row per error kind (first in every report)."""
    from drivebench.evaluator.report import _common as c

    faults = c.faults_line(result)  # faults are part of the record
    if faults:
        style = "bold red" if (result.get("run_info") or {}).get("faults") else "dim"
        console.print(f"[{style}]{escape(faults)}[/]", highlight=False, soft_wrap=True)
    failed = c.is_failed(result)
    console.print(
        f"[{'bold red' if failed else 'green'}]{escape(c.status_line(result))}[/]", highlight=False, soft_wrap=True
    )
    pre = result.get("preflight")
    if pre and not pre.get("ok"):
        console.print(
            f"[red]preflight ({pre.get('kind')}):[/] {escape(str(pre.get('diagnosis')))}",
            highlight=False,
            soft_wrap=True,
        )
    rows = c.error_rows(result)
    if rows:
        console.print(_right_table("Failed queries by kind", c.ERROR_HEADER, rows, text_cols=1))
    line = c.unmapped_line(result)
    if line:
        unmapped_style = "yellow" if (result.get("unmapped") or {}).get("results") else None
        console.print(escape(line), style=unmapped_style, highlight=False, soft_wrap=True)


def print_verdict(result: Mapping[str, Any], console: Console) -> None:
    """The verdict, then a row per gate (first in the summary; nothing for a file without a verdict)."""
    from drivebench.evaluator.report import verdict as v

    if not v.has_verdict(result):
        return
    failed = v.is_failed(result)
    console.print(
        f"[{'bold red' if failed else 'bold green'}]{escape(v.verdict_line(result))}[/]",
        highlight=False,
        soft_wrap=True,
    )
    rows = v.gate_rows(result)
    if rows:
        console.print(_gates_table(rows))
    elif failed:
        for reason in v.reasons(result):
            console.print(f"[red]{escape(reason)}[/]", highlight=False, soft_wrap=True)


def _gates_table(rows: list[list[str]]) -> Table:
    from drivebench.evaluator.report import verdict as v

    table = Table(title="Gates")
    for col in v.GATE_HEADER:
        table.add_column(col, justify="right" if col in ("Value", "Threshold") else "left", overflow="fold")
    for row in rows:
        table.add_row(*(escape(x) for x in row), style="red" if row[1] == "FAILED" else "green")
    return table


def print_summary(result: RunResult | Mapping[str, Any], console: Console | None = None) -> None:
    result = metrics_dict(result)
    from drivebench.evaluator.report import _common as c
    from drivebench.evaluator.report import verdict as v

    console = console or Console()
    style = {"failed": "bold red", "passed": "bold green"}.get(v.line_state(result), "bold")
    console.print(f"[{style}]{escape(v.summary_line(result))}[/]", highlight=False, soft_wrap=True)  # the one line
    print_verdict(result, console)
    print_errors(result, console)
    print_headline(result, console)  # the article's three metrics first, whatever the target, then the rest
    console.print(hit_rate_table(result))
    counts = result.get("counts", {})
    metrics = result.get("metrics", {})
    lat = [metrics.get(f"latency_ms_{p}") for p in ("p50", "p95", "p99")]
    console.print(
        f"queries {counts.get('queries', '?')} · errors {counts.get('errors', 0)} · "
        f"missing {counts.get('missing_from_run', 0)} · latency ms p50/p95/p99 " + "/".join(_fmt(x) for x in lat)
    )
    console.print(escape(c.leak_sentence(result)), highlight=False, soft_wrap=True)
    answer_leaks = c.answer_leak_sentence(result)
    if answer_leaks is not None:  # facts of forbidden documents in the answers, whatever they cite
        style = "bold red" if (result.get("counts") or {}).get("queries_with_answer_leak") else "default"
        console.print(f"[{style}]{escape(answer_leaks)}[/]", highlight=False, soft_wrap=True)
    over = c.over_restriction_sentence(result)
    if over is not None:
        console.print(escape(over), highlight=False, soft_wrap=True)
    under = c.under_fill_sentence(result)
    if under is not None:
        by_share = ", ".join(f"{value} {rate} (n={n})" for value, n, rate in c.under_fill_rows(result))
        under += f"; by the asker's visible share: {by_share}" if by_share else ""
        console.print(escape(under), highlight=False, soft_wrap=True)
    if (result.get("counts") or {}).get("with_answer") or metrics.get("answer_fact_recall") is not None:
        console.print(escape(c.answer_fact_sentence(result)), highlight=False, soft_wrap=True)


# --- strata, leaks, multi-hop by hop count, citation diagnosis (reports owner) ---------------------


def _right_table(title: str, header: list[str], rows: list[list[str]], text_cols: int = 1) -> Table:
    table = Table(title=title)
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i < text_cols else "right")
    for row in rows:
        table.add_row(*row)
    return table


def strata_table(result: Mapping[str, Any], stratum: str) -> Table:
    """One stratum: a row per value with n and the main-K metrics."""
    from drivebench.evaluator.report import _common as c

    label = c.STRATUM_LABEL.get(stratum, stratum)
    table = _right_table(f"{label} ({stratum}), metrics at K={c.main_k(result)}", c.strata_header(result), [])
    if c.has_small(result):
        table.columns[-1].justify = "left"
        table.caption = c.SMALL_NOTE
    for row, small in zip(c.strata_rows(result, stratum), c.small_values(result, stratum), strict=True):
        table.add_row(*row, style="dim" if small else None)  # a group too small to read is greyed and marked
    return table


def strata_overview_table(result: Mapping[str, Any]) -> Table:
    """Every stratum in one table: stratum, value, n, Hit Rate / Recall / Leak rate at the main K; groups too small
    to read are greyed and marked in a last column."""
    from drivebench.evaluator.report import _common as c

    k = c.main_k(result)
    note = c.has_small(result)
    table = Table(title=f"Strata (K={k})", caption=c.SMALL_NOTE if note else None)
    columns: tuple[tuple[str, JustifyMethod], ...] = (("Stratum", "left"), ("Value", "left"), ("n", "right"))
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for col in (f"Hit Rate@{k}", f"Recall@{k}", f"MRR@{k}", f"Leak rate@{k}"):
        table.add_column(col, justify="right")
    if note:
        table.add_column("Note", justify="left")
    for stratum in c.strata_names(result):
        groups = (result.get("strata") or {}).get(stratum) or {}
        for i, value in enumerate(c.stratum_values(result, stratum)):
            g = groups[value]
            small = c.is_small(g)
            table.add_row(
                stratum if i == 0 else "",
                str(value),
                str(g.get("n", "—")),
                *(_fmt(g.get(f"{fam}@{k}")) for fam in ("hit_rate", "recall", "mrr", "leak_rate")),
                *([c.SMALL_MARK if small else ""] if note else []),
                style="dim" if small else None,
                end_section=i == len(groups) - 1,
            )
    return table


def multi_hop_table(result: Mapping[str, Any]) -> Table | None:
    """Multi-hop completeness, full-chain rate and per-position hit rate by hop count (None: no chains)."""
    from drivebench.evaluator.report import _common as c

    rows = c.hop_rows(result)
    if not rows:
        return None
    k = (result.get("config") or {}).get("multi_hop_k", c.main_k(result))
    return _right_table(f"Multi-hop completeness by hop count (K={k})", c.HOP_HEADER, rows)


def leak_table(result: Mapping[str, Any]) -> Table | None:
    """Leaked documents by secret level (None: no oracle, leaks not checked)."""
    from drivebench.evaluator.report import _common as c

    leaks = result.get("leaks")
    if leaks is None or not c.leak_measured(result):
        return None
    table = _right_table(
        c.leak_sentence(result),
        c.LEAK_LEVEL_HEADER,
        c.leak_level_rows(result),
    )
    if not table.rows:
        table.add_row("(any)", "0", "0")
    docs = c.leak_doc_rows(result, limit=10)
    if docs:
        table.caption = "most leaked: " + ", ".join(f"{escape(name)} ({lv}, {q}×)" for name, _, lv, q, *_ in docs)
        if c.leak_docs_unnamed(result):
            table.caption += f". {c.LEAK_ID_NOTE}"
        causes = c.leak_cause_rows(result)
        if causes:  # why they leaked, grouped: the leak oracle's causes with their (query, document) leaks
            table.caption += ". By cause: " + ", ".join(f"{escape(cause)} {n}" for cause, n, _ in causes)
    return table


def answer_leak_table(result: Mapping[str, Any]) -> Table | None:
    """The facts the answers stated that their askers may not know (None: none, or not measured)."""
    from drivebench.evaluator.report import _common as c

    rows = c.answer_leak_rows(result, limit=10)
    if not rows:
        return None
    table = _right_table(c.answer_leak_sentence(result) or "Answer leaks", c.ANSWER_LEAK_HEADER, rows, text_cols=4)
    table.caption = c.ANSWER_LEAK_NOTE
    return table


def citation_table(result: Mapping[str, Any]) -> Table | None:
    """The citation diagnosis matrix (None: the run has no answers)."""
    from drivebench.evaluator.report import _common as c

    m = c.citation_matrix(result)
    if m is None:
        return None
    table = Table(title="Citation diagnosis (gold documents)")
    table.add_column("", justify="left")
    table.add_column("cited", justify="right")
    table.add_column("not cited", justify="right")
    table.add_row("retrieved", f"{m['retrieved_cited']} success", f"{m['retrieved_not_cited']} generation gap")
    table.add_row("not retrieved", f"{m['cited_not_retrieved']} from elsewhere", f"{m['neither']} retrieval gap")
    table.caption = f"non-gold citations: {m['wrong']} wrong, {m['unresolvable']} unresolvable"
    gap = c.gap_sentence(result)
    if gap:
        table.caption += f". {escape(gap)}"
    return table


def print_details(
    result: RunResult | Mapping[str, Any], console: Console | None = None, *, strata: bool = False
) -> None:
    """Multi-hop, leak and citation tables when they apply; with ``strata`` every stratum too."""
    result = metrics_dict(result)
    console = console or Console()
    for table in (
        multi_hop_table(result),
        leak_table(result),
        answer_leak_table(result),
        citation_table(result),
        answer_outcomes_table(result),
    ):
        if table is not None:
            console.print(table)
    if strata and result.get("strata"):
        console.print(strata_overview_table(result))


def answer_outcomes_table(result: Mapping[str, Any]) -> Table | None:
    """Answer outcomes: count, rate and CI per outcome (None: no ``answer_outcomes`` block); a block that was
    not measured is a table saying why, never an empty one."""
    from drivebench.evaluator.report.markdown import answer_outcome_rows

    block = result.get("answer_outcomes")
    if block is None:
        return None
    rows = answer_outcome_rows(result)
    table = _right_table("Answer outcomes", ["Outcome", "Count", "Rate", "95% CI"], rows)
    if not block.get("measured"):
        table.caption = escape(f"not measured: {block.get('reason', 'unknown reason')}")
    else:
        table.caption = escape(
            f"{block['queries_judged']} answers judged; right = correct (answerable) or abstained (permission)"
        )
    return table
