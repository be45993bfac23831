"""Write ``report.md`` and ``report.html`` for a metrics.json (beside it by default)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.result import METRICS_JSON, RunResult, metrics_dict

REPORT_MD = "report.md"
REPORT_HTML = "report.html"


def load_metrics(path: Path) -> dict[str, Any]:
    """A metrics.json, given the file or the run directory holding it (read by ``RunResult.read``), as the dict
    the reports read; one without metrics is a ValueError."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_JSON
    try:
        result = RunResult.read(path)
    except ValueError as exc:
        raise ValueError(f"{path}: not a drivebench metrics.json ({str(exc).splitlines()[0]})") from exc
    if result.metrics is None:
        raise ValueError(f"{path}: not a drivebench metrics.json (no 'metrics')")
    return result.to_dict()


def write_reports(result: RunResult | Mapping[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Render both reports into ``out_dir``; returns ``(report.md, report.html)``."""
    result = metrics_dict(result)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md, html = out_dir / REPORT_MD, out_dir / REPORT_HTML
    md.write_text(render_markdown(result), encoding="utf-8")
    html.write_text(render_html(result), encoding="utf-8")
    return md, html
