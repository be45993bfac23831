"""Answer outcomes (``metrics.answer_outcome``): the matcher against 210 hand-labelled answers, the edge cases,
the ``answer_outcomes`` block of metrics.json and its report tables."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from drivebench.corpora.builtin import resolve_corpus
from drivebench.evaluator.metrics.answer_outcome import answer_outcomes, classify
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.terminal import answer_outcomes_table
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, GoldDoc, RunRecord, load_evalset
from drivebench.formats.facts import CorpusFact, FactOwner, load_facts

LABELLED = Path(__file__).parent.parent / "data" / "answer_outcomes"


def _agreement() -> tuple[Counter[str], Counter[str], Counter[str], list[str]]:
    labels: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    wrong: list[str] = []
    for lang in ("zh", "en"):
        corpus = resolve_corpus(f"acme-{lang}@3")
        queries = {q.query_id: q for q in load_evalset(corpus / "evalset.jsonl")}
        facts = load_facts(corpus)
        for line in (LABELLED / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            q = queries[row["query_id"]]
            assert (q.user_id, q.query) == (row["asker"], row["question"])  # labelled against this very question
            got = classify(q, RunRecord(query_id=q.query_id, answer=row["answer"]), facts).outcome
            labels[row["label"]] += 1
            predicted[got or "none"] += 1
            agreed[row["label"]] += got == row["label"]
            if got != row["label"]:
                wrong.append(f"{lang} {q.query_id} {row['label']} -> {got}: {row['answer']}")
    return labels, predicted, agreed, wrong


def test_the_matcher_agrees_with_hand_labels_in_every_class() -> None:
    """Per class, precision (agreed / predicted as the class) and recall (agreed / labelled as the class) are
    both >= 0.90 over answers written and labelled by hand from reading acme@3 (both languages)."""
    labels, predicted, agreed, wrong = _agreement()
    assert sum(labels.values()) >= 200
    for cls in ("correct", "missing", "abstained", "wrong_value", "superseded", "leak"):
        assert labels[cls] >= 25, cls
        recall, precision = agreed[cls] / labels[cls], agreed[cls] / max(predicted[cls], 1)
        assert recall >= 0.90 and precision >= 0.90, (cls, recall, precision, wrong)


def _q(**kw: object) -> EvalQuery:
    base: dict[str, object] = {"query_id": "q1", "query": "PO-1 总价多少？", "user_id": "u1", "anchors": ["PO-1"]}
    return EvalQuery.model_validate(base | kw)


def _fact(fid: str, text: str, entity: str, versions: list[str], *, current: bool = True) -> CorpusFact:
    return CorpusFact(
        fact_id=fid,
        text=text,
        entity=entity,
        attribute="contract.total",
        owners=[FactOwner(doc_id=versions[0].split("-v")[0], version_ids=versions)],
        current=current,
    )


FACTS = [
    _fact("f1", "120,000", "PO-1", ["d1-v1"], current=False),
    _fact("f2", "130,000", "PO-1", ["d1-v2"]),
    _fact("f3", "90,000", "PO-2", ["d2-v1"]),
]
ANSWERABLE = _q(gold=[GoldDoc(doc_id="d1")], answer_facts=["130,000"])
PERMISSION = _q(forbidden=["d1"])


@pytest.mark.parametrize(
    ("query", "answer", "outcome"),
    [
        (ANSWERABLE, "总价13万元", "correct"),
        (ANSWERABLE, "原来12万，现在13万元", "correct"),
        (ANSWERABLE, "总价12万元", "superseded"),
        (ANSWERABLE, "总价9万元", "wrong_value"),
        (ANSWERABLE, "总价125,000元", "wrong_value"),  # no fact, but an amount where an amount is asked
        (ANSWERABLE, "合同在采购部", "missing"),
        (ANSWERABLE, "没有找到相关信息", "abstained"),
        (ANSWERABLE, "   ", "abstained"),
        (PERMISSION, "无权查看", "abstained"),
        (PERMISSION, "无权查看，不过是130,000", "leak"),
        (PERMISSION, "总价9万元", "wrong_value"),
    ],
)
def test_outcomes(query: EvalQuery, answer: str, outcome: str) -> None:
    assert classify(query, RunRecord(query_id="q1", answer=answer), FACTS).outcome == outcome


def test_a_failed_query_is_an_error_never_an_abstention() -> None:
    """A failure must not look like the right answer to a permission question."""
    failed = RunRecord(query_id="q1", error="timeout", error_kind="timeout")
    assert classify(PERMISSION, failed, FACTS).outcome == "error"
    assert classify(ANSWERABLE, None, FACTS, status="missing").outcome == "error"


def test_some_of_several_facts_is_partial_and_permission_without_facts_is_not_judged() -> None:
    two = _q(gold=[GoldDoc(doc_id="d1")], answer_facts=["130,000", "2026年3月5日"])
    assert classify(two, RunRecord(query_id="q1", answer="13万, March 5, 2026"), None).outcome == "correct"
    assert classify(two, RunRecord(query_id="q1", answer="13万"), None).outcome == "partial"
    judged = classify(PERMISSION, RunRecord(query_id="q1", answer="130,000"), None)
    assert judged.outcome is None  # without facts a leak could not be told: not "missing"


def test_rates_with_cis_by_stratum_and_not_measured() -> None:
    queries = [ANSWERABLE.model_copy(update={"query_id": f"a{i}"}) for i in range(4)]
    queries.append(PERMISSION.model_copy(update={"query_id": "p"}))
    answers = ["13万", "12万", "不知道", "13万", "130,000"]
    records = [RunRecord(query_id=q.query_id, answer=a) for q, a in zip(queries, answers, strict=True)]
    block = answer_outcomes(queries, records, FACTS, strata={"kind": ["single"] * 4 + ["permission"]}, resamples=200)
    assert [r["outcome"] for r in block["per_query"]] == ["correct", "superseded", "abstained", "correct", "leak"]
    assert block["outcomes"]["correct"]["count"] == 2 and block["outcomes"]["correct"]["rate"] == pytest.approx(0.4)
    lo, hi = block["outcomes"]["correct"]["ci"]
    assert 0.0 <= lo <= 0.4 <= hi <= 1.0
    assert block["outcomes"]["right"]["count"] == 2
    assert block["strata"]["kind"]["permission"]["outcomes"]["leak"]["rate"] == 1.0
    assert block["strata"]["kind"]["single"]["n"] == 4
    no_answers = [RunRecord(query_id=q.query_id) for q in queries]
    assert answer_outcomes(queries, no_answers, FACTS)["measured"] is False
    assert answer_outcomes([PERMISSION], records[-1:], FACTS) == {
        "measured": False,
        "reason": "the eval set lists no answer_facts",
    }


def test_metrics_json_and_reports_carry_the_answer_outcomes() -> None:
    queries = [ANSWERABLE, PERMISSION.model_copy(update={"query_id": "q2"})]
    run = [
        RunRecord(query_id="q1", answer="总价9万元"),
        RunRecord(query_id="q2", answer="是130,000"),
    ]
    result = score(queries, run, oracle="evalset", facts=FACTS, resamples=100)
    block = result["answer_outcomes"]
    assert [r["outcome"] for r in block["per_query"]] == ["wrong_value", "leak"]
    assert block["strata"]["kind"]["unknown"]["n"] == 2
    md = render_markdown(result)
    assert "## Answer outcomes" in md
    assert "| leak | 1 | 50.0% |" in md and "| wrong_value | 1 | 50.0% |" in md
    console = Console(record=True, width=120)
    console.print(answer_outcomes_table(result))
    text = console.export_text()
    assert "Answer outcomes" in text and "wrong_value" in text and "50.0%" in text

    unanswered = score(queries, [RunRecord(query_id="q1"), RunRecord(query_id="q2")], facts=FACTS, bootstrap=False)
    assert unanswered["answer_outcomes"] == {"measured": False, "reason": "no query has an answer"}
    assert "_Not measured: no query has an answer._" in render_markdown(unanswered)
    console = Console(record=True, width=120)
    console.print(answer_outcomes_table(unanswered))
    assert "not measured: no query has an answer" in " ".join(console.export_text().split())
