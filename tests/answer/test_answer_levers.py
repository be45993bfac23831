"""The answer generator's levers: defaults keep today's answers byte for byte; each lever moves the metric the
article ties it to, and the citation diagnosis points at the layer that was degraded."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drivebench.drive.clock import SimClock
from drivebench.drive.state import Drive
from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.citations import cited_statements
from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.runner import RunConfig
from drivebench.formats.corpus import Manifest
from drivebench.formats.evalset import EvalQuery
from drivebench.simulator.answer import AnswerLevers, compose_answer, parse_citation
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.recall import RecallOutcome
from drivebench.simulator.target import InProcessTarget
from tests.support.http import bearer

# Answers of the seed corpus with the test backend (hash embedder, bm25), written by the generator before it had
# levers: the defaults must still give exactly these bytes.
BEFORE: dict[tuple[str, str], str] = {
    (
        "q001",
        "brackets",
    ): "审批事项 项目X技术方案 v2.0 [项目X技术方案审批记录.pdf]\n技术方案 v2.0 新增客户私有化部署，依据《研发项目管理办法》"
    "第三章，改由技术总监审批。 [项目X技术方案审批记录.pdf]\n项目预算不超过350万元的，技术方案由研发部经理审批； [研发项目管理办法.pdf]",
    ("q003", "brackets"): "This policy sets the minimum security rules for every employee, intern and contractor of "
    "Xingchen Technology Co., Ltd. [Information Security Policy.md]\nIt covers company laptops, the corporate cloud "
    "drive, source code repositories and any personal device used for work. [Information Security Policy.md]\n"
    "Passwords and authentication [Information Security Policy.md]\nremote employees must be reachable on the "
    "company messenger during these hours. [Remote Work Policy.docx]\nAdministrator accounts [Drive Administration "
    "Runbook.md]",
    (
        "q002",
        "footnotes",
    ): "专项制度未作规定的，按本手册执行。[^1]\n员工享有国家规定的法定节假日。[^1]\n满1年不满10年 5天[^1]\n"
    "销售类 10 销售部[^2]\n\n[^1]: /company/员工手册（2026版）.docx\n[^2]: /hr/2027届校园招聘计划.docx",
    (
        "q010",
        "ids",
    ): "项目X一期于 2026 年 10 月 28 日正式上线，比计划提前 3 天 [[d0029]]\n（1）完成项目X（企业知识库智能问答系统）一期"
    "上线，并启动客户私有化部署版本的研发； [[d0005]]",
}


@pytest.fixture(scope="module")
def catalog(seed_manifest: Manifest) -> Catalog:
    return Catalog.from_manifest(seed_manifest)


@pytest.fixture
def levers(sim: Simulator) -> Iterator[Any]:
    """Set the session simulator's answer levers for one test (restored after)."""
    before = sim.config

    def set_levers(**kw: Any) -> None:
        sim.config = dataclasses.replace(before, **kw)

    try:
        yield set_levers
    finally:
        sim.config = before


def _outcome(sim: Simulator, q: EvalQuery) -> RecallOutcome:
    principal = sim.engine.user_principal(q.user_id) if q.user_id else sim.engine.role_principal(q.user_role or "")
    return sim.recall(principal, q.query, 10, q.as_of)


def _by_id(queries: list[EvalQuery]) -> dict[str, EvalQuery]:
    return {q.query_id: q for q in queries}


def test_the_test_backend_is_the_one_the_answers_were_written_with(sim: Simulator) -> None:
    assert (sim.config.embedder, sim.config.pipeline) == ("hash", "bm25")


@pytest.mark.parametrize(("qid", "style"), list(BEFORE))
def test_default_answers_are_byte_identical_to_before(
    sim: Simulator, client: TestClient, seed_evalset: list[EvalQuery], qid: str, style: str
) -> None:
    q = _by_id(seed_evalset)[qid]
    outcome = _outcome(sim, q)
    assert compose_answer(sim, outcome, q.query, style).text == BEFORE[(qid, style)]
    explicit = AnswerLevers.from_settings("always", 0, 3)
    assert compose_answer(sim, outcome, q.query, style, levers=explicit).text == BEFORE[(qid, style)]
    body = {"query": q.query, "user_id": q.user_id, "user_role": q.user_role, "top_k": 10, "citation_style": style}
    r = client.post("/api/mcp/answer", json=body, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 200 and r.json()["answer"] == BEFORE[(qid, style)]


def test_some_cites_a_deterministic_share_and_keeps_every_sentence(
    sim: Simulator, seed_evalset: list[EvalQuery]
) -> None:
    quoted = cited = 0
    for q in seed_evalset:
        outcome = _outcome(sim, q)
        always = compose_answer(sim, outcome, q.query, "ids")
        some = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(citation="some"))
        assert some.quoted == always.quoted  # the same statements, fewer markers
        assert {c.doc_id for c in some.citations} <= {c.doc_id for c in always.citations}
        again = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(citation="some"))
        assert again.text == some.text
        quoted += len({d for d, _ in always.quoted})
        cited += len(some.citations)
        none = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(citation="some", cite_share=0.0))
        assert none.citations == [] and none.quoted == always.quoted
        full = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(citation="some", cite_share=1.0))
        assert full.text == always.text
    assert 0.3 < cited / quoted < 0.7


def test_wrong_cites_another_recalled_document(sim: Simulator, seed_evalset: list[EvalQuery], catalog: Catalog) -> None:
    statements = 0
    for q in seed_evalset:
        outcome = _outcome(sim, q)
        result = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(citation="wrong"))
        recalled = {h.doc_id for h in outcome.hits}
        assert {c.doc_id for c in result.citations} <= recalled  # never a document recall did not return
        sources = {s: d for d, s in result.quoted}  # sentence -> the document it came from
        for st in cited_statements(result.text, catalog, prefer=recalled):
            sentence = st.text.strip()
            if sentence in sources:
                statements += 1
                assert sources[sentence] not in st.cited, (q.query_id, sentence)
                assert st.cited or len(recalled) < 2
    assert statements >= len(seed_evalset)


def test_length_and_passages(sim: Simulator, seed_evalset: list[EvalQuery]) -> None:
    longer = 0
    for q in seed_evalset:
        outcome = _outcome(sim, q)
        default = compose_answer(sim, outcome, q.query, "ids")
        one = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(length=1))
        # the top passage's best sentence (the default prints its sentences in document order)
        assert len(one.quoted) == 1 and one.quoted[0] in default.quoted and one.quoted[0][0] == default.quoted[0][0]
        eight = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(length=8))
        assert len(eight.quoted) <= 8
        longer += len(eight.quoted) > len(default.quoted)
        top = compose_answer(sim, outcome, q.query, "ids", levers=AnswerLevers(passages=1))
        assert {d for d, _ in top.quoted} <= {outcome.hits[0].doc_id} if outcome.hits else not top.quoted
    assert longer >= 5


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"answer_citation": "sometimes"}, "answer citation"),
        ({"answer_citation": "some:1.5"}, "answer citation"),
        ({"answer_citation": "always:0.5"}, "answer citation"),
        ({"answer_length": -1}, "answer_length"),
        ({"answer_passages": 0}, "answer_passages"),
    ],
)
def test_bad_levers_are_refused_at_start(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Simulator(Drive("empty", "en", SimClock(datetime(2026, 1, 1, tzinfo=UTC))), SimConfig(embedder="hash", **kw))


def test_parse_citation() -> None:
    assert parse_citation("always") == ("always", 1.0)
    assert parse_citation("some") == ("some", 0.5)
    assert parse_citation(" Some:0.25 ") == ("some", 0.25)
    assert parse_citation("wrong") == ("wrong", 1.0)


def _run(sim: Simulator, queries: list[EvalQuery], catalog: Catalog, top_k: int = 10) -> dict[str, Any]:
    cfg = RunConfig(top_k=top_k, concurrency=2, mode="answer")
    return evaluate(InProcessTarget(sim), queries, run_config=cfg, catalog=catalog).result


def test_the_diagnosis_points_at_the_layer_that_was_degraded(
    sim: Simulator, seed_evalset: list[EvalQuery], catalog: Catalog, levers: Any
) -> None:
    """citation=some: Source Coverage falls, recall does not, the lost gold is "recalled but not cited" (generation).
    citation=wrong: citation precision falls. Recall cut to one result: the lost gold is "never recalled"
    (retrieval)."""
    base = _run(sim, seed_evalset, catalog)
    levers(answer_citation="some")
    some = _run(sim, seed_evalset, catalog)
    assert some["metrics"]["hit_rate@10"] == base["metrics"]["hit_rate@10"]
    assert some["metrics"]["source_coverage"] < base["metrics"]["source_coverage"] - 0.2
    gained = {
        k: some["citations"]["gold_docs"][k] - base["citations"]["gold_docs"][k] for k in base["citations"]["gold_docs"]
    }
    assert gained["retrieved_not_cited"] > 10 and gained["neither"] == 0
    assert some["citations"]["larger_gap"] == "generation"
    assert some["metrics"]["answer_fact_recall"] == base["metrics"]["answer_fact_recall"]  # same words said
    assert some["metrics"]["claim_support"] < base["metrics"]["claim_support"]

    levers(answer_citation="wrong")
    wrong = _run(sim, seed_evalset, catalog)
    assert wrong["metrics"]["citation_precision"] < base["metrics"]["citation_precision"] - 0.2
    assert wrong["citations"]["non_gold_citations"]["wrong"] > base["citations"]["non_gold_citations"]["wrong"]

    levers()  # defaults again, recall degraded: only the top result is returned (and read)
    cut = _run(sim, seed_evalset, catalog, top_k=1)
    assert cut["metrics"]["source_coverage"] < base["metrics"]["source_coverage"]
    lost = {
        k: cut["citations"]["gold_docs"][k] - base["citations"]["gold_docs"][k] for k in base["citations"]["gold_docs"]
    }
    assert lost["neither"] > 5 and cut["citations"]["gold_docs"]["retrieved_not_cited"] == 0
    assert cut["citations"]["larger_gap"] == "retrieval"


def test_longer_answers_state_more_facts(
    sim: Simulator, seed_evalset: list[EvalQuery], catalog: Catalog, levers: Any
) -> None:
    base = _run(sim, seed_evalset, catalog)
    assert base["oracles"]["answer_facts"]["measured"] is True
    assert 0.3 < base["metrics"]["answer_fact_recall"] < 1.0
    levers(answer_length=1)
    short = _run(sim, seed_evalset, catalog)
    levers(answer_length=8)
    long = _run(sim, seed_evalset, catalog)
    assert short["metrics"]["answer_fact_recall"] < base["metrics"]["answer_fact_recall"]
    assert long["metrics"]["answer_fact_recall"] > base["metrics"]["answer_fact_recall"]


def test_replica_workers_get_the_levers() -> None:
    """``serve --workers N`` hands the levers to every worker process through the replica spec."""
    from drivebench.server.process import ReplicaSpec, load_replica

    spec = ReplicaSpec("seed", "bm25", "hash", [], answer_levers={"answer_citation": "some:0.2", "answer_length": 2})
    again = ReplicaSpec(**json.loads(spec.to_env()))
    assert again == spec
    config = load_replica(again).config
    assert (config.answer_citation, config.answer_length, config.answer_passages) == ("some:0.2", 2, 3)


def test_compare_shows_the_answer_fact_metrics_with_the_answers() -> None:
    from drivebench.evaluator.compare_runs import metric_group

    assert metric_group("answer_fact_recall") == metric_group("claim_support") == metric_group("source_coverage")
    assert metric_group("claim_support") == "answers"
