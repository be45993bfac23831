"""Probe reports: ``probe.json`` (everything) and ``probe.html`` (the shared report page, ``report.page``:
self-contained, inline CSS, no scripts, no external resources). The verdict line opens it; failures come
first, then leaks with their evidence (documents by name and path), then strata."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from drivebench.evaluator.report import page

LEAK_ROWS = 500  # leak rows in the page; every leak is in probe.json


def write_json(result: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    return path


def _beyond(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in (result.get("classes") or {}).items() if n != "results"}


def verdict(result: dict[str, Any]) -> tuple[str, str]:
    """(css class, sentence): never '0 leaks' for a run that failed or measured nothing; a bound above the leak
    budget fails even with no leak seen; a class not measured warns."""
    c = result["counts"]
    beyond = _beyond(result)
    leaky = [f"{s['title']}: {s['figure']['text']}" for s in beyond.values() if s["leaked"]]
    if c["leaks"] or leaky:
        said = [f"{c['leaks']} leak(s): {c['pairs_leaked']} pair(s), {c['leaked_documents']} document(s)"]
        return "bad", "; ".join((said if c["leaks"] else []) + leaky)
    if result["status"]["state"] == "failed":
        return "bad", f"probe FAILED, leaks not measured: {result['status']['reason']}"
    bound = (result.get("classes") or {}).get("results", {}).get("figure", {}).get("text")
    gate = result.get("leak_budget")
    if gate is not None and not gate["met"]:
        return "bad", f"no leak seen, but the bound is above the budget: {gate['summary']}"
    unmeasured = [n for n, s in beyond.items() if not s["measured"]]
    not_measured = f"; class(es) not measured: {', '.join(unmeasured)}" if unmeasured else ""
    if c["pairs_not_measured"]:
        text = f"no leak in {c['pairs_measured']} measured pairs; {c['pairs_not_measured']} not measured"
        return "warn", text + not_measured
    text = f"no leak in {c['pairs_measured']} pairs ({c['requests']} requests)" + (f"; {bound}" if bound else "")
    return ("warn" if unmeasured else "ok"), text + not_measured


def _path(why: dict[str, Any]) -> str:
    parts = []
    for step in why.get("path", []):
        if "grant_id" in step:
            bound = f" until {step['valid_until']}" if step.get("valid_until") else ""
            ended = f" membership ended {step['membership_ended']}" if step.get("membership_ended") else ""
            parts.append(f"{step['effect']} {step['grant_id']} {step['subject']} on {step.get('path')}{bound}{ended}")
        else:
            parts.append(", ".join(f"{k}={v}" for k, v in step.items() if k != "grants_here"))
    return f"{why['reason']}: " + "; ".join(parts)


def _score(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def doc_name(doc_id: Any, path: Any, name: Any = None) -> str:
    """A leaked document as a reader knows it: its file name (the result's name, else the last segment of its
    path); its id when the corpus does not know it."""
    if name:
        return str(name)
    if path:
        return PurePosixPath(str(path)).name or str(path)
    return str(doc_id)


UNKNOWN_NOTE = "Documents the corpus does not know are shown by id (no name or path to show)."
VERDICT_STATE = {"bad": "failed", "warn": "warn", "ok": "passed"}
VERDICT_HEAD = {"bad": "FAILED", "warn": "WARNING", "ok": "PASSED"}


def verdict_line(result: dict[str, Any]) -> tuple[str, str]:
    """``(state, line)`` for the page header: ``FAILED · 3 leak(s): ...``, ``PASSED · no leak in 1100 pairs ...``."""
    cls, text = verdict(result)
    head = VERDICT_HEAD[cls]
    return VERDICT_STATE[cls], text if text.startswith("probe FAILED") else f"{head} · {text}"


def write_html(result: dict[str, Any], path: Path, title: str = "drivebench leak probe") -> Path:
    c, e = result["counts"], result["errors"]
    info = result.get("run_info") or {}
    status = result["status"]
    sections = [
        page.section(
            "failures",
            "Failures",
            f'<p class="{"status-failed" if status["state"] == "failed" else "status-ok"}">status: '
            f"{page.e(status['state'])}{' - ' + page.e(status['reason']) if status['reason'] else ''}</p>",
            f"<p>{e['failed']} of {e['requests']} requests failed ({e['rate']:.1%}).</p>",
            page.table(
                ["Kind", "Count", "Meaning", "Sample"],
                [[k, v["count"], v["meaning"], v["sample"]] for k, v in e["by_kind"].items()],
                text_cols=1,
                cell_classes=["", "", "text", "text"],
                table_id="table-errors",
            )
            if e["by_kind"]
            else "",
        )
    ]
    leak_body: list[str] = []
    docs = result["leaked_documents"]
    if docs:
        unknown = any(not d.get("path") for d in docs)
        leak_body.append("<h3>Leaked documents</h3>")
        leak_body.append(
            page.table(
                ["Document", "Path", "Id", "Leaks"],
                [
                    [
                        doc_name(d["doc_id"], d.get("path")),
                        d.get("path") or "(not in the corpus)",
                        d["doc_id"],
                        d["leaks"],
                    ]
                    for d in docs
                ],
                text_cols=3,
                table_id="table-leaked-documents",
                stack=True,
                row_classes=["row-failed"] * len(docs),
            )
        )
        if unknown:
            leak_body.append(f'<p class="note">{page.e(UNKNOWN_NOTE)}</p>')
        leaks = result["leaks"][:LEAK_ROWS]
        leak_body.append("<h3>Every leak, with why it should have been hidden</h3>")
        leak_body.append(
            page.table(
                ["Kind", "User", "Document", "Path", "Level", "Surface", "Query", "Result", "Should be hidden by"],
                [
                    [
                        x["kind"],
                        x["user_id"],
                        doc_name(x["doc_id"], x.get("doc_path")),
                        x.get("doc_path") or f"{x['doc_id']} (not in the corpus)",
                        x["secret_level"],
                        x["surface"],
                        f"{x['query_kind']}: {x['query']}",
                        f"rank {x['result']['rank']} score {_score(x['result']['score'])}",
                        _path(x["why_forbidden"]),
                    ]
                    for x in leaks
                ],
                text_cols=9,
                table_id="table-leaks",
                stack=True,
            )
        )
        if len(result["leaks"]) > LEAK_ROWS:
            leak_body.append(f'<p class="note">first {LEAK_ROWS} of {len(result["leaks"])}; all in probe.json</p>')
    else:
        leak_body.append('<p class="note">No leaked document.</p>')
    sections.append(page.section("leaks", f"Leaks ({c['leaks']})", *leak_body))
    if result.get("classes"):
        sections.append(_classes_section(result))
    strata = []
    for axis, cells in result["strata"].items():
        rows = [[k, v["pairs"], v["measured"], v["leaked"]] for k, v in sorted(cells.items())]
        strata.append(f"<h3>{page.e(axis)}</h3>")
        strata.append(
            page.table(
                [axis, "Pairs", "Measured", "Leaked"],
                rows,
                table_id=f"table-strata-{axis}",
                row_classes=["row-failed" if r[3] else "" for r in rows],
            )
        )
    sections.append(page.section("strata", "Strata", *strata))
    sections.append(page.section("counts", "Counts", page.table(["Count", "Value"], [[k, v] for k, v in c.items()])))
    sections.append(
        page.section("run", "Run", page.table(["Setting", "Value"], [[k, v] for k, v in info.items()], text_cols=2))
    )
    subtitle = " · ".join(
        str(x)
        for x in (
            (info.get("corpus_version") or info.get("corpus"))
            and f"corpus {info.get('corpus_version') or info['corpus']}",
            f"{c['pairs_probed']} pairs probed",
            f"{c['requests']} requests",
        )
        if x
    )
    html = page.page(
        kind="probe",
        title=title,
        subtitle=subtitle,
        verdict=verdict_line(result),
        sections=sections,
        footer="generated by drivebench probe",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def _classes_section(result: dict[str, Any]) -> str:
    """Each class with its figure and upper bound (or why it was not measured), the pooled figure, the leak
    budget's verdict, and every leak of the classes beyond the result list."""
    classes = result["classes"]
    rows = [
        [
            name,
            s["title"],
            s["figure"]["text"] if s["measured"] else f"not measured: {s['reason']}",
            ", ".join(f"{k} {v}" for k, v in (s.get("closed") or {}).items()) or "-",
            sum(e["count"] for e in (s.get("errors") or {}).values()),
        ]
        for name, s in classes.items()
    ]
    body = [
        page.table(
            ["Class", "Means", "Leaked of trials (95 % upper bound)", "Closed", "Failed requests"],
            rows,
            text_cols=3,
            table_id="table-classes",
            row_classes=["row-failed" if s["leaked"] else "" for s in classes.values()],
        ),
        f"<p>overall: {page.e(result['overall']['text'])}</p>",
    ]
    gate = result.get("leak_budget")
    if gate is not None:
        css = "status-ok" if gate["met"] else "status-failed"
        body.append(f'<p class="{css}">{page.e(gate["summary"])}</p>')
    leaks = [x for s in _beyond(result).values() for x in s.get("leaks", [])][:LEAK_ROWS]
    if leaks:
        body.append("<h3>Leaks beyond the result list</h3>")
        body.append(
            page.table(
                ["Class", "User", "How", "Document", "Path", "Surface", "Where", "Query"],
                [
                    [
                        x["class"],
                        x["user_id"],
                        f"claimed {x['field']} = {x['claimed']}"
                        if "field" in x
                        else f"right after {x['first_user']} ({x['mode']})",
                        doc_name(x["doc_id"], x.get("doc_path")),
                        x.get("doc_path") or f"{x['doc_id']} (not in the corpus)",
                        x["surface"],
                        ", ".join(x["where"]),
                        f"{x['query_kind']}: {x['query']}",
                    ]
                    for x in leaks
                ],
                text_cols=8,
                table_id="table-class-leaks",
                stack=True,
            )
        )
    return page.section("classes", "Leak classes and bounds", *body)
