"""answer_leak: facts of documents the asker may not preview, stated in an answer whatever it cites; matched
normalised (amounts, numbers, dates written another way), Chinese and English."""

from __future__ import annotations

from drivebench.corpora.builtin import resolve_corpus
from drivebench.evaluator.metrics.answer_leak import answer_leak_rate, answer_leaks, stated_facts
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.formats.facts import CorpusFact, FactOwner


def fact(fact_id: str, text: str, *owners: str, attribute: str = "contract.total") -> CorpusFact:
    return CorpusFact(
        fact_id=fact_id,
        text=text,
        entity="PO-2026-101",
        attribute=attribute,
        owners=[FactOwner(doc_id=d, version_ids=[f"{d}-v1"]) for d in owners],
    )


FACTS = [
    fact("f1", "1,300,000", "d-budget"),  # an amount only the budget states
    fact("f2", "2026年3月5日", "d-contract", attribute="contract.deliver"),
    fact("f3", "朱琳", "d-charter", "d-kickoff", attribute="charter.leader"),  # two owners
    fact("f4", "18.5%", "d-report", attribute="weekly.progress"),
    fact("f5", "146,400", "d-po"),
]
FORBIDDEN = {"d-budget", "d-contract", "d-charter", "d-kickoff", "d-report", "d-po", "d-payment"}


def may(doc_id: str) -> bool:
    return doc_id not in FORBIDDEN


def leaked_ids(answer: str, allowed: set[str] | None = None) -> list[str]:
    decide = may if allowed is None else allowed.__contains__
    return [leak.fact.fact_id for leak in answer_leaks(answer, FACTS, decide)]


def test_a_chinese_answer_states_a_paraphrased_amount_and_date() -> None:
    """``130万元`` is ``1,300,000``; ``2026/3/5`` is ``2026年3月5日``: both stated, both owners forbidden."""
    answer = "项目预算合计130万元 [预算表.xlsx]。交货日期为2026/3/5。"
    assert leaked_ids(answer) == ["f1", "f2"]


def test_an_english_answer_states_the_same_facts_in_english_forms() -> None:
    answer = "The budget totals ¥1300000 [[d9]]. Delivery is due on March 5, 2026."
    assert leaked_ids(answer) == ["f1", "f2"]
    assert leaked_ids("Progress reached 18.5 percent this week.") == ["f4"]


def test_a_date_without_its_year_is_still_the_fact() -> None:
    assert leaked_ids("合同约定3月5日交货。") == ["f2"]


def test_near_values_are_not_the_fact() -> None:
    """Delimited numbers: 13,000,000 is not 1,300,000, 2027-03-05 is not 2026-03-05, 146,4000 no amount of f5."""
    assert leaked_ids("预算 13,000,000 元，交货 2027-03-05，编号 PO-146400。") == []


def test_a_fact_with_several_owners_leaks_only_if_none_may_be_previewed() -> None:
    answer = "项目负责人是朱琳。"
    assert leaked_ids(answer) == ["f3"]
    assert leaked_ids(answer, allowed={"d-kickoff"}) == []  # the kickoff deck names her: the asker may know it


def test_one_value_owned_by_another_permitted_fact_is_no_leak() -> None:
    """Two facts of one normal form (14.64万 = 146,400): a permitted owner of either explains the statement."""
    facts = [*FACTS, fact("f6", "14.64万", "d-payment", attribute="payment.amount")]
    answer = "应付金额 146,400 元。"
    assert [x.fact.fact_id for x in answer_leaks(answer, facts, lambda d: d == "d-payment")] == []
    assert [x.fact.fact_id for x in answer_leaks(answer, facts, may)] == ["f5", "f6"]


def test_citations_do_not_matter_and_a_clean_answer_states_nothing() -> None:
    assert leaked_ids("交货日期 2026年3月5日 [[d-public]]") == ["f2"]
    assert leaked_ids("没有找到你有权查看的相关文档。") == []
    assert stated_facts("No document you may see answers this question.", FACTS) == []


def test_the_rate_is_not_measured_without_facts_or_answers() -> None:
    one = answer_leaks("预算130万元", FACTS, may)
    assert answer_leak_rate([one, [], None], facts_available=True) == 0.5
    assert answer_leak_rate([[], []], facts_available=True) == 0.0
    assert answer_leak_rate([one], facts_available=False) is None
    assert answer_leak_rate([None, None], facts_available=True) is None


def test_the_leak_names_the_owner_and_the_oracles_reason() -> None:
    """With the corpus's own oracle: a seed question's forbidden document, its reason from ``explain``."""
    corpus = resolve_corpus("seed")
    oracle = corpus_oracle(corpus)
    q = next(q for q in load_evalset(corpus / EVALSET_NAME) if q.forbidden)
    secret = fact("f9", "2,750,000", q.forbidden[0], attribute="offer.salary")
    (leak,) = answer_leaks("年薪为275万元。", [secret], lambda d: oracle(q, d), explain=lambda d: oracle.explain(q, d))
    assert leak.doc_id == q.forbidden[0] and leak.fact is secret
    assert leak.reasons and all(isinstance(r, str) and r for r in leak.reasons)


def test_a_fact_a_preferred_document_owns_is_known_without_judging_its_other_owners() -> None:
    """``prefer`` (the documents the query returned, already judged): their decision settles a statement; the other
    owners are not asked about (a Casbin decision costs milliseconds), and the result is the same."""
    asked: list[str] = []

    def may_preview(doc_id: str) -> bool:
        asked.append(doc_id)
        return doc_id == "d-kickoff"

    assert answer_leaks("项目负责人是朱琳。", FACTS, may_preview, prefer=["d-kickoff"]) == []
    assert asked == ["d-kickoff"]
    asked.clear()
    assert answer_leaks("项目负责人是朱琳。", FACTS, may_preview) == []
    assert asked == ["d-charter", "d-kickoff"]
