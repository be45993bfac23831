"""Selectivity: the ``visible_share`` stratum (the asker's share of the corpus) and under_fill_rate (short lists
although the asker may preview more matching documents), on the seed simulator in process: the post-filter fault
under-fills the askers who see little and leaks nothing, the clean simulator never under-fills."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drivebench.api import make_target
from drivebench.evaluator.evaluate import Evaluation, evaluate, write_outputs
from drivebench.evaluator.gates import check_gates, parse_gate
from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.metrics.under_fill import section, under_filled
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.report._common import under_fill_sentence
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.report.terminal import print_summary
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.scoring import score
from drivebench.evaluator.strata import share_bucket
from drivebench.formats.evalset import load_evalset
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet
from tests.support.evalrecords import make_query, make_record

TOP_K = 3  # the seed corpus has 29 documents: at 10 hardly an asker has 10 matching documents to see


def test_a_list_is_under_filled_only_when_shorter_than_the_matching_documents_the_asker_may_see() -> None:
    assert under_filled(1, 10, 10) and under_filled(1, 10, 50)  # short although top_k matching are permitted
    assert under_filled(1, 10, 5)  # an asker who may see 5 matching documents and got 1
    assert not under_filled(5, 10, 5) and not under_filled(0, 10, 0)  # ran out of documents: no under-fill
    assert not under_filled(10, 10, 50)  # a full list
    measured = section([True, False, None, False], 10, None, longest_list=10)
    assert (measured["queries_judged"], measured["queries_under_filled"], measured["under_fill_rate"]) == (3, 1, 1 / 3)
    assert measured["upper_bound_95"] == upper_bound(1, 3)  # the rate's bound, as the leak figures carry theirs
    assert section([False] * 55, 10, None, longest_list=10)["upper_bound_95"] == upper_bound(0, 55)
    assert "note" not in measured
    assert "never returned more than 4" in section([True], 10, None, longest_list=4)["note"]
    assert section([], None, "why")["measured"] is False
    assert [share_bucket(s) for s in (None, 0.0, 0.099, 0.1, 0.249, 0.25, 0.5, 1.0)] == [
        "unknown",
        "<10 %",
        "<10 %",
        "10-25 %",
        "10-25 %",
        "25-50 %",
        ">=50 %",
        ">=50 %",
    ]


def test_without_a_corpus_oracle_it_is_not_measured_and_the_share_unknown() -> None:
    queries = [make_query("q1", ["d1"], forbidden=["d9"]), make_query("q2", ["d2"], forbidden=["d9"])]
    result = score(queries, [make_record("q1", ["d5"]), make_record("q2", ["d2"])], oracle="evalset", top_k=10)
    assert result["under_fill"]["measured"] is False and "--corpus" in result["under_fill"]["reason"]
    assert result["metrics"]["under_fill_rate"] is None  # never a 0 for a figure not measured
    assert "queries_under_filled" not in result["counts"]
    assert list(result["strata"]["visible_share"]) == ["unknown"]
    gate = check_gates(result, [parse_gate("queries_under_filled>0")])[0]
    assert gate.failed and "not measured" in gate.message


def _run(sim: Simulator) -> Evaluation:
    assert sim.corpus_dir is not None
    queries = load_evalset(sim.corpus_dir / "evalset.jsonl")
    steps: list[tuple[int, int]] = []
    return evaluate(
        make_target(sim),
        queries,
        ks=(1, TOP_K),
        run_config=RunConfig(top_k=TOP_K),
        oracle=corpus_oracle(sim.corpus_dir),
        scoring_progress=lambda done, n: steps.append((done, n)),  # the oracle is wrapped: still measured
    )


def _rates(result: dict[str, Any]) -> dict[str, float | None]:
    return {value: group["under_fill_rate"] for value, group in result["strata"]["visible_share"].items()}


def test_post_filter_under_fills_the_askers_who_see_little_and_the_clean_simulator_never(
    sim: Simulator, drivebench_faults: FaultSet, tmp_path: Path
) -> None:
    clean = _run(sim).result
    assert clean["under_fill"]["measured"] is True and clean["under_fill"]["queries_judged"] == 55
    assert clean["metrics"]["under_fill_rate"] == 0.0 and clean["counts"]["queries_under_filled"] == 0
    assert set(clean["strata"]["visible_share"]) == {"<10 %", "10-25 %", "25-50 %", ">=50 %"}
    assert clean["counts"]["queries_with_leak"] == 0
    clean_line = under_fill_sentence(clean)  # 5.30 % rounded up: a bound never printed lower than it is
    assert clean_line is not None and "0 of 55 answered queries (0.000, <= 5.4 % (95 %))" in clean_line, clean_line

    drivebench_faults.enable("post-filter", fetch_k=5)  # unfiltered top 5, then the filter
    faulted = _run(sim)
    result = faulted.result
    assert result["counts"]["queries_with_leak"] == 0  # a post-filter starves, it never leaks
    assert result["metrics"]["under_fill_rate"] > 0 and result["counts"]["queries_under_filled"] > 0
    rates = _rates(result)
    assert rates["10-25 %"] > rates[">=50 %"] and rates["25-50 %"] > rates[">=50 %"], rates
    gates = check_gates(result, [parse_gate("under_fill_rate>0"), parse_gate("queries_under_filled>0")])
    assert [g.failed for g in gates] == [True, True]

    md, html = write_reports(result, write_outputs(faulted, tmp_path / "run"))
    text = md.read_text(encoding="utf-8")
    assert "## Under-fill" in text and f"{result['counts']['queries_under_filled']} of 55 answered" in text
    assert "| <10 % |" in text and "`visible_share`" in text  # the stratum's own table too
    page = html.read_text(encoding="utf-8")
    assert 'id="table-under-fill"' in page and "&lt;10 %" in page and 'id="table-strata-visible_share"' in page
    from rich.console import Console

    console = Console(record=True, width=400)
    print_summary(result, console)
    assert "by the asker's visible share: <10 %" in console.export_text()
