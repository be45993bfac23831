"""The faults that leak beyond the result list, over HTTP on the seed corpus: each one does its damage, the
clean simulator does not, and none leaks outside its definition.

Seed principals: ``u012`` (an HR intern) may preview two documents, ``u008`` (legal manager) eight, ``u004``
(finance manager) ten, among them the finance documents the intern may not see.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from drivebench.evaluator.metrics.answer_leak import answer_leaks
from drivebench.formats.facts import CorpusFact, FactOwner
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet
from tests.support.sims import auth

RECALL, ANSWER = "/api/mcp/recall", "/api/mcp/answer"
INTERN, LEGAL, FINANCE = "u012", "u008", "u004"
BUDGET_QUESTION = "2026年度预算总额是多少"


def may_preview(sim: Simulator, user: str) -> set[str]:
    mask = sim.engine.allowed_mask(sim.engine.user_principal(user), "preview", sim.drive.clock.now())
    return {sim.engine.doc_ids[i] for i in np.flatnonzero(mask)}


def post(client: TestClient, sim: Simulator, url: str, user: str, **body: Any) -> Any:
    r = client.post(url, json=body, headers=auth(sim, user))
    assert r.status_code == 200, r.text
    return r.json()


def docs_of(response: dict[str, Any]) -> list[str]:
    return [h["doc_id"] for h in response["results"]]


# ---------------------------------------------------------------------- role-from-body
def test_clean_server_takes_identity_from_the_token_only(client: TestClient, sim: Simulator) -> None:
    """A user token naming another user, or a role or department it does not hold, is refused (403) and sees
    nothing; naming what it is changes nothing."""
    for body in ({"user_id": FINANCE}, {"user_role": "finance_manager"}, {"department": "finance"}):
        r = client.post(RECALL, json={"query": BUDGET_QUESTION, **body}, headers=auth(sim, INTERN))
        assert r.status_code == 403 and "results" not in r.json(), body
    own = post(client, sim, RECALL, INTERN, query=BUDGET_QUESTION, user_role="intern", department="hr")
    assert own["principal"]["user_id"] == INTERN and set(docs_of(own)) <= may_preview(sim, INTERN)


def test_role_from_body_answers_as_whoever_the_body_names(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    drivebench_faults.enable("role-from-body")
    intern_sees = may_preview(sim, INTERN)
    as_manager = post(client, sim, RECALL, INTERN, query=BUDGET_QUESTION, user_id=FINANCE)
    assert as_manager["principal"]["user_id"] == FINANCE
    assert set(docs_of(as_manager)) - intern_sees, "the intern's token sees the finance manager's documents"
    as_role = post(client, sim, ANSWER, INTERN, query=BUDGET_QUESTION, user_role="finance_manager")
    assert as_role["principal"]["roles"] == ["finance_manager"]
    assert set(docs_of(as_role)) - intern_sees
    r = client.post(RECALL, json={"query": BUDGET_QUESTION, "user_role": "ceo"}, headers=auth(sim, INTERN))
    assert r.status_code == 400  # an unknown name is still refused
    no_body = post(client, sim, RECALL, INTERN, query=BUDGET_QUESTION)  # without body fields: the token's user
    assert no_body["principal"]["user_id"] == INTERN and set(docs_of(no_body)) <= intern_sees
    assert drivebench_faults.injected["role-from-body"] >= 2


# ---------------------------------------------------------------------- post-filter
def test_post_filter_under_fills_a_principal_who_sees_little_and_leaks_nothing(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    top_k, sees = 5, may_preview(sim, LEGAL)
    assert len(sees) >= top_k
    clean = post(client, sim, RECALL, LEGAL, query=BUDGET_QUESTION, top_k=top_k)
    assert len(clean["results"]) == top_k
    drivebench_faults.enable("post-filter")
    faulted = post(client, sim, RECALL, LEGAL, query=BUDGET_QUESTION, top_k=top_k)
    assert len(faulted["results"]) < top_k and set(docs_of(faulted)) <= sees
    drivebench_faults.enable("post-filter", fetch_k=100)  # fetching the whole drive fills the list again
    wide = post(client, sim, RECALL, LEGAL, query=BUDGET_QUESTION, top_k=top_k)
    assert len(wide["results"]) == top_k and set(docs_of(wide)) <= sees
    everyone = post(client, sim, RECALL, "u003", query=BUDGET_QUESTION, top_k=top_k)
    assert set(docs_of(everyone)) <= may_preview(sim, "u003")


# ---------------------------------------------------------------------- shared-answer-cache
def test_shared_answer_cache_serves_the_first_askers_answer_to_the_next(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    body = {"query": BUDGET_QUESTION, "top_k": 5}
    intern_sees = may_preview(sim, INTERN)
    clean = post(client, sim, ANSWER, INTERN, **body)
    assert {c["doc_id"] for c in clean["citations"]} <= intern_sees and set(docs_of(clean)) <= intern_sees
    drivebench_faults.enable("shared-answer-cache")
    first = post(client, sim, ANSWER, FINANCE, **body)
    second = post(client, sim, ANSWER, INTERN, **body)
    assert second == first and second["principal"]["user_id"] == FINANCE
    assert {c["doc_id"] for c in second["citations"]} - intern_sees, "the intern receives forbidden citations"
    other = post(client, sim, ANSWER, INTERN, **{**body, "top_k": 4})  # another body: answered for its asker
    assert other["principal"]["user_id"] == INTERN and set(docs_of(other)) <= intern_sees
    drivebench_faults.clear()  # switching faults empties the cache
    drivebench_faults.enable("shared-answer-cache")
    assert post(client, sim, ANSWER, INTERN, **body)["principal"]["user_id"] == INTERN


# ---------------------------------------------------------------------- answer-unfiltered-context
def test_answer_unfiltered_context_states_forbidden_facts_with_clean_results_and_citations(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    """The answer states the third-quarter revenue (``1.86亿元``, only in a finance report the intern may not
    preview): ``answer_leaks`` finds it written as 186,000,000, while every result and citation is permitted."""
    sees = may_preview(sim, INTERN)
    revenue = next(d for d in sim.drive.documents if "1.86亿元" in "".join(_texts(sim, d)))
    assert revenue not in sees
    fact = CorpusFact(
        fact_id="f1",
        text="186,000,000",
        entity="2026Q3",
        attribute="report.revenue",
        owners=[FactOwner(doc_id=revenue, version_ids=[sim.drive.documents[revenue].head.version_id])],
    )
    body = {"query": "第三季度营业收入是多少", "top_k": 5}
    clean = post(client, sim, ANSWER, INTERN, **body)
    assert answer_leaks(clean["answer"], [fact], sees.__contains__) == []
    drivebench_faults.enable("answer-unfiltered-context")
    faulted = post(client, sim, ANSWER, INTERN, **body)
    assert docs_of(faulted) == docs_of(clean)  # the results are the clean recall's
    assert {c["doc_id"] for c in faulted["citations"]} <= set(docs_of(faulted)) <= sees
    (leak,) = answer_leaks(faulted["answer"], [fact], sees.__contains__)
    assert leak.doc_id == revenue


def _texts(sim: Simulator, doc_id: str) -> list[str]:
    versions = sim.drive.documents[doc_id].versions
    return [sim.store.texts[c] for v in versions for c in sim.store.by_version.get(v.version_id, [])]


@pytest.mark.parametrize("fault", ["post-filter", "answer-unfiltered-context"])
def test_faults_that_must_not_leak_results_do_not(
    fault: str, client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    drivebench_faults.enable(fault)
    for user in (INTERN, LEGAL, "u010"):
        sees = may_preview(sim, user)
        for question in (BUDGET_QUESTION, "合同金额", "员工薪资调整方案"):
            r = post(client, sim, ANSWER, user, query=question, top_k=8)
            assert set(docs_of(r)) <= sees and {c["doc_id"] for c in r["citations"]} <= sees, (user, question)
