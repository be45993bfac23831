"""Gate results and the verdict are stored in metrics.json before any report is written, and every place a run is
read from shows them: report.md, report.html, the terminal summary, the history row and the console's runs page.
Gate messages state the condition they checked; a history file written before the verdict columns still opens."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.gates import apply_verdict, check_gates, leak_gates, parse_gate
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.report.terminal import print_summary
from drivebench.testing import ServedSimulator
from tests.support.sims import client_for

FAILING = "hit_rate@10<1.01"  # a hit rate is at most 1: this gate fails on every run
PASSING = "error_rate>0.5"


def _one(value: float, expr: str) -> str:
    name = parse_gate(expr).name
    (g,) = check_gates({"metrics": {name: value}}, [parse_gate(expr)])
    return g.message


# ---------------------------------------------------------------------------------------------- wording


def test_a_failing_gate_states_the_condition_that_held() -> None:
    assert _one(0.61, "hit_rate@10<0.80") == "FAILED: hit_rate@10 = 0.61 is below 0.80"
    assert _one(0.12, "leak_rate@10>0") == "FAILED: leak_rate@10 = 0.12 is above 0.00"


def test_a_passing_gate_states_the_condition_that_holds_instead() -> None:
    assert _one(0.9333, "hit_rate@10<0.5") == "passed: hit_rate@10 = 0.93 is at least 0.50"
    assert _one(0.0, "leak_rate@10>0") == "passed: leak_rate@10 = 0.00 is at most 0.00"


@pytest.mark.parametrize(
    ("value", "expr", "message"),
    [
        (0.7999, "hit_rate@10<0.80", "FAILED: hit_rate@10 = 0.7999 is below 0.80"),  # never "0.80 is below 0.80"
        (0.8, "hit_rate@10<0.80", "passed: hit_rate@10 = 0.80 is at least 0.80"),
        (0.8, "hit_rate@10<=0.80", "FAILED: hit_rate@10 = 0.80 is at most 0.80"),
        (0.9, "hit_rate@10>=0.95", "passed: hit_rate@10 = 0.90 is below 0.95"),
        (0.5, "mrr@10==0.5", "FAILED: mrr@10 = 0.50 equals 0.50"),
        (0.5, "mrr@10!=0.5", "passed: mrr@10 = 0.50 equals 0.50"),
    ],
)
def test_every_operator_reads_as_a_sentence(value: float, expr: str, message: str) -> None:
    assert _one(value, expr) == message


def test_counts_are_whole_numbers_and_a_missing_figure_fails() -> None:
    (g,) = check_gates({"errors": {"failed": 3}}, [parse_gate("errors>0")])
    assert g.failed and g.message == "FAILED: errors = 3 is above 0"
    (g,) = check_gates({"metrics": {"leak_rate@10": None}}, [parse_gate("leak_rate@10>0")])
    assert g.failed and g.value is None and g.message.startswith("FAILED: leak_rate@10 was not measured")


def test_the_leak_gate_counts_leaked_queries() -> None:
    result: dict[str, Any] = {
        "status": {"state": "ok"},
        "oracles": {"leak": {"measured": True}},
        "counts": {"queries": 55, "queries_with_leak": 12},
        "errors": {"answered": 55, "failed": 0},
    }
    (g,) = leak_gates(result)
    assert g.failed and g.expr == "no leaks" and g.value == 12 and g.threshold == 0
    assert g.message == "FAILED: 12 of 55 queries leaked (no leaks allowed; --allow-leaks to accept)"
    result["errors"] = {"answered": 50, "failed": 5}
    (g,) = leak_gates(result)
    assert g.message.startswith("FAILED: 12 of 50 answered queries leaked")  # the rate's own denominator
    assert leak_gates(result, allow_leaks=True) == []


def test_verdict_and_gates_are_stored_in_the_result() -> None:
    result = sample_result(seed=2, n_queries=24, resamples=50)
    result["status"] = {"state": "ok", "reason": "error rate ok"}
    out = apply_verdict(result, [parse_gate(FAILING), parse_gate("hit_rate@10<0")], allow_leaks=True)
    assert [g.failed for g in out] == [True, False]
    assert result["verdict"]["state"] == "failed" and result["verdict"]["exit_code"] == 1
    assert result["verdict"]["reasons"] == [out[0].message]
    stored = result["gates"][0]
    assert {k: stored[k] for k in ("expr", "threshold", "passed", "failed")} == {
        "expr": FAILING,
        "threshold": 1.01,
        "passed": False,
        "failed": True,
    }
    assert stored["value"] == result["metrics"]["hit_rate@10"] and stored["message"].startswith("FAILED: ")
    result["status"] = {"state": "failed", "reason": "every query failed"}
    apply_verdict(result, [parse_gate("hit_rate@10<0")], allow_leaks=True)
    assert result["verdict"]["exit_code"] == 3 and result["verdict"]["reasons"] == [
        "FAILED: the run failed: every query failed"
    ]


def test_reports_open_with_the_verdict() -> None:
    result = sample_result(seed=2, n_queries=24, resamples=50)
    result["status"] = {"state": "ok", "reason": "error rate ok"}
    apply_verdict(result, [parse_gate(FAILING)], allow_leaks=True)
    md = render_markdown(result)
    sections = re.findall(r"^## (.+)$", md, flags=re.M)
    assert sections[0] == "Verdict" and "**Verdict: FAILED (exit 1): 1 of 1 gate failed**" in md
    console = Console(record=True, width=200)
    print_summary(result, console)
    text = console.export_text()
    first, second = text.splitlines()[:2]  # the one-line verdict, then the gates' verdict and table
    assert first.startswith("FAILED (1 of 1 gate failed) · LEAKS in 4 queries · hit_rate@10 ") and second.startswith(
        "Verdict: FAILED (exit 1)"
    )
    assert FAILING in text
    assert "Verdict" not in render_markdown(sample_result(seed=2, n_queries=24, resamples=50))  # an older file


# ------------------------------------------------------------------------------ history: the old schema

OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, recorded_at TEXT NOT NULL,
    started_at TEXT, run_dir TEXT, target TEXT, evalset_hash TEXT, snapshot TEXT, format TEXT, result TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'ok', corpus TEXT, corpus_version TEXT
);
CREATE INDEX runs_order ON runs (started_at, id);
CREATE TABLE metric_values (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE, name TEXT NOT NULL, value REAL, ci_low REAL,
    ci_high REAL, PRIMARY KEY (run_id, name)
);
CREATE INDEX metric_values_name ON metric_values (name, run_id);
CREATE TABLE query_values (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE, ord INTEGER NOT NULL, query_id TEXT NOT NULL,
    status TEXT, row TEXT NOT NULL, PRIMARY KEY (run_id, ord)
);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO runs (fingerprint, recorded_at, started_at, target, evalset_hash, format, result)
    VALUES ('sha256:old', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00', 'http://old', 'sha256:e',
            'drivebench-metrics/1', '{"metrics": {"hit_rate@10": 0.5}, "run_info": {"target": "http://old"}}');
INSERT INTO metric_values VALUES (1, 'hit_rate@10', 0.5, NULL, NULL);
"""


def _old_history(path: Path) -> Path:
    with sqlite3.connect(path) as con:
        con.executescript(OLD_SCHEMA)
    return path


def test_a_history_written_by_the_old_schema_still_opens(tmp_path: Path) -> None:
    store = HistoryStore(_old_history(tmp_path / "old.sqlite3"))
    (old,) = store.runs()
    assert old.target == "http://old" and old.verdict is None and old.gates == [] and not old.failed
    assert store.load(old.id)["metrics"] == {"hit_rate@10": 0.5}
    assert [p.value for p in store.trend("hit_rate@10")] == [0.5]
    result = sample_result(seed=1, n_queries=24, resamples=50)
    result["status"] = {"state": "ok", "reason": "ok"}
    apply_verdict(result, [parse_gate(FAILING)], allow_leaks=True)
    new_id = store.record(result)
    new = store.summary(new_id)
    assert new.verdict == "failed" and [g["expr"] for g in new.failed_gates] == [FAILING]
    assert [p.run.verdict for p in store.trend("hit_rate@10")] == [None, "failed"]  # a gate failure stays in trends
    with sqlite3.connect(store.path) as con:
        columns = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
    assert {"verdict", "gates"} <= columns


# --------------------------------------------------------------- acceptance: a gate-failed `eval run`


def test_a_gate_failed_run_shows_the_gate_everywhere(tmp_path: Path, drivebench_server: ServedSimulator) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    evalset = tmp_path / "evalset.jsonl"
    lines = (sim.corpus_dir / "evalset.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    evalset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, history = tmp_path / "run", tmp_path / "h.sqlite3"
    args = [
        "eval",
        "run",
        "--target",
        drivebench_server.url,
        "--token",
        sim.tokens.eval_token,
        "--evalset",
        str(evalset),
    ]
    args += ["--corpus", "seed", "--out", str(out), "--history", str(history), "--json", str(tmp_path / "ci.json")]
    done = CliRunner().invoke(app, [*args, "--fail-on", FAILING, "--fail-on", PASSING], env={"COLUMNS": "250"})
    assert done.exit_code == 1, done.output

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert next(iter(metrics)) == "verdict"
    verdict, gates = metrics["verdict"], {g["expr"]: g for g in metrics["gates"]}
    assert verdict["state"] == "failed" and verdict["exit_code"] == 1 and verdict["gates_failed"] == 1
    hit = metrics["metrics"]["hit_rate@10"]
    failing = gates[FAILING]
    assert failing["failed"] and not failing["passed"] and failing["value"] == hit and failing["threshold"] == 1.01
    assert failing["message"] == f"FAILED: hit_rate@10 = {hit:.2f} is below 1.01"
    assert verdict["reasons"] == [failing["message"]]
    assert gates[PASSING]["passed"] and gates[PASSING]["message"].startswith("passed: error_rate = 0.00 is at most")
    assert json.loads((tmp_path / "ci.json").read_text())["verdict"] == verdict  # the CI JSON says the same

    md = (out / "report.md").read_text(encoding="utf-8")
    assert re.findall(r"^## (.+)$", md, flags=re.M)[0] == "Verdict"
    assert f"| {FAILING} | FAILED |" in md and failing["message"] in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index('<section id="verdict">') < html.index('<section id="errors">')
    assert '<tr class="gate-failed"><td class="text status-failed">hit_rate@10&lt;1.01</td>' in html
    assert "Verdict: FAILED (exit 1)" in done.stdout  # the terminal summary opens with it
    said = " ".join(done.output.split())
    assert f"{failing['message']} ({FAILING})" in said and "verdict FAILED (exit 1): 1 of 2 gates failed" in said

    (row,) = HistoryStore(history).runs()
    assert row.verdict == "failed" and row.status == "ok"
    assert [(g["expr"], g["message"]) for g in row.failed_gates] == [(FAILING, failing["message"])]
    listed = CliRunner().invoke(app, ["eval", "history", "--history", str(history), "--json", "-"])
    (listed_run,) = json.loads(listed.stdout)["runs"]
    assert listed_run["verdict"] == "failed" and listed_run["failed_gates"] == [FAILING]

    client = client_for(sim)
    client.app.state.ui_history = history  # type: ignore[attr-defined]
    page = client.get("/ui/runs", headers={"Authorization": f"Bearer {sim.tokens.admin_token}"})
    assert page.status_code == 200
    tr = re.search(rf'<tr data-run-id="{row.id}" data-verdict="failed" class="verdict-failed">(.*?)</tr>', page.text)
    assert tr is not None, page.text[-3000:]
    assert "<strong>FAILED</strong>" in tr[1] and "<code>hit_rate@10&lt;1.01</code>" in tr[1]
    assert f"hit_rate@10 = {hit:.2f} is below 1.01" in tr[1]
    report = client.get(f"/ui/runs/{row.id}/report", headers={"Authorization": f"Bearer {sim.tokens.admin_token}"})
    assert report.status_code == 200 and report.text.index('id="verdict"') < report.text.index('id="errors"')
