"""Probe reports: ``probe.json`` (everything) and ``probe.html`` (self-contained: inline CSS, no
scripts, no external resources). Failures come first, then leaks with their evidence, then strata."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 18px}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f3f3}
.bad{color:#b00020;font-weight:600}.ok{color:#1b7f3b;font-weight:600}.warn{color:#a35f00;font-weight:600}
code{background:#f6f6f6;padding:0 3px}.small{font-size:12px;color:#555}"""


def write_json(result: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    return path


def verdict(result: dict[str, Any]) -> tuple[str, str]:
    """(css class, sentence): never '0 leaks' for a run that failed or measured nothing."""
    c = result["counts"]
    if c["leaks"]:
        return "bad", f"{c['leaks']} leak(s): {c['pairs_leaked']} pair(s), {c['leaked_documents']} document(s)"
    if result["status"]["state"] == "failed":
        return "bad", f"probe FAILED, leaks not measured: {result['status']['reason']}"
    if c["pairs_not_measured"]:
        return "warn", f"no leak in {c['pairs_measured']} measured pairs; {c['pairs_not_measured']} not measured"
    return "ok", f"no leak in {c['pairs_measured']} pairs ({c['requests']} requests)"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(x))}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


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


def write_html(result: dict[str, Any], path: Path, title: str = "drivebench leak probe") -> Path:
    cls, text = verdict(result)
    c, e = result["counts"], result["errors"]
    out = [f"<!doctype html><meta charset='utf-8'><title>{escape(title)}</title><style>{_CSS}</style>"]
    out.append(f"<h1>{escape(title)}</h1><p class='{cls}'>{escape(text)}</p>")
    info = result.get("run_info") or {}
    out.append(_table(["setting", "value"], [[k, v] for k, v in info.items()]))
    out.append("<h2>Failures</h2>")
    status = result["status"]
    out.append(
        f"<p class='{'bad' if status['state'] == 'failed' else 'ok'}'>status: {escape(status['state'])}"
        f"{' - ' + escape(str(status['reason'])) if status['reason'] else ''}</p>"
    )
    out.append(f"<p>{e['failed']} of {e['requests']} requests failed ({e['rate']:.1%}).</p>")
    if e["by_kind"]:
        rows = [[k, v["count"], v["meaning"], v["sample"]] for k, v in e["by_kind"].items()]
        out.append(_table(["kind", "count", "meaning", "sample"], rows))
    out.append("<h2>Counts</h2>" + _table(["count", "value"], [[k, v] for k, v in c.items()]))
    out.append(f"<h2>Leaks ({c['leaks']})</h2>")
    if result["leaked_documents"]:
        rows = [[d["doc_id"], d["path"], d["leaks"]] for d in result["leaked_documents"]]
        out.append(_table(["document", "path", "leaks"], rows))
        rows = [
            [
                x["kind"],
                x["user_id"],
                x["doc_id"],
                x["secret_level"],
                x["surface"],
                f"{x['query_kind']}: {x['query']}",
                f"rank {x['result']['rank']} score {x['result']['score']}",
                _path(x["why_forbidden"]),
            ]
            for x in result["leaks"][:500]
        ]
        out.append(
            _table(["kind", "user", "document", "level", "surface", "query", "result", "should be hidden by"], rows)
        )
        if len(result["leaks"]) > 500:
            out.append(f"<p class='small'>first 500 of {len(result['leaks'])}; all in probe.json</p>")
    out.append("<h2>Strata</h2>")
    for axis, cells in result["strata"].items():
        rows = [[k, v["pairs"], v["measured"], v["leaked"]] for k, v in sorted(cells.items())]
        out.append(f"<h3>{escape(axis)}</h3>" + _table([axis, "pairs", "measured", "leaked"], rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out), encoding="utf-8")
    return path
