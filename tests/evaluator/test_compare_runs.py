"""``eval compare`` over N runs (the first is the baseline), Holm-adjusted p-values, and the corpus-version
check: runs and history record the corpus and its version."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.compare_runs import compare_runs, corpus_mismatch, holm
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.scoring import compare
from tests.support.docs import code_blocks


def test_holm_step_down() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    assert holm([0.3, 0.2]) == pytest.approx([0.4, 0.4])  # monotone: never below a smaller p's adjustment
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


@pytest.fixture(scope="module")
def runs() -> list[dict[str, Any]]:
    out = []
    for seed in (0, 1, 2):
        r = sample_result(seed=seed, resamples=100, started_at=f"2020-0{seed + 1}-01T00:00:00+00:00")
        r["run_info"]["corpus"] = "acme-zh"
        r["run_info"]["corpus_version"] = "acme-zh@2"
        out.append(r)
    return out


def _dirs(tmp_path: Path, results: list[dict[str, Any]]) -> list[str]:
    paths = []
    for i, r in enumerate(results):
        d = tmp_path / f"run{i}"
        d.mkdir(exist_ok=True)
        (d / "metrics.json").write_text(json.dumps(r), encoding="utf-8")
        paths.append(str(d))
    return paths


def test_every_run_is_paired_with_the_first(runs: list[dict[str, Any]]) -> None:
    out = compare_runs(runs, seed=3)
    assert len(out) == 2
    for cmp, run in zip(out, runs[1:], strict=True):
        plain = compare(run, runs[0], seed=3)
        assert cmp["queries"] == plain["queries"]
        for name, row in plain["metrics"].items():
            assert {k: v for k, v in cmp["metrics"][name].items() if k != "p_holm"} == row
    name = "hit_rate@3"
    raw = [c["metrics"][name]["p_value"] for c in out]
    assert [c["metrics"][name]["p_holm"] for c in out] == pytest.approx(holm(raw))
    assert all(c["metrics"][name]["p_holm"] >= c["metrics"][name]["p_value"] for c in out)
    with pytest.raises(ValueError, match="at least two"):
        compare_runs(runs[:1])


def test_cli_compares_n_runs_against_the_baseline(tmp_path: Path, runs: list[dict[str, Any]]) -> None:
    paths = _dirs(tmp_path, runs)
    done = CliRunner().invoke(app, ["eval", "compare", *paths, "--json", "-"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["baseline"] == paths[0] and payload["runs"] == paths
    assert [c["run"] for c in payload["comparisons"]] == paths[1:]
    assert payload["corpus_versions"] == ["acme-zh@2"] * 3
    row = payload["comparisons"][1]["metrics"]["hit_rate@3"]
    assert row["diff"] == pytest.approx(row["mean_a"] - row["mean_b"])  # run − baseline
    assert row["mean_b"] == pytest.approx(runs[0]["metrics"]["hit_rate@3"])
    table = CliRunner().invoke(app, ["eval", "compare", *paths, "-m", "hit_rate@3"], env={"COLUMNS": "220"})
    assert table.exit_code == 0, table.output
    lines = [line for line in table.stdout.splitlines() if "run1" in line or "run2" in line]
    assert len(lines) == 2 and "hit_rate@3" in lines[0]  # a row per run, the metric named once
    for c, line in zip(payload["comparisons"], lines, strict=True):
        assert f"{c['metrics']['hit_rate@3']['diff']:+.3f}" in line
    assert "p (Holm)" in table.stdout and "baseline" in table.stdout


def test_cli_needs_two_runs(tmp_path: Path, runs: list[dict[str, Any]]) -> None:
    done = CliRunner().invoke(app, ["eval", "compare", _dirs(tmp_path, runs[:1])[0]])
    assert done.exit_code == 2
    assert "at least two runs" in done.output and "hint:" in done.output


def test_cli_refuses_mixed_corpus_versions_unless_told(tmp_path: Path, runs: list[dict[str, Any]]) -> None:
    mixed = copy.deepcopy(runs)
    mixed[2]["run_info"]["corpus_version"] = "acme-zh@1"
    assert corpus_mismatch(mixed) and not corpus_mismatch(runs)
    paths = _dirs(tmp_path, mixed)
    done = CliRunner().invoke(app, ["eval", "compare", *paths], env={"COLUMNS": "250"})
    assert done.exit_code == 2, done.output
    text = " ".join(done.output.split())
    assert "different corpus versions" in text and "acme-zh@1" in text and "acme-zh@2" in text
    assert "hint:" in text and "--allow-mixed-corpus" in text
    assert "Traceback" not in done.output
    done = CliRunner().invoke(app, ["eval", "compare", *paths, "--allow-mixed-corpus", "--json", "-"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["corpus_versions"] == ["acme-zh@2", "acme-zh@2", "acme-zh@1"]
    unknown = copy.deepcopy(runs)
    del unknown[1]["run_info"]["corpus_version"]  # an older run that does not say: not a mismatch
    assert not corpus_mismatch(unknown)


def test_history_records_corpus_and_version(tmp_path: Path, runs: list[dict[str, Any]]) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    run_id = store.record(runs[0])
    summary = store.summary(run_id)
    assert (summary.corpus, summary.corpus_version) == ("acme-zh", "acme-zh@2")
    assert store.trend("hit_rate@3")[0].run.corpus_version == "acme-zh@2"
    done = CliRunner().invoke(app, ["eval", "history", "--history", str(store.path), "--json", "-"])
    assert json.loads(done.stdout)["runs"][0]["corpus_version"] == "acme-zh@2"
    # a history file from before the columns gains them on open
    old = tmp_path / "old.sqlite3"
    con = sqlite3.connect(old)
    con.execute(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, recorded_at TEXT"
        " NOT NULL, started_at TEXT, run_dir TEXT, target TEXT, evalset_hash TEXT, snapshot TEXT, format TEXT,"
        " result TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'ok')"
    )
    con.execute("INSERT INTO runs (fingerprint, recorded_at, result) VALUES ('x', '2020-01-01', '{}')")
    con.commit()
    con.close()
    [row] = HistoryStore(old).runs()
    assert row.corpus is None and row.corpus_version is None
    assert HistoryStore(old).record(runs[1]) == 2


def test_documented_compare_line_matches_the_help() -> None:
    synopsis = code_blocks("commands.md", "Synopsis", "bash")[0]
    line = next(x for x in synopsis.splitlines() if x.startswith("drivebench eval compare BASELINE RUN [RUN ...]"))
    done = CliRunner().invoke(app, ["eval", "compare", "--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0
    for option in ("--metric", "--json", "--include-failed", "--allow-mixed-corpus"):
        assert option in line and option in done.output
