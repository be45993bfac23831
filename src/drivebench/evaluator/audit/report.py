"""The oversharing audit as a self-contained HTML page (inline CSS, no scripts, no external resources)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f3f3}
.flag{color:#b00020;font-weight:600}.small{font-size:12px;color:#555}"""


def chain_text(chains: list[dict[str, Any]], limit: int = 6) -> str:
    parts = [
        f"{c['grant_id']} {c['subject']} on {c['path']}{' (inherited)' if c['inherited'] else ''}: {c['users']} user(s)"
        for c in chains[:limit]
    ]
    return "; ".join(parts) + (f"; +{len(chains) - limit} more" if len(chains) > limit else "")


def flag_text(flags: list[dict[str, Any]]) -> str:
    out = []
    for f in flags:
        detail = ", ".join(f"{k}={v}" for k, v in f.items() if k != "flag")
        out.append(f"{f['flag']} ({detail})")
    return "; ".join(out)


def write_html(result: dict[str, Any], path: Path) -> Path:
    c = result["counts"]
    rows = []
    for d in result["documents"]:
        cells = [
            d["risk"],
            d["doc_id"],
            d["path"],
            d["secret_level"],
            d["owner_department"] or "",
            d["previewers"],
            d["previewers_outside_department"],
            chain_text(d["grant_chains"]),
        ]
        tds = "".join(f"<td>{escape(str(x))}</td>" for x in cells)
        rows.append(f"<tr>{tds}<td class='flag'>{escape(flag_text(d['flags']))}</td></tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("risk", "document", "path", "level", "owner", "previewers", "outside dept", "grant chains", "flags")
    )
    html = (
        f"<!doctype html><meta charset='utf-8'><title>oversharing audit {escape(result['corpus'])}</title>"
        f"<style>{_CSS}</style><h1>Oversharing audit: {escape(result['corpus'])}</h1>"
        f"<p>{c['documents']} documents at or above <b>{escape(result['level'])}</b> at {escape(result['at'])}; "
        f"threshold {result['threshold']} users outside the owning department through broad subjects.</p>"
        f"<p class='{'flag' if c['flagged'] else ''}'>{c['flagged']} flagged: "
        + escape(", ".join(f"{k} {v}" for k, v in c["by_flag"].items()))
        + f"</p><table><tr>{head}</tr>{''.join(rows)}</table>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
