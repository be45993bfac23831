"""Markdown report of one evaluation (``report.md`` beside ``metrics.json``).

Same sections as the HTML report, as GitHub-flavoured tables: run info, headline numbers, Hit
Rate@K with 95% CIs, multi-hop completeness by hop count, every stratum, permission leaks, the
citation diagnosis, every metric with its CI, and the counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report import verdict as v
from drivebench.evaluator.result import RunResult, metrics_dict


def _cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub table; ``align`` is one letter per column (``l``/``r``), default first left, rest right."""
    align = align or "l" + "r" * (len(header) - 1)
    marks = [":---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def hit_rate_rows(result: Mapping[str, Any]) -> list[list[str]]:
    metrics, ci = result.get("metrics") or {}, result.get("ci") or {}
    answered = result.get("metrics_answered") or {}
    measured = c.leak_measured(result)
    return [
        [
            str(k),
            c.fmt(metrics.get(f"hit_rate@{k}")),
            c.fmt_ci(ci.get(f"hit_rate@{k}")),
            c.fmt(answered.get(f"hit_rate@{k}")),
            c.fmt(metrics.get(f"recall@{k}")),
            c.fmt(metrics.get(f"mrr@{k}")),
            c.fmt(metrics.get(f"ndcg@{k}")),
            c.fmt(metrics.get(f"leak_rate@{k}")) if measured else "not measured",
        ]
        for k in c.ks_of(result)
    ]


HIT_RATE_HEADER = [
    "K",
    "Hit Rate@K (all queries)",
    "95% CI",
    "Hit Rate@K (answered)",
    "Recall@K",
    "MRR@K",
    "nDCG@K",
    "Leak rate@K",
]


def verdict_section(result: Mapping[str, Any]) -> list[str]:
    """``## Verdict``: the verdict line, the failed gates' reasons, the gates table (nothing for an older file)."""
    if not v.has_verdict(result):
        return []
    out = ["## Verdict", "", f"**{v.verdict_line(result)}**", ""]
    out += [*(f"- {_cell(r)}" for r in v.reasons(result)), ""] if v.reasons(result) else []
    rows = v.gate_rows(result)
    out += [md_table(v.GATE_HEADER, rows, "llrrl"), ""] if rows else []
    return out


def render_markdown(result: RunResult | Mapping[str, Any], title: str = "drivebench evaluation report") -> str:
    result = metrics_dict(result)
    out: list[str] = [f"# {title}", "", f"**{_cell(v.summary_line(result))}**", ""]  # the one line a reader needs
    out += verdict_section(result)  # the verdict opens the report
    info = result.get("run_info") or {}
    if info.get("target"):
        out += [
            f"Target `{info['target']}`" + (f", started {info['started_at']}" if info.get("started_at") else ""),
            "",
        ]
    faults = c.faults_line(result)  # faults are part of the record
    if faults:
        out += [f"**{faults}**" if info.get("faults") else faults, ""]

    out += ["## Errors", "", f"**{c.status_line(result)}**", ""]
    pre = result.get("preflight")
    if pre and not pre.get("ok"):
        out += [f"Preflight ({pre.get('kind')}): {pre.get('diagnosis')}", ""]
    rows = c.error_rows(result)
    if rows:
        out += [md_table(c.ERROR_HEADER, rows, "lrrll"), ""]
    line = c.unmapped_line(result)
    if line:
        out += [line, ""]
        if c.unmapped_rows(result):
            out += [md_table(c.UNMAPPED_HEADER, c.unmapped_rows(result), "lr"), ""]
    scope = result.get("metrics_scope") or {}
    if scope:
        out += [f"Metrics are {scope.get('metrics')}; the answered column is {scope.get('metrics_answered')}.", ""]

    out += ["## Run", "", md_table(["Key", "Value"], c.run_info_rows(result), "ll"), ""]

    head = c.headline(result)
    if head:
        out += ["## Headline", "", md_table(["Metric", "Value", "95% CI"], head), ""]

    out += ["## Hit Rate@K", "", md_table(HIT_RATE_HEADER, hit_rate_rows(result)), ""]
    out += ["95% CIs are percentile bootstrap intervals over queries.", ""]

    mh_k = (result.get("config") or {}).get("multi_hop_k", c.main_k(result))
    out += [f"## Multi-hop completeness by hop count (K={mh_k})", ""]
    rows = c.hop_rows(result)
    out += [md_table(c.HOP_HEADER, rows) if rows else "_No multi-hop questions in this eval set._", ""]

    out += [f"## Strata (metrics at K={c.main_k(result)})", ""]
    names = c.strata_names(result)
    if not names:
        out += ["_No strata in this metrics file._", ""]
    elif c.has_small(result):
        out += [f"_{c.SMALL_NOTE}_", ""]
    for stratum in names:
        out += [
            f"### {c.STRATUM_LABEL.get(stratum, stratum)} (`{stratum}`)",
            "",
            md_table(c.strata_header(result), c.strata_rows(result, stratum)),
            "",
        ]

    out += ["## Permission leaks", ""]
    leaks = result.get("leaks")
    if leaks is None or not c.leak_measured(result):
        out += [f"_{c.leak_sentence(result)}._", ""]
    else:
        out += [f"{c.leak_sentence(result)} (depth: {leaks.get('depth', 'all returned results')}).", ""]
        level_rows = c.leak_level_rows(result)
        if level_rows:
            out += ["### Leaked documents by secret level", "", md_table(c.LEAK_LEVEL_HEADER, level_rows), ""]
            cause_rows = c.leak_cause_rows(result)
            if cause_rows:
                out += ["### Leaks by cause", "", md_table(c.LEAK_CAUSE_HEADER, cause_rows, "lrr"), ""]
                out += [f"_{c.LEAK_CAUSE_NOTE}_", ""]
            out += ["### Leaked documents", "", md_table(c.LEAK_DOC_HEADER, c.leak_doc_rows(result), "lllrll"), ""]
            out += [f"_{c.LEAK_ID_NOTE}_", ""] if c.leak_docs_unnamed(result) else []
        else:
            out += ["No leaks: every returned document was permitted.", ""]

    answer_leaks = c.answer_leak_sentence(result)
    if answer_leaks is not None:  # facts of forbidden documents stated in the answers, whatever they cite
        out += ["## Answer leaks", "", f"{answer_leaks}.", ""]
        rows = c.answer_leak_rows(result)
        if rows:
            out += [md_table(c.ANSWER_LEAK_HEADER, rows, "llll"), "", f"_{c.ANSWER_LEAK_NOTE}_", ""]

    over = c.over_restriction_sentence(result)
    if over is not None:  # the opposite of a leak: documents the asker may see that the target withheld
        out += ["## Over-restriction", "", f"{over}.", ""]
        withheld = c.over_restricted_rows(result)
        if withheld:
            out += ["### Withheld documents", "", md_table(c.OVER_RESTRICTED_HEADER, withheld, "lllrl"), ""]
    under = c.under_fill_sentence(result)
    if under is not None:  # short lists for askers who see little: a filter applied after a fixed top-k
        out += ["## Under-fill", "", f"{under}.", ""]
        by_share = c.under_fill_rows(result)
        if by_share:
            out += ["### Under-fill by visible share", "", md_table(c.UNDER_FILL_HEADER, by_share, "lrr"), ""]
    out += ["## Queries that missed or leaked", "", " ".join(c.failed_sentences(result)), ""]
    rows = c.failed_rows(result)
    if rows:
        out += [md_table(c.FAILED_HEADER, rows, "lllllll"), ""]

    out += ["## Citation diagnosis", ""]
    m = c.citation_matrix(result)
    if m is None:
        out += ["_The run has no answers: nothing to diagnose._", ""]
    else:
        matrix = [
            ["retrieved", f"{m['retrieved_cited']} (success)", f"{m['retrieved_not_cited']} (generation gap)"],
            ["not retrieved", f"{m['cited_not_retrieved']} (cited from elsewhere)", f"{m['neither']} (retrieval gap)"],
        ]
        out += [md_table(["Gold documents", "cited", "not cited"], matrix, "lrr"), ""]
        out += [f"Non-gold citations: {m['wrong']} wrong, {m['unresolvable']} unresolvable.", ""]
        gap = c.gap_sentence(result)
        if gap:
            out += [f"{gap}.", ""]
    out += [f"{c.answer_fact_sentence(result)}.", ""]
    out += answer_outcomes_section(result)

    out += ["## All metrics", "", md_table(["Metric", "Label", "Value", "95% CI"], c.metric_rows(result), "llrr"), ""]
    out += ["### Definitions", "", md_table(["Metric", "Meaning"], c.definition_rows(result), "ll"), ""]
    out += ["## Counts", "", md_table(["Count", "Value"], c.count_rows(result)), ""]
    return "\n".join(out)


#: Failures and leaks first (what must be seen), then the kinds of wrong, then the right outcomes.
ANSWER_OUTCOME_ORDER = ("error", "leak", "wrong_value", "superseded", "missing", "partial", "abstained", "correct")


def answer_outcome_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """``Outcome | Count | Rate | 95% CI`` rows of ``answer_outcomes``, then ``right``; [] when not measured."""
    block = result.get("answer_outcomes") or {}
    if not block.get("measured"):
        return []
    outcomes = block.get("outcomes") or {}

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    rows = []
    for name in (*ANSWER_OUTCOME_ORDER, "right"):
        entry = outcomes.get(name)
        if entry is None or (name in ("error", "partial") and not entry["count"]):
            continue  # failures and partial answers are listed when they happened
        ci = entry.get("ci")
        rows.append([name, str(entry["count"]), pct(entry["rate"]), f"{pct(ci[0])} - {pct(ci[1])}" if ci else "-"])
    return rows


def answer_outcomes_section(result: Mapping[str, Any]) -> list[str]:
    """The "Answer outcomes" section: one outcome per judged answer (``metrics.answer_outcome``)."""
    block = result.get("answer_outcomes")
    if block is None:
        return []
    out = ["## Answer outcomes", ""]
    if not block.get("measured"):
        return [*out, f"_Not measured: {block.get('reason', 'unknown reason')}._", ""]
    out += [
        f"{block['queries_judged']} answers judged ({block['queries_not_judged']} queries not judged), "
        f"against {block.get('source', 'the eval set')}. `right`: correct for answerable questions, "
        "abstained for permission questions.",
        "",
        md_table(["Outcome", "Count", "Rate", "95% CI"], answer_outcome_rows(result), "lrrr"),
        "",
    ]
    return out
