"""Run history: round trip, idempotence, trend order, references, compare, CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.cli.reports import finish_run, history_path
from drivebench.evaluator.compare_runs import metric_group
from drivebench.evaluator.history import HistoryStore, flatten_metrics, sparkline
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.scoring import compare

# started_at deliberately out of recording order
STARTS = {0: "2020-03-01T00:00:00+00:00", 1: "2020-01-01T00:00:00+00:00", 2: "2020-02-01T00:00:00+00:00"}


@pytest.fixture(scope="module")
def results() -> dict[int, dict[str, Any]]:
    return {seed: sample_result(seed=seed, started_at=STARTS[seed]) for seed in STARTS}


@pytest.fixture
def store(tmp_path: Path, results: dict[int, dict[str, Any]]) -> HistoryStore:
    s = HistoryStore(tmp_path / "h" / "history.sqlite3")
    for seed in STARTS:
        s.record(results[seed], run_dir=tmp_path / f"run{seed}")
    return s


def _json(x: Any) -> Any:
    return json.loads(json.dumps(x))


def test_round_trip(store: HistoryStore, results: dict[int, dict[str, Any]]) -> None:
    for run_id, seed in zip((1, 2, 3), STARTS, strict=True):
        assert store.load(run_id) == _json(results[seed])
    assert store.path.exists()
    with sqlite3.connect(store.path) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
        n_rows = con.execute("SELECT COUNT(*) FROM query_values WHERE run_id = 1").fetchone()[0]
    assert n_rows == len(results[0]["per_query"])


def test_record_is_idempotent(store: HistoryStore, results: dict[int, dict[str, Any]]) -> None:
    assert store.record(results[1]) == 2
    assert len(store.runs()) == 3
    changed = _json(results[1])
    changed["run_info"]["started_at"] = "2020-05-01T00:00:00+00:00"
    assert store.record(changed) == 4


def test_trend_is_ordered_by_start_time(store: HistoryStore, results: dict[int, dict[str, Any]]) -> None:
    points = store.trend("hit_rate@3")
    assert [p.run.id for p in points] == [2, 3, 1]  # seeds 1, 2, 0 by started_at
    for p, seed in zip(points, (1, 2, 0), strict=True):
        assert p.value == pytest.approx(results[seed]["metrics"]["hit_rate@3"])
        assert p.ci == pytest.approx(tuple(results[seed]["ci"]["hit_rate@3"]))
        assert p.run.started_at == STARTS[seed]
    assert [p.run.id for p in store.trend("hit_rate@3", last=2)] == [3, 1]
    by_hop = store.trend("multi_hop_completeness[3]")
    assert [p.value for p in by_hop] == pytest.approx(
        [results[s]["metrics"]["multi_hop_completeness"]["3"] for s in (1, 2, 0)]
    )
    assert all(p.value is None for p in store.trend("no_such_metric"))


def test_filters_and_references(store: HistoryStore, results: dict[int, dict[str, Any]]) -> None:
    other = _json(results[0])
    other["run_info"].update(evalset_hash="sha256:other", started_at="2020-12-01T00:00:00+00:00", target="t2")
    new_id = store.record(other)
    assert [r.id for r in store.runs(evalset_hash="sha256:other")] == [new_id]
    assert [r.id for r in store.runs(target="t2")] == [new_id]
    assert len(store.trend("hit_rate@1", evalset_hash=results[0]["run_info"]["evalset_hash"])) == 3
    assert store.resolve("latest") == new_id
    assert store.resolve("latest~1") == 1  # seed 0: 2020-03
    assert store.resolve("#2") == 2 == store.resolve(2)
    with pytest.raises(KeyError):
        store.resolve("99")
    with pytest.raises(KeyError):
        store.resolve("latest~9")
    for huge in ("99999999999999999999", f"#{2**63}", 2**64):  # past SQLite's INTEGER: no such run, not an error
        with pytest.raises(KeyError):
            store.resolve(huge)
        with pytest.raises(KeyError):
            store.load(huge)
    with pytest.raises(ValueError):
        store.resolve("yesterday")


def test_flatten_metrics() -> None:
    flat = flatten_metrics({"a@1": 0.5, "b": None, "h": {"2": 0.1, "3": {"1": 0.2}}, "s": "text", "t": True})
    assert flat == {"a@1": 0.5, "b": None, "h[2]": 0.1, "h[3][1]": 0.2}


def test_sparkline() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([1.0, None, 0.0]) == "█·▁"
    assert sparkline([0.3, 0.3]) == "▅▅"
    assert sparkline([0.0, 1.0], ascii_only=True) == "_#"
    assert sparkline([None, None]) == "··"
    line = sparkline([0.1, 0.4, 0.2, 0.9, 0.5])
    ranks = ["▁▂▃▄▅▆▇█".index(ch) for ch in line]
    assert sorted(range(5), key=lambda i: ranks[i]) == sorted(range(5), key=lambda i: [0.1, 0.4, 0.2, 0.9, 0.5][i])


def _with_holm_of_one(out: dict[str, Any]) -> dict[str, Any]:
    """One run against the baseline: Holm's adjustment of a single p-value is the p-value (and each row names the
    metric group it is shown under)."""
    return {name: {**row, "p_holm": row["p_value"], "family": metric_group(name)} for name, row in out.items()}


def test_compare_from_history_equals_scoring_compare(
    store: HistoryStore, results: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    expected = compare(_json(results[1]), _json(results[0]))  # run 2 against the baseline run 1
    assert compare(store.load(2), store.load(1)) == expected
    done = CliRunner().invoke(app, ["eval", "compare", "1", "2", "--history", str(store.path), "--json", "-"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["baseline"] == "run 1" and payload["runs"] == ["run 1", "run 2"]
    [cmp] = payload["comparisons"]
    assert cmp["run"] == "run 2" and cmp["queries"] == expected["queries"]
    assert cmp["metrics"] == _json(_with_holm_of_one(expected["metrics"]))
    # run directories work too, and the table shows the same numbers
    for seed in (0, 1):
        d = tmp_path / f"dir{seed}"
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps(results[seed]), encoding="utf-8")
    out_json = tmp_path / "cmp" / "compare.json"
    done = CliRunner().invoke(
        app, ["eval", "compare", str(tmp_path / "dir0"), str(tmp_path / "dir1"), "--json", str(out_json)],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(out_json.read_text())["comparisons"][0]["metrics"] == _json(
        _with_holm_of_one(expected["metrics"])
    )
    r = expected["metrics"]["recall@3"]
    assert f"{r['diff']:+.3f}" in done.stdout and f"[{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]" in done.stdout
    only = CliRunner().invoke(
        app, ["eval", "compare", str(tmp_path / "dir0"), str(tmp_path / "dir1"), "-m", "mrr@10", "--json", "-"]
    )
    assert list(json.loads(only.stdout)["comparisons"][0]["metrics"]) == ["mrr@10"]
    bad = CliRunner().invoke(app, ["eval", "compare", "nowhere", "1", "--history", str(tmp_path / "none.sqlite3")])
    assert bad.exit_code != 0


def test_cli_trend(store: HistoryStore) -> None:
    done = CliRunner().invoke(
        app, ["eval", "trend", "--metric", "hit_rate@3", "--history", str(store.path)], env={"COLUMNS": "200"}
    )
    assert done.exit_code == 0, done.output
    rows = [line for line in done.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [line.split()[0] for line in rows] == ["2", "3", "1"]
    values = [p.value for p in store.trend("hit_rate@3")]
    assert sparkline(values) in done.stdout
    assert "the article recommends re-running monthly" in done.output  # last sample run is months old
    typo = CliRunner().invoke(app, ["eval", "trend", "--metric", "hit_rate@30", "--history", str(store.path)])
    assert typo.exit_code != 0 and "hit_rate@3" in typo.output
    nohist = CliRunner().invoke(app, ["eval", "trend", "--history", str(store.path.parent / "missing.sqlite3")])
    assert nohist.exit_code != 0
    listing = CliRunner().invoke(app, ["eval", "history", "--history", str(store.path)], env={"COLUMNS": "200"})
    assert listing.exit_code == 0 and "sample:synthetic" in listing.stdout


def test_finish_run_writes_reports_and_records(tmp_path: Path, results: dict[int, dict[str, Any]]) -> None:
    hist = tmp_path / "hist.sqlite3"
    run_id = finish_run(results[2], tmp_path / "run", hist)
    assert run_id == 1
    assert (tmp_path / "run" / "report.md").exists() and (tmp_path / "run" / "report.html").exists()
    assert HistoryStore(hist).load(1) == _json(results[2])
    assert HistoryStore(hist).summary(1).run_dir == str((tmp_path / "run").resolve())
    assert finish_run(results[2], tmp_path / "run2", "none") is None
    assert history_path("off") is None and history_path(None) == Path("reports/history.sqlite3")
    blocked = tmp_path / "file"
    blocked.write_text("x")
    assert finish_run(results[2], tmp_path / "run3", blocked / "h.sqlite3") is None  # reported, not fatal
