"""A sync run written down: metrics.json (``sync`` section, flat ``metrics`` for gates), report.md,
report.html and a JUnit file (a case per probed pair). Failures come first in every rendering."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET


def _cell(x: Any) -> str:
    return "not measured" if x is None else str(x)


def problems(result: dict[str, Any]) -> list[str]:
    """What went wrong, worst first: errors, open leaks, pairs that could not be tested."""
    sync, out = result["sync"], []
    status = result.get("status") or {}
    if status.get("state") == "failed":
        out.append(f"the run failed: {status.get('reason')}")
    errors = sync["errors"]
    if errors["failed"]:
        out.append(f"{errors['failed']} of {errors['requests']} target calls failed (rate {errors['rate']:.2%})")
    for p in sync["pairs"]:
        if p["testable"] and not p["converged"]:
            what = "LEAK: still returned" if p["kind"] == "revoke" else "never reflected"
            out.append(f"{what} after {sync['config']['deadline_s']} s: {p['class']} {p['principal']} {p['doc_id']}")
    for c in sync["changes"]:
        if c.get("error"):
            out.append(f"change {c['index']} ({c['class']}) could not be applied: {c['error']}")
    for c in sync.get("cases") or []:
        if c["verdict"] in ("fail", "error"):
            out.append(f"conformance {c['verdict'].upper()}: {c['case']} ({c['note']}; mirrors: {c['bug']})")
    n = sync["overall"]["not_testable"]
    if n:
        out.append(f"{n} pairs not testable (the target did not answer as expected before the change)")
    if not sync["overall"]["pairs"] and sync.get("cases") is None:
        out.append("nothing was measured: no testable pair")
    return out


def markdown(result: dict[str, Any]) -> str:
    sync = result["sync"]
    o = sync["overall"]
    lines = [f"# drivebench eval sync: {sync['scenario']}", ""]
    issues = problems(result)
    if issues:
        lines += ["## Problems", "", *[f"- {x}" for x in issues], ""]
    lines += [
        f"Target `{sync['target']}`, drive `{sync['drive']}`; deadline {sync['config']['deadline_s']} s, poll "
        f"{sync['config']['poll_s']} s. Lag: seconds from the drive's acknowledgement to the first answer that "
        "reflects the change.",
        "",
        f"- revocation lag p50 / p95 / max: {_cell(o['revocation_lag_p50_s'])} / {_cell(o['revocation_lag_p95_s'])}"
        f" / {_cell(o['revocation_lag_max_s'])} s",
        f"- leak seconds (total): {_cell(o['leak_seconds_total'])}; not converged: {o['not_converged']}"
        f" (revocations: {o['revocations_not_converged']}); not testable: {o['not_testable']}",
        f"- drive restored to its starting state: {_cell(sync.get('drive_restored'))}",
        "",
        "| class | kind | n | lag p50 s | lag p95 s | lag max s | not converged | leak s | not testable |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for cls, s in sync["classes"].items():
        lines.append(
            f"| {cls} | {s['kind']} | {s['n']} | {_cell(s['lag_p50_s'])} | {_cell(s['lag_p95_s'])} | "
            f"{_cell(s['lag_max_s'])} | {s['not_converged']} | {_cell(s['leak_seconds'])} | {s['not_testable']} |"
        )
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
            state = (
                f"not testable: {p['reason']}"
                if not p["testable"]
                else f"converged in {p['lag_s']} s"
                if p["converged"]
                else "NOT converged"
            )
            lines.append(f"   - {p['principal']} / {p['doc_id']}: {state} ({p['probes']} probes)")
    return "\n".join(lines) + "\n"


def html_report(result: dict[str, Any]) -> str:
    body = "".join(f"<pre>{html.escape(markdown(result))}</pre>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>drivebench eval sync</title>"
        "<style>body{font-family:sans-serif;margin:2em}pre{white-space:pre-wrap}</style></head>"
        f"<body>{body}</body></html>\n"
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
