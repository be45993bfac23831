"""CI gates, JUnit, ``--json``, exit codes 0/1/2, bad input lines, and ``eval score`` on TREC files."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.gates import GateError, check_gates, parse_gate
from drivebench.evaluator.report.sample import sample_inputs
from drivebench.evaluator.scoring import score
from drivebench.evaluator.trec import export_trec, read_qrels, read_trec_run
from drivebench.formats.evalset import write_jsonl


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    queries, run, _ = sample_inputs(seed=3, n_queries=24)
    d = tmp_path_factory.mktemp("score")
    return write_jsonl(d / "evalset.jsonl", queries), write_jsonl(d / "run.jsonl", run)


def test_gate_parsing_and_evaluation() -> None:
    result = {
        "errors": {"rate": 0.25, "failed": 1},
        "metrics": {"hit_rate@10": 0.75, "leak_rate@10": None},
        "metrics_answered": {"hit_rate@10": 1.0},
        "oracles": {"leak": {"measured": False}},
    }
    gates = [
        parse_gate(x) for x in ("hit_rate@10<0.80", "answered.hit_rate@10<0.8", "error_rate>0", "leak_rate@10 > 0")
    ]
    out = check_gates(result, gates)
    assert [g.failed for g in out] == [True, False, True, True]
    assert out[3].message == "FAILED: leak_rate@10 was not measured, so the gate leak_rate@10 > 0 cannot pass"
    with pytest.raises(GateError, match="use NAME OP NUMBER"):
        parse_gate("hit_rate@10 is low")
    with pytest.raises(GateError, match="no metric 'hit@10'"):
        check_gates(result, [parse_gate("hit@10<1")])


def test_score_gates_junit_and_json(files: tuple[Path, Path], tmp_path: Path) -> None:
    evalset, run = files
    junit = tmp_path / "j.xml"
    args = ["eval", "score", "--evalset", str(evalset), "--run", str(run), "--allow-no-oracle"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 3 and "run FAILED (exit 3): 2 of 24 queries failed" in done.output  # the sample's errors
    args += ["--max-error-rate", "0.5"]
    done = CliRunner().invoke(app, [*args, "--fail-on", "hit_rate@10<1.01", "--junit", str(junit), "--json", "-"])
    assert done.exit_code == 1, done.output
    payload = json.loads(done.stdout[done.stdout.index("{") :])
    assert payload["format"] == "drivebench-metrics/1" and list(payload)[:3] == ["verdict", "status", "errors"]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["hit_rate@10<1.01"].find("failure") is not None
    done = CliRunner().invoke(app, [*args, "--fail-on", "hit_rate@10<0"])
    assert done.exit_code == 1 and "leaked (no leaks allowed; --allow-leaks to accept) (no leaks)" in done.output, (
        done.output
    )  # the sample leaks: red
    done = CliRunner().invoke(app, [*args, "--fail-on", "hit_rate@10<0", "--allow-leaks"])
    assert done.exit_code == 0 and "no leaks" not in done.output, done.output
    done = CliRunner().invoke(app, [*args, "--fail-on", "nonsense"])
    assert done.exit_code == 2 and "use NAME OP NUMBER" in done.output


@pytest.mark.parametrize("which", ["evalset", "run"])
def test_bad_lines_give_one_line_with_file_and_line(files: tuple[Path, Path], tmp_path: Path, which: str) -> None:
    evalset, run = files
    bad = tmp_path / f"bad-{which}.jsonl"
    good = (evalset if which == "evalset" else run).read_text().splitlines()
    bad.write_text("\n".join([good[0], good[1], '{"query_id": "x", "query": ', good[2]]) + "\n")
    paths = {"evalset": str(evalset), "run": str(run), which: str(bad)}
    done = CliRunner().invoke(app, ["eval", "score", "--evalset", paths["evalset"], "--run", paths["run"]])
    assert done.exit_code == 2
    assert f"error: {bad}:3: not JSON" in done.output and "Traceback" not in done.output
    bad.write_text(json.dumps({"query_id": "x"}) + "\n")
    done = CliRunner().invoke(app, ["eval", "score", "--evalset", paths["evalset"], "--run", paths["run"]])
    if which == "evalset":
        assert done.exit_code == 2 and f"{bad}:1: " in done.output and "query" in done.output


def test_bad_evalset_on_eval_run_exits_2_before_any_request(tmp_path: Path) -> None:
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"query_id": "q1", "query": "x"}\n')  # no principal
    done = CliRunner().invoke(
        app, ["eval", "run", "--target", "http://127.0.0.1:9", "--token", "t", "--evalset", str(bad)]
    )
    assert done.exit_code == 2 and f"{bad}:1:" in done.output and "give user_id or user_role" in done.output


def test_score_reads_trec_run_and_qrels_like_jsonl(files: tuple[Path, Path], tmp_path: Path) -> None:
    from drivebench.formats.evalset import load_evalset, load_run

    evalset, run = files
    queries, records = load_evalset(evalset), load_run(run)
    run_trec, qrels = export_trec(queries, records, tmp_path / "trec")
    want = score(queries, records, (1, 3, 10), bootstrap=False)
    got = score(read_qrels(qrels), read_trec_run(run_trec), (1, 3, 10), bootstrap=False)
    gold_queries = [q for q in queries if q.gold]
    assert want["counts"]["no_gold"] < len(queries) and len(read_qrels(qrels)) == len(gold_queries)
    for name in ("hit_rate@1", "hit_rate@3", "recall@10", "mrr@10", "ndcg@10"):
        assert got["metrics_answered"][name] == pytest.approx(want["metrics_answered"][name]), name
    out = tmp_path / "m.json"
    done = CliRunner().invoke(
        app,
        ["eval", "score", "--qrels", str(qrels), "--run", str(run_trec), "--json", str(out), "--allow-no-oracle",
         "--max-error-rate", "0.5"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output  # errored queries of the sample have no TREC lines: missing
    m = json.loads(out.read_text())
    assert m["metrics_answered"]["hit_rate@3"] == pytest.approx(want["metrics_answered"]["hit_rate@3"])
    assert m["oracles"]["leak"]["measured"] is False
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 1.0 tag\nq1 Q0 d2 two 0.5 tag\n")
    done = CliRunner().invoke(app, ["eval", "score", "--qrels", str(qrels), "--run", str(bad)])
    assert done.exit_code == 2 and f"{bad}:2: rank must be an integer" in done.output
