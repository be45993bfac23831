"""``POST /api/mcp/answer``: extractive, deterministic, cites what it quotes, never a denied document."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.citations import extract_citations
from drivebench.formats.corpus import Manifest
from drivebench.formats.evalset import EvalQuery
from drivebench.simulator.answer import compose_answer, split_sentences
from drivebench.simulator.backend import Simulator
from tests.support.decisions import enforce_doc
from tests.support.http import bearer

QUERY = {"query": "项目X的技术方案审批人", "user_id": "u001", "top_k": 10}


@pytest.fixture(scope="module")
def catalog(seed_manifest: Manifest) -> Catalog:
    return Catalog.from_manifest(seed_manifest)


def _answer(client: TestClient, token: str, **body: object) -> dict:
    r = client.post("/api/mcp/answer", json={**QUERY, **body}, headers=bearer(token))
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("style", ["brackets", "ids", "footnotes"])
def test_every_citation_resolves_to_a_returned_document(
    client: TestClient, sim: Simulator, catalog: Catalog, style: str
) -> None:
    data = _answer(client, sim.tokens.eval_token, citation_style=style)
    assert data["citation_style"] == style and data["answer"].strip()
    returned = {r["doc_id"] for r in data["results"]}
    cited = {c["doc_id"] for c in data["citations"]}
    assert cited and cited <= returned
    found = extract_citations(data["answer"], catalog, prefer=returned)
    assert set(found.cited) == cited and not found.unresolvable
    for c in data["citations"]:
        assert c["marker"] in data["answer"]
        hit = next(r for r in data["results"] if r["doc_id"] == c["doc_id"])
        assert c["version_id"] == hit["version_id"] and c["name"] == hit["name"]
    markers = {"brackets": "[项目X技术方案审批记录.pdf]", "ids": "[[d0015]]", "footnotes": "[^1]"}
    assert markers[style] in data["answer"]


def test_the_answer_quotes_the_fact(client: TestClient, sim: Simulator) -> None:
    data = _answer(client, sim.tokens.eval_token, query="When is the Project X weekly status meeting?")
    assert "Tuesday at 10:00" in data["answer"] and "[Project X Kickoff Meeting Minutes.md]" in data["answer"]


def test_same_request_same_answer(client: TestClient, sim: Simulator) -> None:
    a = _answer(client, sim.tokens.eval_token, citation_style="footnotes")
    b = _answer(client, sim.tokens.eval_token, citation_style="footnotes")
    assert a["answer"] == b["answer"] and a["citations"] == b["citations"]


def test_results_are_the_recall_results(client: TestClient, sim: Simulator) -> None:
    recall = client.post("/api/mcp/recall", json=QUERY, headers=bearer(sim.tokens.eval_token)).json()
    answer = _answer(client, sim.tokens.eval_token)
    assert answer["results"] == recall["results"] and answer["principal"] == recall["principal"]


def test_never_quotes_or_cites_what_the_principal_may_not_preview(
    sim: Simulator, seed_evalset: list[EvalQuery]
) -> None:
    """For every eval query (20 of them ask for documents their user may not see): each cited document is
    previewable by the query's user, and each quoted sentence occurs in a cited, previewable document."""
    engine = sim.engine
    checked_forbidden = 0
    facts = found_facts = 0
    for q in seed_evalset:
        principal = engine.user_principal(q.user_id) if q.user_id else engine.role_principal(q.user_role or "")
        outcome = sim.recall(principal, q.query, 10, q.as_of)
        at = outcome.at
        result = compose_answer(sim, outcome, q.query, "brackets")
        facts += len(q.answer_facts)
        found_facts += sum(f in result.text for f in q.answer_facts)
        for c in result.citations:
            assert enforce_doc(engine, principal, c.doc_id, "preview", at), (q.query_id, c.doc_id)
        for doc_id, sentence in result.quoted:
            assert enforce_doc(engine, principal, doc_id, "preview", at), (q.query_id, doc_id)
            assert sentence.rstrip("…") in " ".join(split_sentences(_doc_text(sim, doc_id))) or sentence.endswith("…")
        for forbidden in q.forbidden:
            checked_forbidden += 1
            assert forbidden not in {c.doc_id for c in result.citations}
            assert forbidden not in {d for d, _ in result.quoted}
            # nor its text: no sentence of a forbidden document appears in the answer
            for sentence in split_sentences(_doc_text(sim, forbidden))[:40]:
                if len(sentence) > 20:
                    assert sentence not in result.text, (q.query_id, forbidden, sentence)
    assert checked_forbidden >= 10
    assert found_facts / facts >= 0.4  # the extractive baseline quotes about half of the expected facts


def _doc_text(sim: Simulator, doc_id: str) -> str:
    ids = [i for i, d in enumerate(sim.store.doc_ids) if d == doc_id and sim.store.alive[i]]
    return "\n".join(sim.store.texts[i].split("\n", 1)[-1] for i in ids)


def test_a_user_token_answers_as_its_user_only(client: TestClient, sim: Simulator) -> None:
    token = sim.tokens.for_subject("u001").token
    r = client.post("/api/mcp/answer", json={"query": "预算", "top_k": 5}, headers=bearer(token))
    assert r.status_code == 200 and r.json()["principal"]["user_id"] == "u001"
    r = client.post("/api/mcp/answer", json={"query": "预算", "user_id": "u004"}, headers=bearer(token))
    assert r.status_code == 403
    assert client.post("/api/mcp/answer", json={"query": "预算", "user_id": "u001"}).status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [({"citation_style": "apa"}, "citation_style"), ({"top_k": 0}, "top_k"), ({"query": ""}, "query")],
)
def test_bad_fields_are_422(client: TestClient, sim: Simulator, body: dict, field: str) -> None:
    r = client.post("/api/mcp/answer", json={**QUERY, **body}, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 422 and field in r.json()["error"]["fields"]


def test_the_vendor_curl_shape_works_for_answers_too(client: TestClient, sim: Simulator) -> None:
    body = '{"query": "项目X的技术方案审批人", "user_role": "engineer", "top_k": 10, "color": "red"}'
    r = client.post(
        "/api/mcp/answer",
        content=body,
        headers={**bearer(sim.tokens.eval_token), "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 200 and r.json()["warnings"] == ["ignored unknown field 'color'"]


def test_no_permitted_result_gives_an_empty_answer_without_citations(client: TestClient, sim: Simulator) -> None:
    data = _answer(client, sim.tokens.eval_token, filters={"file_types": ["xlsx"]}, user_id="u007")
    if not data["results"]:
        assert data["citations"] == [] and "没有" in data["answer"]
    else:  # the intern sees the xlsx: then it is cited
        assert {c["doc_id"] for c in data["citations"]} <= {r["doc_id"] for r in data["results"]}


def test_openapi_documents_the_answer_endpoint(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "/api/mcp/answer" in schema["paths"]
    assert "citation_style" in schema["components"]["schemas"]["AnswerRequest"]["properties"]
