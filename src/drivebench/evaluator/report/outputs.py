"""Write ``report.md`` and ``report.html`` for a metrics.json (beside it by default)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
METRICS_JSON = "metrics.json"


def load_metrics(path: Path) -> dict[str, Any]:
    """A metrics.json, given the file or the run directory holding it."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_JSON
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "metrics" not in data:
        raise ValueError(f"{path}: not a drivebench metrics.json (no 'metrics')")
    return data


def write_reports(result: Mapping[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Render both reports into ``out_dir``; returns ``(report.md, report.html)``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md, html = out_dir / REPORT_MD, out_dir / REPORT_HTML
    md.write_text(render_markdown(result), encoding="utf-8")
    html.write_text(render_html(result), encoding="utf-8")
    return md, html
