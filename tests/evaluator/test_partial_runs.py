"""A run stopped early (``Interrupt``: Ctrl-C) in process: no query is sent after the stop, the requests in flight
are cancelled after the grace period and never recorded as failures, the result is marked partial in metrics.json,
every report, JUnit and the history (old history files gain the column); run.jsonl written as the run goes survives
a kill, its cut-off last line ignored."""

from __future__ import annotations

import asyncio
import errno
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.evaluate import evaluate, write_outputs
from drivebench.evaluator.gates import apply_verdict, write_junit
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.journal import RunJournal, read_records
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.runner import Interrupt, RunConfig, run_queries
from drivebench.evaluator.targets.function import FunctionTarget
from drivebench.formats.evalset import EvalQuery, GoldDoc, RunRecord


def _queries(n: int) -> list[EvalQuery]:
    return [
        EvalQuery(query_id=f"q{i}", query=f"question {i}", user_id="alice", gold=[GoldDoc(doc_id="g")], forbidden=["s"])
        for i in range(n)
    ]


class SlowTarget:
    """Answers ``g`` after ``delay`` seconds; the queries whose ``hang`` is set never answer. Counts what was sent."""

    name = "slow"

    def __init__(self, delay: float, hang: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.delay, self.hang, self.sent = delay, hang, []  # type: list[str]

    async def recall(self, q: EvalQuery, top_k: int) -> Any:
        self.sent.append(q.query_id)
        await asyncio.sleep(3600 if q.query_id in self.hang else self.delay)
        return await FunctionTarget(lambda *_: ["g"]).recall(q, top_k)

    async def aclose(self) -> None:
        return None


def test_an_interrupt_stops_sending_and_cancels_what_hangs_after_the_grace_period() -> None:
    queries = _queries(20)
    target = SlowTarget(0.02, hang={"q3"})
    interrupt = Interrupt(grace_s=0.3)
    seen: list[str] = []

    def on_record(rec: RunRecord) -> None:
        seen.append(rec.query_id)
        if len(seen) == 5:
            threading.Timer(0, interrupt.trigger, args=("SIGINT",)).start()  # as a signal handler would, off the loop

    started = time.monotonic()
    records = asyncio.run(
        run_queries(target, queries, RunConfig(concurrency=2), interrupt=interrupt, on_record=on_record)
    )
    assert time.monotonic() - started < 3  # q3 hangs for an hour: cancelled after the grace period
    assert [r.query_id for r in records] == sorted(seen, key=lambda x: int(x[1:]))  # eval-set order, as they came
    assert "q3" in target.sent and "q3" not in seen  # in flight when stopped, cancelled, not a failure
    assert all(r.error is None for r in records)
    assert 5 <= len(records) <= 8 and len(target.sent) <= len(records) + 3  # nothing was sent after the stop
    assert interrupt.signal == "SIGINT"


def test_a_run_without_an_interrupt_answers_every_query() -> None:
    records = asyncio.run(run_queries(SlowTarget(0.0), _queries(7), RunConfig(concurrency=3), interrupt=Interrupt()))
    assert [r.query_id for r in records] == [f"q{i}" for i in range(7)]


def test_a_partial_evaluation_is_marked_in_metrics_every_report_and_junit(tmp_path: Path) -> None:
    queries = _queries(6)
    target = SlowTarget(0.0)
    interrupt = Interrupt(grace_s=0.0)
    answered: list[str] = []

    def on_record(rec: RunRecord) -> None:
        answered.append(rec.query_id)
        if len(answered) == 2:
            interrupt.trigger("SIGTERM")

    evaluation = evaluate(
        target, queries, run_config=RunConfig(concurrency=1), interrupt=interrupt, on_record=on_record
    )
    result = evaluation.result
    assert evaluation.partial and result["partial"] is True
    assert result["completion"] == {"answered": 2, "queries": 6, "unanswered": 4, "stopped_by": "SIGTERM"}
    assert result["status"]["state"] == "partial" and result["errors"]["queries"] == 2  # figures over the 2 only
    assert result["metrics"]["hit_rate@10"] == 1.0 and len(result["per_query"]) == 2
    apply_verdict(result, [])
    assert result["verdict"]["state"] == "failed" and result["verdict"]["exit_code"] == 143  # never a success
    out = write_outputs(evaluation, tmp_path / "run")
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics)[:4] == ["verdict", "status", "partial", "completion"]
    md, html = write_reports(result, out)
    for page in (md.read_text(encoding="utf-8"), html.read_text(encoding="utf-8")):
        assert "RUN PARTIAL: 2 of 6 queries asked before the run was stopped" in page
        assert "Verdict: FAILED (exit 143): the run is partial (2 of 6 queries answered)" in page
    junit = ET.parse(write_junit(tmp_path / "junit.xml", result, [])).getroot()
    error = junit.find(".//testcase[@name='run']/error")
    assert error is not None and error.get("message") == "the run is partial"


def test_an_interrupt_before_the_run_sends_nothing_and_the_result_still_scores() -> None:
    interrupt = Interrupt()
    interrupt.trigger("SIGINT")
    target = SlowTarget(0.0)
    evaluation = evaluate(target, _queries(4), interrupt=interrupt, by=())
    assert target.sent == [] and evaluation.partial
    assert evaluation.result["completion"]["answered"] == 0 and evaluation.records == []


def test_a_resumed_evaluation_scores_the_done_records_without_asking_them_again() -> None:
    queries = _queries(5)
    first = evaluate(SlowTarget(0.0), queries)
    done = [r for r in first.records if r.query_id in ("q0", "q2")]
    target = SlowTarget(0.0)
    resumed = evaluate(target, queries, done=done)
    assert sorted(target.sent) == ["q1", "q3", "q4"]
    assert resumed.result["run_info"]["resumed"] == {"answered_before": 2, "asked": 3}
    drop = ("latency_ms", "latency_ms_p50", "latency_ms_p95", "latency_ms_p99", "latency_ms_mean")
    assert {k: v for k, v in resumed.result["metrics"].items() if k not in drop} == {
        k: v for k, v in first.result["metrics"].items() if k not in drop
    }
    assert not resumed.partial and [r.query_id for r in resumed.records] == [q.query_id for q in queries]


def test_run_jsonl_written_as_the_run_goes_survives_a_cut_off_last_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    journal = RunJournal(path)
    for i in range(3):
        journal.append(RunRecord(query_id=f"q{i}", results=[{"doc_id": "g"}]))
    journal.close()
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"query_id": "q3", "resu')  # what a SIGKILL in the middle of a write leaves
    assert [r.query_id for r in read_records(path)] == ["q0", "q1", "q2"]
    journal = RunJournal(path, resume=True)  # a resumed run appends after it, on a line of its own
    journal.append(RunRecord(query_id="q3", results=[]))
    journal.close()
    assert [r.query_id for r in read_records(path)] == ["q0", "q1", "q2", "q3"]


OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, recorded_at TEXT NOT NULL,
    started_at TEXT, run_dir TEXT, target TEXT, evalset_hash TEXT, snapshot TEXT, format TEXT, result TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'ok', corpus TEXT, corpus_version TEXT, verdict TEXT, gates TEXT, label TEXT);
CREATE TABLE metric_values (run_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL, ci_low REAL, ci_high REAL,
    PRIMARY KEY (run_id, name));
CREATE TABLE query_values (run_id INTEGER NOT NULL, ord INTEGER NOT NULL, query_id TEXT NOT NULL, status TEXT,
    row TEXT NOT NULL, PRIMARY KEY (run_id, ord));
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO runs (fingerprint, recorded_at, started_at, target, result, corpus_version)
    VALUES ('sha256:old', '2020-01-01T00:00:00+00:00', '2020-01-01T00:00:00+00:00', 'old-target', '{}', 'seed@1');
INSERT INTO metric_values VALUES (1, 'hit_rate@10', 0.5, NULL, NULL);
"""


def test_an_old_history_gains_the_scope_column_and_trends_leave_partial_and_subset_runs_out(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as con:
        con.executescript(OLD_SCHEMA)
    store = HistoryStore(path)
    (old,) = store.runs()
    assert old.scope is None and old.full
    partial = sample_result(seed=1, started_at="2020-02-01T00:00:00+00:00")
    partial.update(partial=True, completion={"answered": 3, "queries": 9})
    subset = sample_result(seed=2, started_at="2020-03-01T00:00:00+00:00")
    subset["run_info"]["subset"] = {"of": "/runs/a", "queries": 4}
    full = sample_result(seed=3, started_at="2020-04-01T00:00:00+00:00")
    for r in (partial, subset, full):
        store.record(r)
    assert [r.scope for r in store.runs()] == [None, "partial", "subset", None]
    assert [p.run.id for p in store.trend("hit_rate@10")] == [1, 4]
    assert [p.run.id for p in store.trend("hit_rate@10", include_failed=True)] == [1, 2, 3, 4]
    assert [r.id for r in store.runs(include_failed=False)] == [1, 4] and store.resolve(
        "latest~1", include_failed=False
    ) == 1
    with sqlite3.connect(path) as con:
        assert "scope" in {r[1] for r in con.execute("PRAGMA table_info(runs)")}
    listed = CliRunner().invoke(app, ["eval", "history", "--history", str(path), "--json", "-"])
    assert listed.exit_code == 0, listed.output
    assert [r["scope"] for r in json.loads(listed.stdout)["runs"]] == [None, "partial", "subset", None]
    table = CliRunner().invoke(app, ["eval", "history", "--history", str(path)], env={"COLUMNS": "200"})
    assert "PARTIAL" in table.stdout and "subset" in table.stdout


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["eval", "run", *args, "--token", "t", "--history", "none"])


def test_resume_refuses_what_it_cannot_continue(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _cli("--resume", str(empty))
    assert done.exit_code == 2 and "not a run that can be resumed" in done.output, done.output
    old = tmp_path / "old-complete"
    old.mkdir()
    (old / "metrics.json").write_text(json.dumps({"per_query": [{"query_id": "q1"}]}), encoding="utf-8")
    done = _cli("--resume", str(old))
    assert done.exit_code == 2 and "nothing to resume" in done.output, done.output
    done = _cli("--resume", str(empty), "--only-failed", str(old))
    assert done.exit_code == 2 and "not both" in done.output, done.output


def test_only_failed_of_a_run_where_nothing_failed_exits_2(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "failed_queries.jsonl").write_text("", encoding="utf-8")
    done = _cli("--only-failed", str(clean), "--target", "http://127.0.0.1:9")
    assert done.exit_code == 2 and "nothing to re-ask" in done.output, done.output
    assert not any(p.name != "failed_queries.jsonl" for p in clean.iterdir())  # nothing written


def test_a_journal_that_cannot_be_written_does_not_stop_the_run() -> None:
    journal = RunJournal(Path("/dev/full"))  # every write fails as on a full disk (ENOSPC)
    journal.append(RunRecord(query_id="q0"))  # no exception: the run goes on, its records are written at the end
    journal.append(RunRecord(query_id="q1"))
    journal.close()
    assert isinstance(journal.error, OSError) and journal.error.errno == errno.ENOSPC and journal.appended == 0
