"""History keeps failed runs, marked; trend, compare and ``latest`` leave them out unless asked."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.sample import sample_result


def _failed(result: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(result)
    out["status"] = {"state": "failed", "reason": "40 of 40 queries failed", "max_error_rate": 0.0}
    out["run_info"]["started_at"] = "2020-06-01T00:00:00+00:00"
    return out


def _store(tmp_path: Path) -> HistoryStore:
    store = HistoryStore(tmp_path / "history.sqlite3")
    ok = sample_result(seed=0, started_at="2020-01-01T00:00:00+00:00")
    ok2 = sample_result(seed=1, started_at="2020-02-01T00:00:00+00:00")
    assert store.record(ok) == 1 and store.record(ok2) == 2
    assert store.record(_failed(ok)) == 3  # the latest by time, and failed
    return store


def test_store_marks_and_skips_failed_runs(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert [r.status for r in store.runs()] == ["ok", "ok", "failed"]
    assert [r.id for r in store.runs(include_failed=False)] == [1, 2]
    assert store.resolve("latest") == 3  # an explicit reference to everything
    assert store.resolve("latest", include_failed=False) == 2
    assert [p.run.id for p in store.trend("hit_rate@10")] == [1, 2]
    assert [p.run.id for p in store.trend("hit_rate@10", include_failed=True)] == [1, 2, 3]


def test_old_history_files_gain_the_status_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, recorded_at TEXT"
        " NOT NULL, started_at TEXT, run_dir TEXT, target TEXT, evalset_hash TEXT, snapshot TEXT, format TEXT,"
        " result TEXT NOT NULL)"
    )
    con.execute("INSERT INTO runs (fingerprint, recorded_at, result) VALUES ('x', '2020-01-01', '{}')")
    con.commit()
    con.close()
    assert [r.status for r in HistoryStore(path).runs()] == ["ok"]


def test_cli_trend_history_and_compare_leave_failed_runs_out(tmp_path: Path) -> None:
    store = _store(tmp_path)
    h = ["--history", str(store.path)]
    runner = CliRunner()
    done = runner.invoke(app, ["eval", "trend", *h, "--json", "-"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert [p["id"] for p in payload["points"]] == [1, 2] and payload["failed_runs_left_out"] == 1
    done = runner.invoke(app, ["eval", "trend", *h, "--include-failed", "--json", "-"])
    assert [p["status"] for p in json.loads(done.stdout)["points"]] == ["ok", "ok", "failed"]
    done = runner.invoke(app, ["eval", "history", *h, "--json", "-"])
    assert done.exit_code == 0 and [r["status"] for r in json.loads(done.stdout)["runs"]] == ["ok", "ok", "failed"]
    done = runner.invoke(app, ["eval", "compare", "3", "1", *h])
    assert done.exit_code == 2 and "run 3 is a FAILED run" in done.output and "--include-failed" in done.output
    done = runner.invoke(app, ["eval", "compare", "latest", "latest~1", *h, "--json", "-"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["runs"] == ["run 2", "run 1"]  # the first named is the baseline
    done = runner.invoke(app, ["eval", "compare", "3", "1", *h, "--include-failed", "--json", "-"])
    assert done.exit_code == 0 and json.loads(done.stdout)["baseline"] == "run 3"
