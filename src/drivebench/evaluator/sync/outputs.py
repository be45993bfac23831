"""A sync run written down: metrics.json (``sync`` section, flat ``metrics`` for gates), report.md,
report.html and a JUnit file (a case per probed pair). Failures come first in every rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET


def _cell(x: Any) -> str:
    return "not measured" if x is None else str(x)


def lag_cell(x: Any, lower_bound: bool, deadline: float) -> str:
    """A lag figure as read: ``≥12.0`` when it falls on a pair that never converged (a lower bound, the lag has
    no upper bound), "not measured" when None."""
    if x is None:
        return "not measured"
    return f"≥{x}" if lower_bound and float(x) >= deadline else str(x)


def bound_cell(bound: float | None, confidence: float = 0.95) -> str:
    """``≤ 6.6 % (95 %)``: the upper bound of a leak rate; "not measured" without a trial."""
    if bound is None:
        return "not measured"
    return f"≤ {bound * 100:.1f} % ({confidence * 100:g} %)"


def open_leaks(open_: int, trials: int, bound: float | None, confidence: float = 0.95) -> str:
    """``0 of 44 revocations left open (≤ 6.6 %, 95 %)``: what a count of open leaks says of the rate behind it
    (none seen is not a rate of 0); "not measured" without a testable revocation."""
    if bound is None:
        return "revocations left open: not measured (no testable revocation)"
    s = "s" if trials != 1 else ""
    return f"{open_} of {trials} revocation{s} left open (≤ {bound * 100:.1f} %, {confidence * 100:g} %)"


def overall_open_leaks(result: dict[str, Any]) -> str:
    o = result["sync"]["overall"]
    return open_leaks(
        o["revocations_not_converged"], o["revocation_pairs"], o.get("revocations_open_bound"), _confidence(result)
    )


def _confidence(result: dict[str, Any]) -> float:
    return float(result["sync"]["overall"].get("bound_confidence") or 0.95)


def doc_label(p: dict[str, Any]) -> str:
    """A document as a reader knows it: its name and drive path, with the id (the id alone when the drive did
    not say, e.g. a manual run)."""
    if p.get("path"):
        return f"{p['path']} ({p['doc_id']})"
    return f"{p['name']} ({p['doc_id']})" if p.get("name") else str(p["doc_id"])


def never_took_effect(result: dict[str, Any]) -> str | None:
    """``36 revocations never took effect within 12 s (open leaks)``, or None when every one did."""
    sync = result["sync"]
    n = sync["overall"].get("revocations_not_converged") or 0
    if not n:
        return None
    s = "s" if n != 1 else ""
    return f"{n} revocation{s} never took effect within {sync['config']['deadline_s']:g} s (open leak{s})"


def problems(result: dict[str, Any]) -> list[str]:
    """What went wrong, worst first: the run failed, revocations that never took effect, errors, each open
    leak, conformance failures, ids the target returned that map to no document, pairs not testable."""
    sync, out = result["sync"], []
    status = result.get("status") or {}
    if status.get("state") == "failed":
        out.append(f"the run failed: {status.get('reason')}")
    never = never_took_effect(result)
    if never:
        out.append(never)
    errors = sync["errors"]
    if errors["failed"]:
        out.append(f"{errors['failed']} of {errors['requests']} target calls failed (rate {errors['rate']:.2%})")
    for p in sync["pairs"]:
        if p["testable"] and not p["converged"]:
            what = "LEAK: still returned" if p["kind"] == "revoke" else "never reflected"
            out.append(f"{what} after {sync['config']['deadline_s']} s: {p['class']} {p['principal']} {doc_label(p)}")
    for c in sync["changes"]:
        if c.get("error"):
            out.append(f"change {c['index']} ({c['class']}) could not be applied: {c['error']}")
    for c in sync.get("cases") or []:
        if c["verdict"] in ("fail", "error"):
            out.append(f"conformance {c['verdict'].upper()}: {c['case']} ({c['note']}; mirrors: {c['bug']})")
    unrecognised = unmapped_line(result)
    if unrecognised:
        out.append(unrecognised)
    n = sync["overall"]["not_testable"]
    if n:
        out.append(f"{n} pairs not testable (the target did not answer as expected before the change)")
    if not sync["overall"]["pairs"] and sync.get("cases") is None:
        out.append("nothing was measured: no testable pair")
    return out


def unmapped_line(result: dict[str, Any]) -> str | None:
    """Results whose ids name no document of the drive, with the ways to map them."""
    ids = result["sync"].get("ids") or {}
    n = ids.get("unmapped") or 0
    if not n:
        return None
    sample = ", ".join(repr(x) for x in ids.get("examples", [])[:3])
    return (
        f"{n} of {ids.get('results')} results carry ids that map to no document by {ids.get('describe')} "
        f'(e.g. {sample}): a target that returns paths or names needs [ids] match = "path" or "name" in '
        "--target-profile with --corpus (the corpus the drive loaded), or match = a CSV/JSONL map file"
    )


def summary_lines(result: dict[str, Any]) -> list[str]:
    """The terminal's figures: the revocations that never took effect first, then the lags (a figure that
    falls on such a pair is shown as the lower bound it is), then one line per class."""
    sync, o = result["sync"], result["sync"]["overall"]
    deadline = sync["config"]["deadline_s"]
    rev = o.get("revocation_lag_is_lower_bound", False)
    lines = [overall_open_leaks(result)]
    never = never_took_effect(result)
    lines.append(
        (f"{never}; " if never else "") + f"revocation lag p95 {lag_cell(o['revocation_lag_p95_s'], rev, deadline)} s, "
        f"max {lag_cell(o['revocation_lag_max_s'], rev, deadline)} s; leak seconds {_cell(o['leak_seconds_total'])}"
        f"{' (a lower bound)' if never else ''}; not converged {o['not_converged']}; "
        f"not testable {o['not_testable']}; pairs {o['pairs']}"
    )
    for cls, s in sync["classes"].items():
        lb = s.get("lag_is_lower_bound", False)
        lines.append(
            f"  {cls:20} n={s['n']:<3} lag p50 {lag_cell(s['lag_p50_s'], lb, deadline)} "
            f"p95 {lag_cell(s['lag_p95_s'], lb, deadline)} max {lag_cell(s['lag_max_s'], lb, deadline)} "
            f"not converged {s['not_converged']} not testable {s['not_testable']}"
            + (f" open {bound_cell(s['open_leak_bound'], _confidence(result))}" if s["kind"] == "revoke" else "")
            + (f" (not planned: {s['not_planned_why']})" if s.get("not_planned") else "")
        )
    return lines


CLASS_HEADER = [
    "class",
    "kind",
    "n",
    "lag p50 s",
    "lag p95 s",
    "lag max s",
    "not converged",
    "open rate (upper bound)",
    "leak s",
    "not testable",
]
PAIR_HEADER = ["#", "class", "principal", "document", "applied", "result", "lag s", "leak s", "probes"]


def class_rows(result: dict[str, Any]) -> list[list[str]]:
    deadline = result["sync"]["config"]["deadline_s"]
    rows = []
    for cls, s in result["sync"]["classes"].items():
        lb = s.get("lag_is_lower_bound", False)
        rows.append(
            [
                cls,
                str(s["kind"]),
                str(s["n"]),
                *(lag_cell(s[k], lb, deadline) for k in ("lag_p50_s", "lag_p95_s", "lag_max_s")),
                str(s["not_converged"]),
                bound_cell(s.get("open_leak_bound"), _confidence(result)) if s["kind"] == "revoke" else "-",
                _cell(s["leak_seconds"]),
                str(s["not_testable"]),
            ]
        )
    return rows


def pair_state(p: dict[str, Any], deadline: float) -> str:
    if not p["testable"]:
        return f"not testable: {p['reason']}"
    if p["converged"]:
        return f"converged in {p['lag_s']} s"
    return f"LEAK: never took effect within {deadline:g} s" if p["kind"] == "revoke" else "NOT converged"


def pair_rows(result: dict[str, Any]) -> list[list[str]]:
    """One row per pair, the open ones first, then in the order of the run."""
    deadline = result["sync"]["config"]["deadline_s"]
    pairs = sorted(result["sync"]["pairs"], key=lambda p: (not (p["testable"] and not p["converged"]), p["change"]))
    return [
        [
            str(p["change"]),
            p["class"],
            p["principal"],
            doc_label(p),
            p.get("applied_at") or "-",
            pair_state(p, deadline),
            lag_cell(p["lag_s"], False, deadline) if p["converged"] else f"≥{deadline:g}" if p["testable"] else "-",
            _cell(p["leak_s"]) if p["testable"] else "-",
            str(p["probes"]),
        ]
        for p in pairs
    ]


def markdown(result: dict[str, Any]) -> str:
    from drivebench.evaluator.sync.verdict import verdict_line

    sync = result["sync"]
    o = sync["overall"]
    deadline = sync["config"]["deadline_s"]
    rev = o.get("revocation_lag_is_lower_bound", False)
    lines = [f"# drivebench eval sync: {sync['scenario']}", "", f"**{verdict_line(result)}**", ""]
    issues = problems(result)
    if issues:
        lines += ["## Problems", "", *[f"- {x}" for x in issues], ""]
    if result.get("gates"):
        lines += ["## Gates", "", "| gate | result | condition |", "|---|---|---|"]
        for g in result["gates"]:
            condition = g["message"].split(": ", 1)[-1]
            lines.append(f"| `{g['expr']}` | {'FAILED' if g['failed'] else 'passed'} | {condition} |")
        lines.append("")
    never = never_took_effect(result)
    lines += [
        f"Target `{sync['target']}`, drive `{sync['drive']}`; deadline {deadline} s, poll "
        f"{sync['config']['poll_s']} s. Lag: seconds from the drive's acknowledgement to the first answer that "
        "reflects the change; a pair that never converged counts as the deadline (≥: a lower bound).",
        "",
        *([f"- **{never}**"] if never else []),
        f"- {overall_open_leaks(result)}: the exact one-sided Clopper-Pearson upper bound of the rate of "
        "revocations left open, over the testable revocations",
        f"- revocation lag p50 / p95 / max: {lag_cell(o['revocation_lag_p50_s'], rev, deadline)} / "
        f"{lag_cell(o['revocation_lag_p95_s'], rev, deadline)} / {lag_cell(o['revocation_lag_max_s'], rev, deadline)} s",
        f"- leak seconds (total): {_cell(o['leak_seconds_total'])}; not converged: {o['not_converged']}"
        f" (revocations: {o['revocations_not_converged']}); not testable: {o['not_testable']}",
        f"- drive restored to its starting state: {_cell(sync.get('drive_restored'))}",
        "",
        "| " + " | ".join(CLASS_HEADER) + " |",
        "|" + "---|" * len(CLASS_HEADER),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in class_rows(result)]
    skipped = {cls: s for cls, s in sync["classes"].items() if s.get("not_planned")}
    if skipped:
        lines += ["", "## Not planned", ""]
        lines += [f"- {cls}: {s['not_planned']} change(s): {s['not_planned_why']}" for cls, s in skipped.items()]
    if sync.get("cases") is not None:
        lines += ["", "## Conformance", "", "| case | verdict | a wrong system shows | mirrors | note |"]
        lines.append("|---|---|---|---|---|")
        for c in sync["cases"]:
            lines.append(f"| {c['case']} | {c['verdict']} | {c['wrong']} | {c['bug']} | {c['note'] or ''} |")
    lines += ["", "## Changes", ""]
    for c in sync["changes"]:
        lines.append(f"{c['index']}. **{c['class']}**: {c['detail']} (applied {c.get('applied_at') or '-'})")
        for p in c["pairs"]:
            lines.append(f"   - {p['principal']} / {doc_label(p)}: {pair_state(p, deadline)} ({p['probes']} probes)")
    return "\n".join(lines) + "\n"


def _timeline(result: dict[str, Any]) -> str:
    """Each testable pair as a bar from the change to its convergence (blue), or to the deadline when it never
    converged (red: the leak was still open when the run stopped looking)."""
    from drivebench.evaluator.report.charts import LEAK_COLOR, PALETTE, hbar_chart

    deadline = result["sync"]["config"]["deadline_s"]
    rows = []
    for p in result["sync"]["pairs"]:
        if not p["testable"]:
            continue
        label = f"{p['change']} {p['class']} {p['principal']} {p.get('name') or p['doc_id']}"
        values = [p["lag_s"], None] if p["converged"] else [None, deadline]
        rows.append((label, values, "converged" if p["converged"] else "never took effect"))
    return hbar_chart(
        "chart-sync-timeline",
        "Seconds from each change to the answer that reflects it",
        rows,
        series=(("converged", PALETTE[0]), ("never took effect (to the deadline)", LEAK_COLOR)),
        x_max=deadline,
        width=720,
    )


def html_report(result: dict[str, Any]) -> str:
    """The sync report on the page every drivebench report uses (``evaluator.report.page``): the verdict in the
    header, then problems, gates, the per-class table, conformance, the per-pair timeline and table."""
    from drivebench.evaluator.report import page as pg
    from drivebench.evaluator.report.verdict import GATE_HEADER, gate_rows
    from drivebench.evaluator.sync.verdict import verdict_line

    sync = result["sync"]
    o = sync["overall"]
    deadline = sync["config"]["deadline_s"]
    rev = o.get("revocation_lag_is_lower_bound", False)
    state = (result.get("verdict") or {}).get("state", "none")
    sections = []
    issues = problems(result)
    if issues:
        items = "".join(f'<li class="bad">{pg.e(x)}</li>' for x in issues)
        sections.append(pg.section("problems", "Problems", f"<ul>{items}</ul>"))
    if result.get("gates"):
        failed = [("gate-failed" if r[1] == "FAILED" else "gate-passed") for r in gate_rows(result)]
        sections.append(
            pg.section("gates", "Gates", pg.table(GATE_HEADER, gate_rows(result), row_classes=failed, text_cols=1))
        )
    never = never_took_effect(result)
    cards = [
        ("Revocations never took effect", str(o["revocations_not_converged"]), bool(never)),
        (
            "Revocations left open",
            f"{o['revocations_not_converged']} of {o['revocation_pairs']}, "
            f"{bound_cell(o.get('revocations_open_bound'), _confidence(result))}",
            bool(never),
        ),
        ("Revocation lag p95 s", lag_cell(o["revocation_lag_p95_s"], rev, deadline), rev),
        ("Revocation lag max s", lag_cell(o["revocation_lag_max_s"], rev, deadline), rev),
        ("Leak seconds", _cell(o["leak_seconds_total"]), bool(o["leak_seconds_total"])),
        ("Pairs measured", str(o["pairs"]), False),
        ("Not testable", str(o["not_testable"]), False),
    ]
    card_html = "".join(
        f'<div class="card{" bad" if bad else ""}"><div class="label">{pg.e(label)}</div>'
        f'<div class="value">{pg.e(value)}</div></div>'
        for label, value, bad in cards
    )
    note = (
        f"Lag: seconds from the drive's acknowledgement to the first answer that reflects the change, probed every "
        f"{sync['config']['poll_s']} s up to {deadline} s. A pair that never converged counts as the deadline "
        "(≥: a lower bound; its lag has no upper bound) in every figure, and fails every lag gate. "
        f"{overall_open_leaks(result)}: the exact one-sided Clopper-Pearson upper bound of the rate of revocations "
        "left open, over the testable revocations (none seen is not a rate of 0)."
    )
    class_table = pg.table(
        CLASS_HEADER,
        class_rows(result),
        row_classes=["row-failed" if r[6] != "0" else "row-passed" for r in class_rows(result)],
    )
    sections.append(
        pg.section("figures", "Figures", f'<div class="cards">{card_html}</div>', f'<p class="note">{pg.e(note)}</p>')
    )
    sections.append(pg.section("classes", "Per change class", class_table))
    skipped = [
        [cls, str(s["not_planned"]), s["not_planned_why"]] for cls, s in sync["classes"].items() if s.get("not_planned")
    ]
    if skipped:
        sections.append(
            pg.section(
                "not-planned",
                "Not planned (not measured)",
                pg.table(["class", "changes", "why"], skipped, text_cols=3),
            )
        )
    if sync.get("cases") is not None:
        rows = [[c["case"], c["verdict"], c["wrong"], c["bug"], c["note"] or ""] for c in sync["cases"]]
        sections.append(
            pg.section(
                "conformance",
                "Conformance",
                pg.table(
                    ["case", "verdict", "a wrong system shows", "mirrors", "note"],
                    rows,
                    text_cols=5,
                    row_classes=[
                        "row-failed"
                        if c["verdict"] in ("fail", "error")
                        else "row-passed"
                        if c["verdict"] == "pass"
                        else ""
                        for c in sync["cases"]
                    ],
                ),
            )
        )
    if sync["pairs"]:
        pairs = pair_rows(result)
        sections.append(
            pg.section(
                "timeline",
                "Per pair",
                f'<div class="fig">{_timeline(result)}</div>',
                pg.table(
                    PAIR_HEADER,
                    pairs,
                    text_cols=4,
                    row_classes=[
                        "row-failed"
                        if r[5].startswith(("LEAK", "NOT"))
                        else "row-passed"
                        if "converged in" in r[5]
                        else ""
                        for r in pairs
                    ],
                    stack=True,
                ),
            )
        )
    changes = [
        [str(c["index"]), c["class"], c["detail"], c.get("applied_at") or "-", c.get("error") or ""]
        for c in sync["changes"]
    ]
    if changes:
        sections.append(
            pg.section(
                "changes", "Changes", pg.table(["#", "class", "change", "applied", "error"], changes, text_cols=3)
            )
        )
    restored = sync.get("drive_restored")
    subtitle = (
        f"scenario {sync['scenario']} · target {sync['target']} · drive {sync['drive'] or '(manual)'} · "
        f"drive restored: {_cell(restored)}"
    )
    return pg.page(
        kind="sync",
        title=f"drivebench eval sync: {sync['scenario']}",
        subtitle=subtitle,
        verdict=(state, verdict_line(result)),
        sections=sections,
        footer=f"started {sync['started_at']} · finished {sync['finished_at']} · {sync['seconds']} s",
    )


def junit(result: dict[str, Any], path: Path) -> Path:
    sync = result["sync"]
    root = ET.Element("testsuites", name="drivebench")
    suite = ET.SubElement(root, "testsuite", name="drivebench.sync", tests=str(len(sync["pairs"])))
    failures = skipped = 0
    for p in sync["pairs"]:
        case = ET.SubElement(
            suite, "testcase", classname=f"drivebench.sync.{p['class']}", name=f"{p['principal']}:{p['doc_id']}"
        )
        if not p["testable"]:
            skipped += 1
            ET.SubElement(case, "skipped", message=p["reason"] or "not testable")
        elif not p["converged"]:
            failures += 1
            msg = f"not reflected within {sync['config']['deadline_s']} s"
            ET.SubElement(case, "failure", message=msg).text = msg
    for c in sync.get("cases") or []:
        case = ET.SubElement(suite, "testcase", classname="drivebench.sync.conformance", name=c["case"])
        if c["verdict"] in ("fail", "error"):
            failures += 1
            ET.SubElement(case, "failure", message=f"{c['verdict']}: {c['note']}").text = c["bug"]
        elif c["verdict"] != "pass":
            skipped += 1
            ET.SubElement(case, "skipped", message=c["note"] or c["verdict"])
    status = result.get("status") or {}
    if status.get("state") == "failed":
        case = ET.SubElement(suite, "testcase", classname="drivebench.sync", name="run")
        ET.SubElement(case, "error", message="the run failed").text = str(status.get("reason"))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def write(result: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "metrics.json").write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    (out_dir / "report.md").write_text(markdown(result), "utf-8")
    (out_dir / "report.html").write_text(html_report(result), "utf-8")
