"""JUnit: a missed query is not a failing test case by default (a passing job must not show red tests); gates,
leaks and failed queries are. ``--junit-misses`` keeps misses as failing cases."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.gates import apply_verdict, parse_gate, stored_gates, write_junit
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import write_jsonl
from tests.support.evalrecords import make_query, make_record

QUERIES = [
    make_query("hit", ["d1"], forbidden=["d9"]),
    make_query("miss", ["d2"], forbidden=["d9"]),
    make_query("leak", ["d3"], forbidden=["d9"]),
]
RECORDS = [make_record("hit", ["d1"]), make_record("miss", ["d5"]), make_record("leak", ["d3", "d9"])]


def cases(path: Path) -> dict[str, ET.Element]:
    return {str(c.get("name")): c for c in ET.parse(path).getroot().iter("testcase")}


def test_misses_are_not_failing_cases_unless_asked(tmp_path: Path) -> None:
    result = score(QUERIES, RECORDS, [1, 10], oracle="evalset", bootstrap=False)
    apply_verdict(result, [parse_gate("hit_rate@10<0.5")])
    got = cases(write_junit(tmp_path / "j.xml", result, stored_gates(result)))
    assert set(got) == {"no leaks", "hit_rate@10<0.5", "leak"}
    assert got["leak"].find("failure") is not None and got["no leaks"].find("failure") is not None
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite[@name='drivebench.queries']")
    assert suite is not None and suite.get("failures") == "1"
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["missed_queries"] == "1"
    with_misses = cases(write_junit(tmp_path / "m.xml", result, stored_gates(result), misses=True))
    assert "no gold document in the top 10" in str(with_misses["miss"].find("failure").get("message"))  # type: ignore[union-attr]


def test_eval_score_junit_misses_flag(tmp_path: Path) -> None:
    evalset = write_jsonl(tmp_path / "evalset.jsonl", QUERIES[:2])
    run = write_jsonl(tmp_path / "run.jsonl", RECORDS[:2])
    args = ["eval", "score", "--evalset", str(evalset), "--run", str(run), "--junit", str(tmp_path / "j.xml")]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output  # no leak, no gate: the job passes, and JUnit shows no red test
    assert all(c.find("failure") is None for c in cases(tmp_path / "j.xml").values())
    done = CliRunner().invoke(app, [*args, "--junit-misses"])
    assert done.exit_code == 0, done.output
    assert cases(tmp_path / "j.xml")["miss"].find("failure") is not None
