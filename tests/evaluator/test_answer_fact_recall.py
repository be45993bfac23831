"""Answer-fact recall and claim support: hand-made answers scored as specified, "not measured" when they cannot be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.citations import cited_statements
from drivebench.evaluator.fact_text import normalise, stated
from drivebench.evaluator.metrics.answer_fact_recall import answer_fact_recall, claim_support, fact_counts
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, RunRecord


def _catalog() -> Catalog:
    cat = Catalog()
    cat.add(CatalogDoc(doc_id="d1", name="报价单.pdf", path="/sales/报价单.pdf"))
    cat.add(CatalogDoc(doc_id="d2", name="合同.docx", path="/legal/合同.docx"))
    return cat


def _judge(facts: list[str], answer: str) -> tuple[float | None, float | None]:
    statements = cited_statements(answer, _catalog())
    return answer_fact_recall(facts, statements), claim_support(facts, statements)


@pytest.mark.parametrize(
    ("fact", "answer"),
    [
        ("120万元", "合同金额为120万元。[报价单.pdf]"),  # right, same form
        ("120万元", "合同金额为 1,200,000元。[报价单.pdf]"),  # thousands separators
        ("1,200,000元", "总价 ¥120万 [[d1]]"),  # 万 and the yuan sign
        ("120万元", "The total is RMB 1,200,000. [报价单.pdf]"),
        ("１２０万元", "合同金额为120万元。[报价单.pdf]"),  # full-width digits in the fact
        ("120万元", "合同金额为１，２００，０００元。[报价单.pdf]"),  # full-width in the answer
        ("2026-03-05", "截止日期为2026年3月5日。[报价单.pdf]"),
        ("2026年3月5日", "Due 2026-03-05 [报价单.pdf]"),
        ("2026-03-05", "截止日期为3月5日。[报价单.pdf]"),  # without the year
        ("2026-03-05", "It is due March 5, 2026. [报价单.pdf]"),
        ("2026-03-05", "It is due 05/03. [报价单.pdf]"),  # day first
        ("15%", "折扣为百分之15。[报价单.pdf]"),
        ("15%", "a 15 percent discount [报价单.pdf]"),
        ("王芳", "审批人：王 芳 [合同.docx]"),  # names: whitespace
        ("SPCC 冷轧钢板", "材料为ＳＰＣＣ冷轧钢板。[合同.docx]"),  # width and case
    ],
)
def test_the_right_fact_in_any_form_scores_1(fact: str, answer: str) -> None:
    assert _judge([fact], answer) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("fact", "answer"),
    [
        ("120万元", "合同金额为130万元。[报价单.pdf]"),  # a wrong number
        ("120万元", "合同金额为1,300,000元。[报价单.pdf]"),
        ("120", "编号1200 [报价单.pdf]"),  # a number is not a prefix of another
        ("2026-03-05", "截止日期为2027年3月5日。[报价单.pdf]"),  # the wrong year
        ("2026-03-05", "截止日期为3月6日。[报价单.pdf]"),
        ("TP-2026-004", "编号 TP-2026-04 [报价单.pdf]"),  # codes are compared as written
        ("王芳", "审批人：李强 [合同.docx]"),
    ],
)
def test_a_wrong_fact_scores_0(fact: str, answer: str) -> None:
    recall, support = _judge([fact], answer)
    assert recall == 0.0
    assert support is None  # nothing stated: support of no claim is not measured, never 0


def test_the_right_fact_uncited_is_recalled_but_unsupported() -> None:
    assert _judge(["120万元"], "合同金额为120万元。") == (1.0, 0.0)
    # stated after the cited statement, in text no marker covers
    assert _judge(["王芳"], "金额120万元 [报价单.pdf] 审批人是王芳。") == (1.0, 0.0)
    # a marker naming no known document supports nothing
    assert _judge(["王芳"], "审批人是王芳 [不存在.pdf]") == (1.0, 0.0)


def test_partial_answers_and_footnotes() -> None:
    facts = ["120万元", "王芳", "2026-03-05"]
    answer = "金额120万元[^1]。审批人王芳。\n\n[^1]: /sales/报价单.pdf"
    statements = cited_statements(answer, _catalog())
    assert fact_counts(facts, statements) == (3, 2, 1)
    assert answer_fact_recall(facts, statements) == pytest.approx(2 / 3)
    assert claim_support(facts, statements) == 0.5


def test_normalisation_keeps_codes_and_separates_numbers() -> None:
    assert normalise("１２０万元") == normalise("1,200,000 元") == "⟦n1200000⟧"
    assert normalise("TP-2026-004") == "tp-2026-004"
    assert not stated("120", normalise("1200"))
    assert stated("3.50", normalise("3.5 米"))


def _q(qid: str, facts: list[str]) -> EvalQuery:
    return EvalQuery(query_id=qid, query="q", user_id="u1", gold=[{"doc_id": "d1"}], answer_facts=facts)


def _rec(qid: str, answer: str | None) -> RunRecord:
    return RunRecord(query_id=qid, results=[{"doc_id": "d1"}], answer=answer, latency_ms=1.0)


def test_score_reports_both_metrics_per_query_and_overall() -> None:
    queries = [_q("a", ["120万元"]), _q("b", ["2026-03-05"]), _q("c", ["王芳"]), _q("d", [])]
    run = [
        _rec("a", "合同金额为1,200,000元。[报价单.pdf]"),  # right, cited
        _rec("b", "截止日期为2026年4月5日。[报价单.pdf]"),  # wrong date
        _rec("c", "审批人王芳。"),  # right, uncited
        _rec("d", "whatever"),  # no facts: excluded
    ]
    result = score(queries, run, catalog=_catalog(), bootstrap=False)
    rows = {r["query_id"]: r for r in result["per_query"]}
    assert [rows[q]["answer_fact_recall"] for q in "abcd"] == [1.0, 0.0, 1.0, None]
    assert [rows[q]["claim_support"] for q in "abcd"] == [1.0, None, 0.0, None]
    assert result["metrics"]["answer_fact_recall"] == pytest.approx(2 / 3)
    assert result["metrics"]["claim_support"] == 0.5
    assert result["oracles"]["answer_facts"]["measured"] is True
    assert result["counts"]["with_answer_facts"] == 3
    assert {"answer_fact_recall", "claim_support"} <= set(result["config"]["per_query_metrics"])
    assert "Answer-fact recall" in render_markdown(result)
    # an errored query states nothing: recall 0, still counted
    run[0] = RunRecord(query_id="a", error="HTTP 500: boom")
    assert score(queries, run, catalog=_catalog(), bootstrap=False)["metrics"]["answer_fact_recall"] == pytest.approx(
        1 / 3
    )


def test_stable_across_reruns() -> None:
    queries = [_q("a", ["120万元", "王芳"]), _q("b", ["2026-03-05"])]
    run = [_rec("a", "金额120万元 [报价单.pdf]\n王芳"), _rec("b", "3月5日 [[d2]]")]
    first = json.dumps(score(queries, run, catalog=_catalog()), sort_keys=True)
    assert first == json.dumps(score(queries, run, catalog=_catalog()), sort_keys=True)


@pytest.mark.parametrize(
    ("facts", "answer", "reason"),
    [([], "合同金额为120万元。[报价单.pdf]", "no answer_facts"), (["120万元"], None, "no answers")],
)
def test_not_measured_without_facts_or_answers(
    tmp_path: Path, facts: list[str], answer: str | None, reason: str
) -> None:
    from rich.console import Console

    from drivebench.evaluator.report.html import render_html
    from drivebench.evaluator.report.terminal import print_summary

    result = score([_q("a", facts)], [_rec("a", answer)], catalog=_catalog())
    assert result["metrics"]["answer_fact_recall"] is None and result["metrics"]["claim_support"] is None
    assert "answer_fact_recall" not in result["ci"]
    entry = result["oracles"]["answer_facts"]
    assert entry["measured"] is False and reason in entry["reason"]
    assert json.loads(json.dumps(result))["metrics"]["answer_fact_recall"] is None  # null in metrics.json, never 0
    md = render_markdown(result)
    assert "Answer facts: not measured" in md
    assert "| answer_fact_recall | Answer-fact recall | not measured |" in md
    assert "Answer facts: not measured" in render_html(result)
    console = Console(record=True, width=200)
    print_summary(result, console)
    if answer is not None:  # a run with answers says why the facts were not judged
        assert "Answer facts: not measured" in console.export_text()
