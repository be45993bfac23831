"""Trends show the gates recorded with the runs as threshold lines and mark failed runs (the run failed, a gate
failed, it leaked), in the SVG chart (``eval trend --svg``, the console's trend page) and in the terminal; the
console's trend draws one line per target, corpus version and label, as ``eval trend`` does; ``eval compare``
groups its rows by metric family."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.compare_runs import METRIC_GROUPS, add_groups, compare_markdown, metric_group
from drivebench.evaluator.gates import apply_verdict, parse_gate
from drivebench.evaluator.history import HistoryStore, trend_lines
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.trends import metric_gates, trend_chart, trend_failures
from drivebench.server.console import runs_view

METRIC = "hit_rate@3"


def _result(i: int, target: str, gate: str | None = None, leaks: int = 0) -> dict[str, Any]:
    r = sample_result(seed=i, resamples=50, started_at=f"2020-0{i + 1}-01T00:00:00+00:00")
    r["run_info"].update(target=target, corpus_version="seed@1")
    r["counts"]["queries_with_leak"] = leaks  # the sample leaks; these runs leak only when told to
    if gate is not None:
        apply_verdict(r, [parse_gate(gate)], allow_no_oracle=True, allow_leaks=True)
    return r


def _store(path: Path, gated: bool = True) -> HistoryStore:
    """Runs 1 and 3 of target A, 2 and 4 of target B. With ``gated``: runs 1 and 3 carry the gate hit_rate@3<0.5
    (passed) and run 3 also hit_rate@3<0.99 (failed); run 4 leaked 2 queries (recorded with --allow-leaks)."""
    store = HistoryStore(path)
    plan = [
        ("A", "hit_rate@3<0.5", 0),
        ("B", None, 0),
        ("A", "hit_rate@3<0.99", 0),
        ("B", None, 2),
    ]
    for i, (target, gate, leaks) in enumerate(plan):
        r = _result(i, target, gate if gated else None, leaks)
        if gated and i == 2:  # two gates on the metric: the first threshold again, and a higher one that fails
            apply_verdict(r, [parse_gate("hit_rate@3<0.5"), parse_gate(gate or "")], allow_no_oracle=True)
        store.record(r)
    return store


def _lines_of(svg: str, cls: str) -> list[str]:
    return re.findall(rf'<line class="{cls}"[^>]*>', svg)


def test_a_gated_metric_gets_a_dashed_threshold_line_and_an_ungated_one_none(tmp_path: Path) -> None:
    store = _store(tmp_path / "h.sqlite3")
    points = store.trend(METRIC)
    gates = metric_gates(METRIC, [p.run for p in points])
    assert [(g.threshold, g.passes, g.runs) for g in gates] == [
        (0.5, "hit_rate@3 ≥ 0.5", (1, 3)),
        (0.99, "hit_rate@3 ≥ 0.99", (3,)),
    ]
    svg = trend_chart("trend", METRIC, trend_lines(points), gates)
    thresholds = _lines_of(svg, "threshold")
    assert len(thresholds) == 2 and all('stroke-dasharray="6 4"' in t for t in thresholds)
    ys = [float(re.search(r'y1="([\d.]+)"', t)[1]) for t in thresholds]  # type: ignore[index]
    assert ys[0] > ys[1]  # 0.5 drawn below 0.99
    assert "passes at hit_rate@3 ≥ 0.99" in svg
    assert "<script" not in svg.lower() and "href" not in svg
    # another metric (no gate names it) and a history without gates: no threshold line
    other = store.trend("recall@3")
    assert metric_gates("recall@3", [p.run for p in other]) == []
    assert _lines_of(trend_chart("trend", "recall@3", trend_lines(other)), "threshold") == []
    plain = _store(tmp_path / "plain.sqlite3", gated=False)
    plain_points = plain.trend(METRIC)
    plain_gates = metric_gates(METRIC, [p.run for p in plain_points])
    assert plain_gates == [] and _lines_of(trend_chart("trend", METRIC, trend_lines(plain_points)), "threshold") == []


def test_failed_runs_are_marked_red_gate_failures_and_leaks_alike(tmp_path: Path) -> None:
    store = _store(tmp_path / "h.sqlite3")
    points = store.trend(METRIC)
    failures = trend_failures(points, store.leak_counts([p.run.id for p in points]))
    assert failures == {3: "gate failed: hit_rate@3<0.99", 4: "2 queries leaked"}
    svg = trend_chart("trend", METRIC, trend_lines(points), [], failures)
    failed = re.findall(r'<circle class="point failed" data-run="(\d+)"[^>]*fill="([^"]+)"', svg)
    passed = re.findall(r'<circle class="point" data-run="(\d+)"[^>]*fill="([^"]+)"', svg)
    assert sorted(run for run, _ in failed) == ["3", "4"] and {fill for _, fill in failed} == {"#dc2626"}
    assert sorted(run for run, _ in passed) == ["1", "2"] and "#dc2626" not in {fill for _, fill in passed}
    assert "FAILED: 2 queries leaked" in svg


def test_eval_trend_states_the_thresholds_marks_failed_runs_and_names_the_history(tmp_path: Path) -> None:
    store = _store(tmp_path / "h.sqlite3")
    h = ["--history", str(store.path), "--metric", METRIC]
    svg = tmp_path / "trend.svg"
    done = CliRunner().invoke(app, ["eval", "trend", *h, "--svg", str(svg)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "gate hit_rate@3<0.5: threshold 0.5, a run passes at hit_rate@3 ≥ 0.5 (checked on 2 of 4 run(s))" in out
    assert "gate hit_rate@3<0.99: threshold 0.99" in out
    assert "✗ run 3 failed: gate failed: hit_rate@3<0.99" in out and "✗ run 4 failed: 2 queries leaked" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert "✗" in rows["3"] and "✗" in rows["4"] and "✗" not in rows["1"] and "✗" not in rows["2"]
    assert f"history: {store.path.resolve()}" in out
    written = svg.read_text(encoding="utf-8")
    assert written.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and len(_lines_of(written, "threshold")) == 2
    payload = json.loads(CliRunner().invoke(app, ["eval", "trend", *h, "--json", "-"]).stdout)
    assert payload["history"] == str(store.path.resolve())
    assert [(g["expr"], g["runs"]) for g in payload["gates"]] == [("hit_rate@3<0.5", [1, 3]), ("hit_rate@3<0.99", [3])]
    assert {p["id"]: p["failed"] for p in payload["points"]} == {1: False, 2: False, 3: True, 4: True}
    ascii_out = CliRunner().invoke(app, ["eval", "trend", *h, "--ascii"], env={"COLUMNS": "200"}).stdout
    assert "x run 4 failed" in ascii_out and "✗" not in ascii_out
    listed = CliRunner().invoke(app, ["eval", "history", "--history", str(store.path)], env={"COLUMNS": "300"})
    assert str(store.path.resolve()) in listed.stdout


def test_the_console_trend_draws_one_line_per_target_with_gates_and_failed_runs(tmp_path: Path) -> None:
    store = _store(tmp_path / "h.sqlite3")
    shown = runs_view.trend(store, METRIC)
    polylines = re.findall(r'<polyline class="trend-line" data-line="(L\d)" points="([^"]*)"', shown.chart)
    assert [name for name, _ in polylines] == ["L1", "L2"]  # two targets: two lines, not one through four runs
    assert [len(coords.split()) for _, coords in polylines] == [2, 2]
    assert shown.lines == ["target A · corpus seed@1 · label —", "target B · corpus seed@1 · label —"]
    assert [(r.point.run.id, r.line) for r in shown.rows] == [(1, 1), (2, 2), (3, 1), (4, 2)]
    assert len(_lines_of(shown.chart, "threshold")) == 2
    assert {r.point.run.id for r in shown.rows if r.failure} == {3, 4}
    one = HistoryStore(tmp_path / "one.sqlite3")
    one.record(_result(0, "A"))
    one.record(_result(1, "A"))
    single = runs_view.trend(one, METRIC).chart
    assert len(re.findall(r'<polyline class="trend-line"', single)) == 1
    with pytest.raises(runs_view.InvalidRequest):
        runs_view.trend(store, "no_such_metric")


def test_compare_rows_carry_their_family_and_markdown_headings_come_in_order(tmp_path: Path) -> None:
    assert metric_group("hit_rate@10") == "retrieval" and metric_group("ndcg@3") == "retrieval"
    assert metric_group("leak_rate@5") == "safety" and metric_group("stale_version_hit_rate@1") == "safety"
    assert metric_group("citation_precision") == "answers" and metric_group("multi_hop_completeness[3]") == "multi_hop"
    assert metric_group("latency_ms_p95") == "cost" and metric_group("something_new") == "other"
    paths = []
    for seed in (0, 1):
        d = tmp_path / f"run{seed}"
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps(sample_result(seed=seed, resamples=50)), encoding="utf-8")
        paths.append(str(d))
    metrics = ["-m", "leak_rate@3", "-m", "source_coverage_macro", "-m", "hit_rate@3", "-m", "recall@3"]
    done = CliRunner().invoke(app, ["eval", "compare", *paths, *metrics, "--json", "-"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    rows = payload["comparisons"][0]["metrics"]
    assert {name: row["family"] for name, row in rows.items()} == {
        "leak_rate@3": "safety",
        "source_coverage_macro": "answers",
        "hit_rate@3": "retrieval",
        "recall@3": "retrieval",
    }
    assert [(f["family"], f["metrics"]) for f in payload["families"]] == [
        ("retrieval", ["hit_rate@3", "recall@3"]),
        ("answers", ["source_coverage_macro"]),
        ("safety", ["leak_rate@3"]),
    ]
    md = CliRunner().invoke(app, ["eval", "compare", *paths, *metrics, "--markdown", "-"])
    assert md.exit_code == 0, md.output
    headings = [line for line in md.stdout.splitlines() if line.startswith("## ")]
    heading = {g: h for g, h, _ in METRIC_GROUPS}
    assert headings == [f"## {heading['retrieval']}", f"## {heading['answers']}", f"## {heading['safety']}"]
    body = md.stdout.split(f"## {heading['answers']}")[0]
    assert "`hit_rate@3`" in body and "`recall@3`" in body and "`leak_rate@3`" not in body
    table = CliRunner().invoke(app, ["eval", "compare", *paths, *metrics], env={"COLUMNS": "200"})
    titles = [line.strip() for line in table.stdout.splitlines() if line.strip() in heading.values()]
    assert titles == [heading["retrieval"], heading["answers"], heading["safety"]]
    written = tmp_path / "out" / "compare.md"
    done = CliRunner().invoke(app, ["eval", "compare", *paths, *metrics, "--markdown", str(written)])
    assert done.exit_code == 0 and written.read_text(encoding="utf-8").startswith("# Run comparison")
    assert compare_markdown(add_groups(payload)).count("## ") == 3
