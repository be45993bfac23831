"""The per-hit re-check is an independent defense. Whatever corrupts the search-time mask (the
visible-chunk set, the engine's cached masks, the "still previewable now" half of the point-in-time rule),
recall answers 503 with no results and never the document the principal may not preview."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from drivebench.drive.permissions import pointintime
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.simulator.backend import Simulator
from tests.support.pit import Q, revoke_after_a_day
from tests.support.security import h

RECALL = "/api/mcp/recall"


def _forbidden(sim: Simulator, who: str) -> set[str]:
    """Documents ``who`` may not preview now, by plain Casbin ``enforce``."""
    engine, now = sim.engine, sim.drive.clock.now()
    p = engine.user_principal(who)
    return {
        d.doc_id
        for d in sim.drive.documents.values()
        if not engine.enforce(p, doc_obj(d.doc_id), "preview", now, d.secret_level)
    }


def _assert_refused(r, forbidden: set[str]) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "permission-check-failed"
    assert "results" not in r.json()
    assert not any(d in r.text for d in forbidden)


def test_every_chunk_let_through_by_the_search_mask_answers_503(
    module_client: TestClient, module_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    forbidden = _forbidden(module_sim, "u012")
    assert forbidden  # the precondition: u012 may not preview everything
    monkeypatch.setattr(module_sim, "visible_chunks", lambda *_a, **_k: module_sim.store.alive.copy())
    everything = module_sim.retriever.search(Q, module_sim.store.alive.copy(), 10)
    assert {x.doc_id for x in everything} & forbidden  # the corrupted search would return a forbidden document
    _assert_refused(
        module_client.post(RECALL, headers=h(module_sim, "u012"), json={"query": Q, "top_k": 10}), forbidden
    )


def test_poisoned_mask_cache_answers_503(module_client: TestClient, module_sim: Simulator) -> None:
    forbidden = _forbidden(module_sim, "u012")
    assert module_client.post(RECALL, headers=h(module_sim, "u012"), json={"query": Q, "top_k": 10}).status_code == 200
    engine = module_sim.engine
    assert engine._cache  # the recall above cached u012's mask
    for key, masks in list(engine._cache.items()):  # a bit flip in every cached mask: all documents allowed
        engine._cache[key] = tuple(np.ones_like(m) for m in masks)
    _assert_refused(
        module_client.post(RECALL, headers=h(module_sim, "u012"), json={"query": Q, "top_k": 10}), forbidden
    )
    engine.clear_cache()


def test_dropping_the_now_half_of_point_in_time_answers_503(
    module_client: TestClient, module_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    during = revoke_after_a_day(module_sim)  # u012 could preview d0014 during the day; the grant is revoked now
    body = {"query": Q, "top_k": 100, "as_of": during}
    replay = module_client.post(RECALL, headers=h(module_sim, "eval"), json={**body, "user_id": "u012"})
    assert "d0014" in [x["doc_id"] for x in replay.json()["results"]]  # in force then
    mine = module_client.post(RECALL, headers=h(module_sim, "u012"), json=body)
    assert mine.status_code == 200 and "d0014" not in mine.text  # revoked: gone for every past as_of
    # corrupt the mask's "and may still preview now" half: the search would let d0014 through
    monkeypatch.setattr(pointintime, "_align", lambda mask, src, dst: np.ones(len(dst.doc_ids), dtype=bool))
    _assert_refused(module_client.post(RECALL, headers=h(module_sim, "u012"), json=body), {"d0014"})


def test_recheck_raising_answers_503(
    module_client: TestClient, module_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_a: object, **_k: object) -> bool:
        raise RuntimeError("decision index unavailable")

    monkeypatch.setattr(module_sim.engine, "decide_doc", boom)
    r = module_client.post(RECALL, headers=h(module_sim, "u012"), json={"query": Q, "top_k": 10})
    assert r.status_code == 503 and "results" not in r.json()
