"""Two users, one question: different results, and nobody sees what they may not preview.

The expected visibility comes from the corpus's own ground truth (``manifest.access``, written by
the corpus builder from its scenario logic, not by Casbin), so this test checks the simulator
against an independent oracle.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from fastapi.testclient import TestClient

from drivebench.formats.corpus import Manifest
from drivebench.formats.evalset import EvalQuery
from drivebench.search.retrieval.pipelines import PIPELINES, Retriever
from drivebench.simulator.backend import Simulator
from tests.support.decisions import previewable_docs, user_may_preview
from tests.support.http import bearer

URL = "/api/mcp/recall"


def _recall(client: TestClient, sim: Simulator, user_id: str, query: str, top_k: int = 10) -> list[dict]:
    r = client.post(URL, json={"query": query, "top_k": top_k}, headers=bearer(sim.tokens.for_subject(user_id).token))
    assert r.status_code == 200, r.text
    return r.json()["results"]


def _visible_now(sim: Simulator, manifest: Manifest, user_id: str) -> set[str]:
    assert manifest.access is not None
    return {d for d in manifest.access[user_id] if sim.drive.documents[d].trashed_at is None}


def test_permission_pairs_differ_and_never_leak(
    client: TestClient, sim: Simulator, seed_manifest: Manifest, seed_evalset: list[EvalQuery]
) -> None:
    by_text: dict[str, list[EvalQuery]] = defaultdict(list)
    for q in seed_evalset:
        if q.user_id:
            by_text[q.query].append(q)
    pairs = [(a, b) for qs in by_text.values() for a in qs for b in qs if a.forbidden == [] and b.forbidden]
    assert len(pairs) >= 5, "the seed eval set must ask >= 5 questions from users with different access"
    for allowed_q, forbidden_q in pairs:
        assert allowed_q.user_id and forbidden_q.user_id
        allowed = _recall(client, sim, allowed_q.user_id, allowed_q.query)
        denied = _recall(client, sim, forbidden_q.user_id, forbidden_q.query)
        allowed_ids, denied_ids = [x["doc_id"] for x in allowed], [x["doc_id"] for x in denied]
        assert allowed_ids != denied_ids, allowed_q.query
        assert not set(forbidden_q.forbidden) & set(denied_ids), f"leak to {forbidden_q.user_id}: {forbidden_q.query}"
        assert set(allowed_ids) <= _visible_now(sim, seed_manifest, allowed_q.user_id)
        assert set(denied_ids) <= _visible_now(sim, seed_manifest, forbidden_q.user_id)


def test_every_user_sees_only_previewable(client: TestClient, sim: Simulator, seed_manifest: Manifest) -> None:
    for user_id in sorted(sim.drive.users):
        visible = _visible_now(sim, seed_manifest, user_id)
        for query in ("项目X的技术方案审批人", "budget approval", "员工手册 年假"):
            results = _recall(client, sim, user_id, query, top_k=10)
            ids = [x["doc_id"] for x in results]
            assert set(ids) <= visible, (user_id, query, set(ids) - visible)
            assert len(ids) == len(set(ids)), "one result per document"
            scores = [x["score"] for x in results]
            assert scores == sorted(scores, reverse=True)
            assert [x["rank"] for x in results] == list(range(1, len(results) + 1))


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_top_k_is_full_while_enough_permitted_documents_match(
    sim: Simulator, seed_manifest: Manifest, pipeline: str
) -> None:
    """dense and hybrid rank every permitted document; bm25 matches documents with a positive score."""
    retriever = Retriever(sim.store, sim.embedder, pipeline)
    now = sim.drive.clock.now()
    for user_id in sorted(sim.drive.users):
        principal = sim.engine.user_principal(user_id)
        mask = sim.visible_chunks(principal, now)
        for query in ("项目X的技术方案审批人", "budget approval", "员工手册 年假", "zzzz qqqq"):
            visible_docs = {sim.store.doc_ids[i] for i in np.flatnonzero(mask)}
            if pipeline == "bm25":
                scores = sim.store.lexical.scores(query, len(sim.store))
                matching = {sim.store.doc_ids[i] for i in np.flatnonzero(mask & (scores > 0))}
            else:
                matching = visible_docs
            for top_k in (1, 3, 10, 50):
                hits = retriever.search(query, mask, top_k)
                assert len(hits) == min(top_k, len(matching)), (pipeline, user_id, query, top_k)
                assert {h.doc_id for h in hits} <= visible_docs


def test_fast_path_equals_enforce_and_ground_truth(sim: Simulator, seed_manifest: Manifest) -> None:
    engine, now = sim.engine, sim.drive.clock.now()
    assert seed_manifest.access is not None
    for user_id in sorted(sim.drive.users):
        fast = previewable_docs(engine, user_id, now)
        slow = {d for d in engine.doc_ids if user_may_preview(engine, user_id, d, now)}
        assert fast == slow, user_id
        assert fast == set(seed_manifest.access[user_id]), user_id
