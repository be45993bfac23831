"""The reports of ``drivebench experiment``: ``experiment.json`` (``grid.analyse``'s payload), ``experiment.md`` and
``experiment.html`` (the shared report page skeleton, ``evaluator.report.page``: no script, nothing loaded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from drivebench.evaluator.report import page as pg

NAMES = {
    "multi_hop_completeness": "Multi-hop Completeness",
    "full_chain_rate": "Full-chain rate",
    "source_coverage_macro": "Source Coverage (per-query mean)",
    "citation_precision": "Citation precision",
}


def display_name(metric: str) -> str:
    head, _, hop = metric.partition("[")
    if hop:
        return f"{NAMES.get(head, head)}, {hop.rstrip(']')}-hop"
    if head.startswith("hit_rate@"):
        return f"Hit Rate@{head.split('@')[1]}"
    if head.startswith("mrr@"):
        return f"MRR@{head.split('@')[1]}"
    if head.startswith("leak_rate@"):
        return f"Leak rate@{head.split('@')[1]} (lower is better)"
    return NAMES.get(head, head)


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _ci(ci: Any) -> str:
    return "—" if not ci else f"{ci[0]:.3f} – {ci[1]:.3f}"


def _diff(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _dci(ci: Any) -> str:
    return "—" if not ci else f"{ci[0]:+.3f} to {ci[1]:+.3f}"


def _p(p: float | None) -> str:
    return "—" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows(table: dict[str, Any]) -> list[list[str]]:
    return [
        [
            r["config"],
            r["lever"],
            _num(r["value"]),
            _ci(r["ci"]),
            _diff(r["diff"]),
            _dci(r["diff_ci"]),
            _p(r["p_value"]),
            _p(r["p_holm"]),
            str(r["n_paired"]),
            r["verdict"],
        ]
        for r in table["rows"]
    ]


HEADER = ["Config", "Lever", "Value", "95% CI", "Δ vs baseline", "Δ 95% CI", "p", "p (Holm)", "n", ""]


def render_markdown(payload: dict[str, Any]) -> str:
    exp = payload["experiment"]
    lines = [
        f"# Experiment: {_cell(exp['name'])}",
        "",
        f"Baseline: `{payload['configs'][0]['name']}`. {exp['method']}. *better*/*worse*: Holm p < {exp['alpha']} "
        f"and the CI of the difference excludes 0. Ran in {exp['elapsed_s']:.1f} s ({exp['index_builds']} index "
        "builds).",
        "",
    ]
    if exp["interrupted"]:
        lines += ["**Interrupted**: re-run the same command to finish (complete configurations are kept).", ""]
    for ds in payload["datasets"]:
        lines += [f"## {ds['corpus']}" + (f" — {ds.get('queries')} queries" if ds.get("queries") else ""), ""]
        if "incomplete" in ds:
            lines += [ds["incomplete"], ""]
        if ds.get("moved_most"):
            lines += ["### The lever that moved each of the article's metrics most", ""]
            for d in ds["diagnosis"]:
                lines.append(f"- **{d['metric']}**: {_cell(d['moved'])}")
            lines += ["", "### Diagnosis (the article's rules)", ""]
            for d in ds["diagnosis"]:
                lines.append(
                    f"- **{d['metric']}**: {_cell(d['finding'])}" + (f" → {_cell(d['remedy'])}" if d["remedy"] else "")
                )
            lines.append("")
        lines += ["### Runs", "", "| Config | Lever | State | Leaking queries | Time (s) |", "|---|---|---|--:|--:|"]
        for r in ds["runs"]:
            how = r["state"] + ("" if r["ran"] else " (reused)")
            lines.append(
                f"| {_cell(r['config'])} | {_cell(r['lever'])} | {how} | {r['queries_with_leak']} | "
                f"{'' if r['elapsed_s'] is None else r['elapsed_s']} |"
            )
        lines.append("")
        for metric in ds.get("headline_metrics", []):
            table = ds["metrics"][metric]
            lines += [f"### {display_name(metric)} (`{metric}`)", ""]
            lines += ["| " + " | ".join(HEADER) + " |", "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
            for row in _rows(table):
                row[-1] = f"*{row[-1]}*" if row[-1] else ""
                lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
            lines.append("")
        others = [m for m in ds.get("metrics", {}) if m not in ds.get("headline_metrics", [])]
        if others:
            lines += [f"Also compared in experiment.json: {', '.join(f'`{m}`' for m in others)}.", ""]
    return "\n".join(lines)


def render_html(payload: dict[str, Any]) -> str:
    exp = payload["experiment"]
    sections = []
    headline = []
    for ds in payload["datasets"]:
        body = []
        if "incomplete" in ds:
            body.append(f"<p class='warn'>{pg.e(ds['incomplete'])}</p>")
        if ds.get("diagnosis"):
            body.append("<h3>The lever that moved each of the article's metrics most</h3>")
            body.append(pg.table(["Metric", "Moved most by"], [[d["metric"], d["moved"]] for d in ds["diagnosis"]]))
            body.append("<h3>Diagnosis (the article's rules)</h3>")
            body.append(
                pg.table(
                    ["Metric", "Finding", "Remedy"],
                    [[d["metric"], d["finding"], d["remedy"]] for d in ds["diagnosis"]],
                    cell_classes=["", "text", "text"],
                    stack=True,
                )
            )
            headline += [f"{d['metric']}: {d['moved']}" for d in ds["diagnosis"]]
        body.append("<h3>Runs</h3>")
        body.append(
            pg.table(
                ["Config", "Lever", "State", "Leaking queries", "Time (s)"],
                [
                    [
                        r["config"],
                        r["lever"],
                        r["state"] + ("" if r["ran"] else " (reused)"),
                        r["queries_with_leak"],
                        "" if r["elapsed_s"] is None else r["elapsed_s"],
                    ]
                    for r in ds["runs"]
                ],
                text_cols=2,
                row_classes=[
                    "row-failed" if r["state"] == "failed" or r["queries_with_leak"] else "" for r in ds["runs"]
                ],
            )
        )
        for metric in ds.get("headline_metrics", []):
            table = ds["metrics"][metric]
            body.append(f"<h3>{pg.e(display_name(metric))} <code>{pg.e(metric)}</code></h3>")
            body.append(
                pg.table(
                    HEADER,
                    _rows(table),
                    text_cols=2,
                    row_classes=[
                        {"better": "row-passed", "worse": "row-failed"}.get(r["verdict"], "") for r in table["rows"]
                    ],
                )
            )
        title = f"{ds['corpus']}" + (f" — {ds.get('queries')} queries" if ds.get("queries") else "")
        sections.append(pg.section(f"dataset-{ds['id']}", title, *body))
    failed = payload["exit_code"] not in (0,)
    state = "failed" if failed else "passed"
    line = "; ".join(headline[:3]) or ("interrupted: re-run to finish" if exp["interrupted"] else "no comparison")
    return pg.page(
        kind="experiment",
        title=f"Experiment: {exp['name']}",
        subtitle=f"baseline {payload['configs'][0]['name']}; {len(payload['configs'])} configurations; {exp['method']}",
        verdict=(state, line),
        sections=sections,
        footer=f"drivebench experiment; {exp['elapsed_s']:.1f} s",
    )


def write_reports(payload: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """experiment.json, experiment.md and experiment.html in ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / "experiment.json",
        "md": out_dir / "experiment.md",
        "html": out_dir / "experiment.html",
    }
    paths["json"].write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    paths["md"].write_text(render_markdown(payload), encoding="utf-8")
    paths["html"].write_text(render_html(payload), encoding="utf-8")
    return paths
