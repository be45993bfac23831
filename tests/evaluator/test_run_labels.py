"""Runs you can find again: ``--label`` in metrics.json and the history, a history file per project, one trend line
per target, corpus version and label."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.sample import sample_inputs, sample_result
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import write_jsonl
from drivebench.testing import ServedSimulator


def _label_of(history: Path, run_id: int = 1) -> Any:
    with sqlite3.connect(history) as con:
        return con.execute("SELECT label FROM runs WHERE id = ?", (run_id,)).fetchone()[0]


def test_eval_score_stores_the_label_in_metrics_json(tmp_path: Path) -> None:
    queries, run, _ = sample_inputs(seed=3, n_queries=24)
    evalset, run_file = write_jsonl(tmp_path / "evalset.jsonl", queries), write_jsonl(tmp_path / "run.jsonl", run)
    out = tmp_path / "metrics.json"
    args = ["eval", "score", "--evalset", str(evalset), "--run", str(run_file), "--max-error-rate", "0.5"]
    args += ["--allow-no-oracle", "--allow-leaks", "--json", str(out)]
    done = CliRunner().invoke(app, [*args, "--label", "  offline bm25  "])
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text(encoding="utf-8"))["run_info"]["label"] == "offline bm25"  # blanks dropped
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "label" not in json.loads(out.read_text(encoding="utf-8"))["run_info"]  # no label: no key


@pytest.mark.parametrize("bad", ["", "   ", "two\nlines", "x" * 101])
def test_a_bad_label_is_a_usage_error_before_anything_runs(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "run"
    evalset = write_jsonl(tmp_path / "evalset.jsonl", sample_inputs(seed=3, n_queries=4)[0])
    args = ["eval", "run", "--target", "http://127.0.0.1:9", "--token", "t", "--evalset", str(evalset)]
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--label", bad, "--history", str(tmp_path / "h.db")])
    assert done.exit_code == 2 and "--label" in done.output, done.output
    assert not out.exists() and not (tmp_path / "h.db").exists()


def test_eval_run_records_the_label_in_metrics_json_and_the_history(
    drivebench_server: ServedSimulator, tmp_path: Path
) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    history = tmp_path / "history.sqlite3"
    args = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--k", "1,10"]
    args += ["--evalset", str(sim.corpus_dir / EVALSET_NAME), "--out", str(tmp_path / "run"), "--history", str(history)]
    done = CliRunner().invoke(app, [*args, "--label", "nightly"])
    assert done.exit_code == 0, done.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["label"] == "nightly"
    assert _label_of(history) == "nightly"
    (summary,) = HistoryStore(history).runs()
    assert summary.label == "nightly" and HistoryStore(history).load(1)["run_info"]["label"] == "nightly"
    listed = CliRunner().invoke(app, ["eval", "history", "--history", str(history), "--json", "-"])
    assert listed.exit_code == 0 and json.loads(listed.stdout)["runs"][0]["label"] == "nightly"


def test_demo_records_the_label(tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    args = ["demo", "--corpus", "seed", "--embedder", "hash", "--k", "1,3", "--no-answers"]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--history", str(history), "--label", "α"])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))["run_info"]["label"] == "α"
    assert _label_of(history) == "α"


OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, recorded_at TEXT NOT NULL,
    started_at TEXT, run_dir TEXT, target TEXT, evalset_hash TEXT, snapshot TEXT, format TEXT, result TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'ok', corpus TEXT, corpus_version TEXT, verdict TEXT, gates TEXT);
CREATE TABLE metric_values (run_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL, ci_low REAL, ci_high REAL,
    PRIMARY KEY (run_id, name));
CREATE TABLE query_values (run_id INTEGER NOT NULL, ord INTEGER NOT NULL, query_id TEXT NOT NULL, status TEXT,
    row TEXT NOT NULL, PRIMARY KEY (run_id, ord));
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO runs (fingerprint, recorded_at, started_at, target, result, corpus_version)
    VALUES ('sha256:old', '2020-01-01T00:00:00+00:00', '2020-01-01T00:00:00+00:00', 'old-target', '{}', 'seed@1');
INSERT INTO metric_values VALUES (1, 'hit_rate@10', 0.5, NULL, NULL);
"""


def test_a_history_file_without_the_label_column_opens_and_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as con:
        con.executescript(OLD_SCHEMA)
    store = HistoryStore(path)
    (old,) = store.runs()
    assert old.target == "old-target" and old.label is None
    assert [p.value for p in store.trend("hit_rate@10")] == [0.5]
    labelled = sample_result(seed=1, started_at="2020-02-01T00:00:00+00:00")
    labelled["run_info"]["label"] = "after the upgrade"
    assert store.record(labelled) == 2
    assert [r.label for r in store.runs()] == [None, "after the upgrade"]
    with sqlite3.connect(path) as con:
        assert "label" in {r[1] for r in con.execute("PRAGMA table_info(runs)")}


def _eval_run(server: ServedSimulator, out: Path, *extra: str) -> Any:
    sim = server.sim
    assert sim.corpus_dir is not None
    args = ["eval", "run", "--target", server.url, "--token", sim.tokens.eval_token, "--k", "1,10"]
    args += ["--evalset", str(sim.corpus_dir / EVALSET_NAME), "--out", str(out), *extra]
    return CliRunner().invoke(app, args)


def test_the_default_history_is_the_projects_wherever_the_run_starts(
    drivebench_server: ServedSimulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    deeper = project / "evals" / "nightly"
    deeper.mkdir(parents=True)
    (project / "drivebench.toml").write_text("[eval.run]\nk = '1,10'\n", encoding="utf-8")
    monkeypatch.delenv("DRIVEBENCH_HISTORY", raising=False)
    monkeypatch.delenv("DRIVEBENCH_CONFIG", raising=False)
    monkeypatch.chdir(deeper)
    done = _eval_run(drivebench_server, deeper / "run", "--label", "from a subfolder")
    assert done.exit_code == 0, done.output
    expected = (project / "reports" / "history.sqlite3").resolve()
    assert f"recorded as run 1 in {expected}" in done.output  # absolute, beside drivebench.toml
    assert expected.is_file() and not (deeper / "reports").exists()
    assert [r.label for r in HistoryStore(expected).runs()] == ["from a subfolder"]
    listed = CliRunner().invoke(app, ["eval", "history", "--json", "-"])  # found again from the subfolder too
    assert listed.exit_code == 0 and json.loads(listed.stdout)["history"] == str(expected)
    elsewhere = tmp_path / "env.sqlite3"
    monkeypatch.setenv("DRIVEBENCH_HISTORY", str(elsewhere))  # the variable still wins
    done = _eval_run(drivebench_server, deeper / "run2")
    assert done.exit_code == 0 and f"recorded as run 1 in {elsewhere.resolve()}" in done.output, done.output
    assert len(HistoryStore(expected).runs()) == 1


def test_without_a_config_file_the_history_stays_under_the_current_directory(
    drivebench_server: ServedSimulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DRIVEBENCH_HISTORY", raising=False)
    monkeypatch.setenv("DRIVEBENCH_CONFIG", "none")  # no config file in force, whatever lies above tmp_path
    monkeypatch.chdir(tmp_path)
    done = _eval_run(drivebench_server, tmp_path / "run")
    assert done.exit_code == 0, done.output
    expected = (tmp_path / "reports" / "history.sqlite3").resolve()
    assert f"recorded as run 1 in {expected}" in done.output and expected.is_file()


def _history_of_two_targets(path: Path) -> HistoryStore:
    """Four runs, interleaved in time: target A labelled 'prod' and target B labelled 'candidate', same corpus."""
    store = HistoryStore(path)
    for i, (target, label) in enumerate([("A", "prod"), ("B", "candidate"), ("A", "prod"), ("B", "candidate")]):
        result = sample_result(seed=i, started_at=f"2020-0{i + 1}-01T00:00:00+00:00")
        result["run_info"].update(target=target, label=label, corpus_version="seed@1")
        assert store.record(result) == i + 1
    return store


def test_trend_draws_one_line_per_target_corpus_and_label(tmp_path: Path) -> None:
    store = _history_of_two_targets(tmp_path / "history.sqlite3")
    h = ["--history", str(store.path), "--metric", "hit_rate@3"]
    done = CliRunner().invoke(app, ["eval", "trend", *h, "--json", "-"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    groups = [(g["target"], g["corpus_version"], g["label"], [p["id"] for p in g["points"]]) for g in payload["groups"]]
    assert groups == [("A", "seed@1", "prod", [1, 3]), ("B", "seed@1", "candidate", [2, 4])]
    values = {p.run.id: p.value for p in store.trend("hit_rate@3")}
    assert payload["groups"][1]["last"] == values[4] and [p["id"] for p in payload["points"]] == [1, 2, 3, 4]
    text = CliRunner().invoke(app, ["eval", "trend", *h, "--ascii"], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "L1 target A · corpus seed@1 · label prod" in text.stdout
    assert "L2 target B · corpus seed@1 · label candidate" in text.stdout
    sparks = [line for line in text.stdout.splitlines() if line.strip().startswith("hit_rate@3 ") and "(min" in line]
    assert len(sparks) == 2 and all("2 run(s)" in line for line in sparks)  # one line each, not one of four runs
    rows = {line.split()[0]: line for line in text.stdout.splitlines() if line.strip()[:1].isdigit()}
    d = values[3] - values[1]  # run 3's Δ is against run 1 (its line), not run 2 (the other target)
    assert f"{d:+.3f}" in rows["3"] and " L1 " in rows["3"]
    last = CliRunner().invoke(app, ["eval", "trend", *h, "--last", "1", "--json", "-"])
    assert [[p["id"] for p in g["points"]] for g in json.loads(last.stdout)["groups"]] == [[3], [4]]  # per line


def test_one_target_under_two_labels_is_two_lines_and_the_target_filter_keeps_one(tmp_path: Path) -> None:
    store = _history_of_two_targets(tmp_path / "history.sqlite3")
    relabelled = sample_result(seed=7, started_at="2020-06-01T00:00:00+00:00")
    relabelled["run_info"].update(target="A", label="bge-m3 trial", corpus_version="seed@1")
    store.record(relabelled)
    done = CliRunner().invoke(app, ["eval", "trend", "--history", str(store.path), "--target", "A", "--json", "-"])
    assert done.exit_code == 0, done.output
    groups = [(g["label"], [p["id"] for p in g["points"]]) for g in json.loads(done.stdout)["groups"]]
    assert groups == [("prod", [1, 3]), ("bge-m3 trial", [5])]
