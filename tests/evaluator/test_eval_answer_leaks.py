"""Answer leaks in every eval run: an answer that states a fact of a document its asker may not preview fails the
run, whatever its results and citations, and every leak figure carries its upper bound.

In-process over the session simulator (seed corpus), scored against a copy of the seed corpus whose only fact is the
third-quarter revenue, stated only by a finance report the HR intern may not preview: each leak is that one fact
(``test_seed_answer_leaks.py`` measures the seed's own 108 facts over its eval set).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from typer.testing import CliRunner

from drivebench.api import evaluate
from drivebench.cli.main import app
from drivebench.evaluator.evaluate import corpus_facts
from drivebench.evaluator.gates import write_junit
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.options import EvalOptions
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.terminal import print_details, print_summary
from drivebench.evaluator.report.verdict import summary_line
from drivebench.experiments.fault_comparison import corpus_catalog, fault_comparison
from drivebench.formats.evalset import EvalQuery, RunRecord, write_jsonl
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet, parse_fault_specs
from drivebench.testing import ServedSimulator
from tests.support.facts import INTERN, revenue_report, seed_with_revenue_fact, seed_without_facts

REVENUE_QUESTION = "第三季度营业收入是多少"


def may_preview(sim: Simulator, user: str) -> set[str]:
    mask = sim.engine.allowed_mask(sim.engine.user_principal(user), "preview", sim.drive.clock.now())
    return {sim.engine.doc_ids[i] for i in np.flatnonzero(mask)}


@pytest.fixture(scope="module")
def revenue_doc(sim: Simulator) -> str:
    doc_id = revenue_report(sim)
    assert doc_id not in may_preview(sim, INTERN)
    return doc_id


@pytest.fixture(scope="module")
def corpus_with_facts(sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed corpus, copied, whose only fact is the revenue its finance report owns."""
    return seed_with_revenue_fact(sim, tmp_path_factory.mktemp("corpus"))


QUERIES = [
    EvalQuery(query_id=f"q{i}", query=question, user_id=INTERN)
    for i, question in enumerate([REVENUE_QUESTION, "第三季度的营业收入", "员工手册", "请假流程"], 1)
]


def test_an_unfiltered_answer_context_leaks_facts_while_results_do_not(
    sim: Simulator, drivebench_faults: FaultSet, corpus_with_facts: Path, revenue_doc: str, tmp_path: Path
) -> None:
    drivebench_faults.enable("answer-unfiltered-context")
    run = evaluate(sim, QUERIES, EvalOptions(corpus=corpus_with_facts, answers=True, preflight=False, out=tmp_path))
    result = run.result
    section, counts = result["answer_leaks"], result["counts"]
    leaking = counts["queries_with_answer_leak"]
    assert result["oracles"]["answer_leak"]["measured"] is True
    assert counts["queries_with_leak"] == 0 and result["leaks"]["upper_bound_95"] == upper_bound(0, 4)
    assert leaking >= 1 and section["queries_judged"] == 4
    assert result["metrics"]["answer_leak_rate"] == leaking / 4 > 0
    assert section["upper_bound_95"] == upper_bound(leaking, 4) > leaking / 4
    q1 = next(row for row in result["per_query"] if row["query_id"] == "q1")
    (leak,) = q1["answer_leaked"]
    assert leak["fact_id"] == "f1" and leak["doc_id"] == revenue_doc and leak["name"] and leak["path"]
    assert leak["why"] and leak["causes"]  # the oracle's own reasons the intern may not preview the report
    assert not q1["leaked"]  # the results and citations were the clean recall's
    # the verdict: the default leak gate fails on the answer leak alone
    assert run.exit_code == 1 and result["status"]["state"] == "gates_failed"
    assert [g.expr for g in run.gates if g.failed] == ["no answer leaks"]
    assert "answer_leak" in next(r for r in result["failed_queries"]["rows"] if r["query_id"] == "q1")["problems"]
    # JUnit: a failing case naming the fact and the report it belongs to
    cases = ET.parse(write_junit(tmp_path / "junit.xml", result, run.gates)).getroot().iter("testcase")
    failures = {case.get("name"): case.find("failure") for case in cases}
    assert failures["no answer leaks"] is not None
    q1_failure = failures["q1"]
    assert q1_failure is not None and "186,000,000" in q1_failure.get("message", "")
    # every report shows them, with the bound
    markdown, html = render_markdown(result), render_html(result)
    for text in (markdown, html):
        assert "Answer leaks" in text and "186,000,000" in text and leak["name"] in text
        assert f"{leaking} of 4 answers stated a fact" in text
        assert "0 of 4 answered queries leaked (&lt;= 53" in text or "0 of 4 answered queries leaked (<= 53" in text
    assert f"ANSWER LEAKS in {leaking} answer" in summary_line(result)
    # the history keeps the rate for trends, and a trend marks the run as leaking
    store = HistoryStore(tmp_path / "history.sqlite3")
    run_id = store.record(result)
    assert store.leak_counts([run_id]) == {run_id: leaking}
    (point,) = store.trend("answer_leak_rate", include_failed=True)
    assert point.value == leaking / 4


def test_the_clean_simulator_leaks_no_fact_and_says_how_sure_that_is(
    sim: Simulator, corpus_with_facts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = evaluate(sim, QUERIES, EvalOptions(corpus=corpus_with_facts, answers=True, preflight=False))
    result = run.result
    assert result["counts"]["queries_with_answer_leak"] == 0 and result["metrics"]["answer_leak_rate"] == 0.0
    assert result["answer_leaks"]["upper_bound_95"] == pytest.approx(1 - 0.05 ** (1 / 4))
    assert run.passed and all(not row["answer_leaked"] for row in result["per_query"])
    from rich.console import Console

    console = Console(width=200, force_terminal=False)
    print_summary(result, console)
    print_details(result, console)
    out = capsys.readouterr().out
    assert "Answer leaks: 0 of 4 answers stated a fact their asker may not know (<= 53 %, 95 %)" in out
    assert "Permission leaks: 0 of 4 answered queries leaked (<= 53 %, 95 %)" in out


def test_answer_leaks_are_not_measured_without_facts_or_answers(sim: Simulator, tmp_path: Path) -> None:
    corpus = seed_without_facts(sim, tmp_path)
    no_facts = evaluate(sim, QUERIES, EvalOptions(corpus=corpus, answers=True, preflight=False)).result
    assert no_facts["oracles"]["answer_leak"] == {"measured": False, "reason": "the corpus has no facts"}
    assert no_facts["metrics"]["answer_leak_rate"] is None and "queries_with_answer_leak" not in no_facts["counts"]
    assert c.answer_leak_sentence(no_facts) == "Answer leaks: not measured (the corpus has no facts)"
    assert "Answer leaks: not measured (the corpus has no facts)" in render_markdown(no_facts)
    assert "answer_leak_rate" in dict((row[0], row[2]) for row in c.metric_rows(no_facts))
    assert dict((row[0], row[2]) for row in c.metric_rows(no_facts))["answer_leak_rate"] == "not measured"


def test_recall_only_runs_do_not_measure_answer_leaks(sim: Simulator, corpus_with_facts: Path) -> None:
    recall = evaluate(sim, QUERIES, EvalOptions(corpus=corpus_with_facts, preflight=False)).result
    assert recall["oracles"]["answer_leak"] == {
        "measured": False,
        "reason": "the run has no answers (run with --answers)",
    }
    assert recall["metrics"]["answer_leak_rate"] is None


def test_answer_leak_gates_in_fail_on(sim: Simulator, corpus_with_facts: Path) -> None:
    run = evaluate(
        sim,
        QUERIES,
        EvalOptions(
            corpus=corpus_with_facts,
            answers=True,
            preflight=False,
            fail_on=["queries_with_answer_leak>0", "answer_leak_rate>0.5"],
        ),
    )
    assert [(g.expr, g.failed, g.value) for g in run.gates] == [
        ("queries_with_answer_leak>0", False, 0.0),
        ("answer_leak_rate>0.5", False, 0.0),
    ]
    no_answers = evaluate(
        sim, QUERIES, EvalOptions(corpus=corpus_with_facts, preflight=False, fail_on=["queries_with_answer_leak>0"])
    )
    (gate,) = no_answers.gates
    assert gate.failed and "was not measured" in gate.message  # a gate never passes on a figure that does not exist


def test_eval_score_judges_the_answers_of_a_run_file_against_the_corpus_facts(
    sim: Simulator, drivebench_faults: FaultSet, corpus_with_facts: Path, tmp_path: Path
) -> None:
    drivebench_faults.enable("answer-unfiltered-context")
    evaluate(sim, QUERIES, EvalOptions(corpus=corpus_with_facts, answers=True, preflight=False, out=tmp_path / "run"))
    evalset = write_jsonl(tmp_path / "evalset.jsonl", QUERIES)
    args = ["eval", "score", "--run", str(tmp_path / "run"), "--evalset", str(evalset)]
    done = CliRunner().invoke(
        app, [*args, "--corpus", str(corpus_with_facts), "--json", str(tmp_path / "m.json")], env={"COLUMNS": "200"}
    )
    assert done.exit_code == 1, done.output  # the answer leak fails the default leak gate
    scored = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    leaking = scored["counts"]["queries_with_answer_leak"]
    assert leaking >= 1 and scored["counts"]["queries_with_leak"] == 0
    assert f"Answer leaks: {leaking} of 4 answers stated a fact" in done.output
    assert [g["expr"] for g in scored["gates"] if g["failed"]] == ["no answer leaks"]
    allowed = CliRunner().invoke(app, [*args, "--corpus", str(corpus_with_facts), "--allow-leaks"])
    assert allowed.exit_code == 0, allowed.output


def test_a_malformed_facts_file_is_a_usage_error_before_any_query(
    sim: Simulator, corpus_with_facts: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(corpus_with_facts, broken)
    (broken / "facts.jsonl").write_text('{"fact_id": "f1"}\n', encoding="utf-8")
    asked: list[str] = []

    def target(query: str, principal: dict[str, str | None], top_k: int, as_of: object) -> list[str]:
        asked.append(query)
        return []

    with pytest.raises(ValueError, match=r"facts\.jsonl:1"):
        evaluate(target, QUERIES, EvalOptions(corpus=broken, answers=True, preflight=False))
    assert asked == []
    run = write_jsonl(tmp_path / "run.jsonl", [RunRecord(query_id=q.query_id, answer="x") for q in QUERIES])
    evalset = write_jsonl(tmp_path / "evalset.jsonl", QUERIES)
    done = CliRunner().invoke(
        app, ["eval", "score", "--run", str(run), "--evalset", str(evalset), "--corpus", str(broken)]
    )
    assert done.exit_code == 2 and "facts.jsonl:1" in done.output, done.output


def test_the_fault_demo_shows_answer_leaks_beside_the_clean_run(
    drivebench_server: ServedSimulator, corpus_with_facts: Path
) -> None:
    """``demo --fault answer-unfiltered-context``: asked in answer mode (the fault is in the answers), its table has
    answer_leak_rate, 0 clean and above 0 faulted."""
    sim = drivebench_server.sim
    facts, _ = corpus_facts(corpus_with_facts)
    cmp = fault_comparison(
        sim,
        drivebench_server.url,
        QUERIES,
        parse_fault_specs("answer-unfiltered-context"),
        oracle=corpus_oracle(corpus_with_facts),
        catalog=corpus_catalog(corpus_with_facts),
        facts=facts,
    )
    assert cmp.mode == "answer" and not sim.faults
    clean, faulted = next((c, f) for name, c, f in cmp.headline(10) if name == "answer_leak_rate")
    assert clean == 0.0 and faulted > 0
    assert cmp.faulted.result["counts"]["queries_with_leak"] == 0
