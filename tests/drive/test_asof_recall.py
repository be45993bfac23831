"""Point-in-time recall (``as_of``) and trash over HTTP, with the real model (minilm, from the embedding
cache): the drive as it stood then — versions, folders, grants and trash of that time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.sims import client_for, fresh_sim, hit_ids, recall

Q = "项目X的技术方案审批人"
PAST = "2026-08-01T00:00:00+00:00"  # before d0014 v2 (2026-09-05) changed the approver


# hybrid with the dense half in milvus-lite (the filter pushed into Milvus) passes the same tests
@pytest.fixture(scope="module", params=["bm25", "hybrid", "hybrid+milvus"])
def pipeline_sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    """A seed simulator with the default embedder (e5), one per recall pipeline (bm25, hybrid, hybrid over milvus-lite)."""
    pipeline, _, index = request.param.partition("+")
    s = fresh_sim(SimConfig(embedder="e5", pipeline=pipeline, vector_store=index or "faiss"))
    yield s
    if index:  # reset (after every test) keeps the backend: a fresh Milvus collection for the fresh store
        assert s.store.vector_backend is not None and s.index_metadata()["vector_store"]["backend"] == "milvus"


@pytest.fixture
def pipeline_client(pipeline_sim: Simulator) -> Iterator[TestClient]:
    yield client_for(pipeline_sim)
    pipeline_sim.reset()  # every test starts from the corpus


def replay(client: TestClient, sim: Simulator, user: str, query: str, top_k: int = 10, **body: object) -> dict:
    """Recall with the evaluation token as ``user``: the permissions in force at ``as_of`` (no "and now")."""
    r = client.post(
        "/api/mcp/recall",
        headers={"Authorization": f"Bearer {sim.tokens.eval_token}"},
        json={"query": query, "top_k": top_k, "user_id": user, **body},
    )
    assert r.status_code == 200, r.text
    return r.json()


def _hit(resp: dict, doc_id: str) -> dict | None:
    return next((h for h in resp["results"] if h["doc_id"] == doc_id), None)


def _chunks(sim: Simulator, version_id: str) -> str:
    return "\n".join(sim.store.texts[i] for i in sim.store.by_version[version_id])


def test_as_of_finds_the_old_approver_then_the_new_one(pipeline_client: TestClient, pipeline_sim: Simulator) -> None:
    for user in ("u001", "u003"):
        past = recall(pipeline_client, pipeline_sim, user, Q, as_of=PAST)
        old = _hit(past, "d0014")
        assert old is not None and old["version_id"] == "d0014-v1", hit_ids(past)
        assert past["as_of"].startswith("2026-08-01")
        assert "d0015" not in hit_ids(past)  # the approval record was written on 2026-09-12
        now = recall(pipeline_client, pipeline_sim, user, Q)
        new = _hit(now, "d0014")
        assert new is not None and new["version_id"] == "d0014-v2", hit_ids(now)
    assert "审批人 李强" in _chunks(pipeline_sim, "d0014-v1") and "审批人 王芳" in _chunks(pipeline_sim, "d0014-v2")
    assert "王芳" not in _chunks(pipeline_sim, "d0014-v1")


def test_superseded_versions_are_searchable_for_as_of_only(
    pipeline_client: TestClient, pipeline_sim: Simulator
) -> None:
    for at in (None, "2026-06-09T00:00:00+00:00", PAST, "2026-09-05T07:00:00+00:00"):
        body = {"as_of": at} if at else {}
        versions = [
            h["version_id"] for h in recall(pipeline_client, pipeline_sim, "u003", Q, top_k=20, **body)["results"]
        ]
        expected = {None: "d0014-v2", PAST: "d0014-v1", "2026-09-05T07:00:00+00:00": "d0014-v2"}.get(at)
        assert [v for v in versions if v.startswith("d0014")] == ([expected] if expected else []), (at, versions)


def test_trashed_document_is_never_recalled_and_comes_back(
    pipeline_client: TestClient, pipeline_sim: Simulator
) -> None:
    queries = [Q, "项目X技术方案", "技术方案 审批人 王芳", "project X technical design"]
    assert all("d0014" in hit_ids(recall(pipeline_client, pipeline_sim, "u003", q, top_k=30)) for q in queries[:3])
    admin = {"Authorization": f"Bearer {pipeline_sim.tokens.admin_token}"}
    assert pipeline_client.post("/api/v1/files/d0014/trash", headers=admin).status_code == 200
    trashed_at = pipeline_sim.drive.doc("d0014").trashed_at
    for user in sorted(pipeline_sim.drive.users):
        for q in queries:
            assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, user, q, top_k=100)), (user, q)
    # as_of before the trash still sees it (it was not in the trash then)
    assert _hit(recall(pipeline_client, pipeline_sim, "u003", Q, as_of=PAST), "d0014") is not None
    assert pipeline_client.post("/api/v1/files/d0014/untrash", headers=admin).status_code == 200
    assert _hit(recall(pipeline_client, pipeline_sim, "u003", Q), "d0014")["version_id"] == "d0014-v2"  # type: ignore[index]
    # and an as_of inside the trash span keeps it hidden: the trash history is kept
    assert trashed_at is not None
    assert "d0014" not in hit_ids(
        recall(pipeline_client, pipeline_sim, "u003", Q, top_k=100, as_of=trashed_at.isoformat())
    )


def test_as_of_sees_folders_where_they_were(pipeline_client: TestClient, pipeline_sim: Simulator) -> None:
    before = pipeline_sim.drive.clock.now()
    pipeline_sim.drive.clock.advance(timedelta(hours=1))
    admin = {"Authorization": f"Bearer {pipeline_sim.tokens.admin_token}"}
    r = pipeline_client.patch("/api/v1/files/d0014", headers=admin, json={"folder": "/finance-secret"})
    assert r.status_code == 200
    # moved out of u001's reach
    assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, "u001", Q, top_k=100))
    # u001's own token: moved out of reach is taken away, for every as_of; the evaluation token replays then
    assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, "u001", Q, top_k=100, as_of=before.isoformat()))
    old = _hit(replay(pipeline_client, pipeline_sim, "u001", Q, as_of=before.isoformat()), "d0014")
    assert old is not None and old["path"] == "/projects/project-x/项目X技术方案.docx"
    # finance_manager sees it now
    assert "d0014" in hit_ids(recall(pipeline_client, pipeline_sim, "u004", Q, top_k=100))
    assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, "u004", Q, top_k=100, as_of=before.isoformat()))
    # a folder move: /rd/platform under /hr; u001 (rd, inheriting from /rd) loses it, u011 (hr) gains it
    plat = pipeline_sim.drive.folder_by_path("/rd/platform").folder_id
    pipeline_sim.drive.move_folder(plat, pipeline_sim.drive.folder_by_path("/hr").folder_id)
    just_before = (pipeline_sim.drive.clock.now() - timedelta(microseconds=1)).isoformat()
    q = "Platform Architecture Overview"
    assert "d0010" not in hit_ids(recall(pipeline_client, pipeline_sim, "u001", q, top_k=100))
    assert (
        _hit(recall(pipeline_client, pipeline_sim, "u011", q), "d0010")["path"]  # type: ignore[index]
        == "/hr/platform/Platform Architecture Overview.md"
    )
    assert "d0010" not in hit_ids(recall(pipeline_client, pipeline_sim, "u001", q, top_k=100, as_of=just_before))
    past = _hit(replay(pipeline_client, pipeline_sim, "u001", q, as_of=just_before), "d0010")
    assert past is not None and past["path"] == "/rd/platform/Platform Architecture Overview.md"
    assert "d0010" not in hit_ids(recall(pipeline_client, pipeline_sim, "u011", q, top_k=100, as_of=just_before))
    # its own grant moved with the folder
    assert _hit(recall(pipeline_client, pipeline_sim, "u010", q), "d0010") is not None


def test_as_of_sees_grants_valid_then(pipeline_client: TestClient, pipeline_sim: Simulator) -> None:
    pipeline_sim.drive.clock.advance(timedelta(days=1))
    t_add = pipeline_sim.drive.clock.now()
    pipeline_sim.drive.add_grant(
        GrantRec(
            "g-temp",
            "user:u012",
            ["preview"],
            "allow",
            folder_id=pipeline_sim.drive.folder_by_path("/projects").folder_id,
        )
    )
    pipeline_sim.drive.clock.advance(timedelta(days=1))
    pipeline_sim.drive.remove_grant("g-temp")
    pipeline_sim.drive.clock.advance(timedelta(days=1))
    # u012 (public clearance) sees no internal document; lift it to internal for this test
    pipeline_sim.drive.set_clearance("u012", 1)
    during = (t_add + timedelta(hours=12)).isoformat()
    # revoked since: u012's own token no longer gets it at any as_of; the evaluation token replays then
    assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, "u012", Q, top_k=100, as_of=during))
    assert "d0014" in hit_ids(replay(pipeline_client, pipeline_sim, "u012", Q, top_k=100, as_of=during))
    assert "d0014" not in hit_ids(recall(pipeline_client, pipeline_sim, "u012", Q, top_k=100))
    assert "d0014" not in hit_ids(
        recall(pipeline_client, pipeline_sim, "u012", Q, top_k=100, as_of=(t_add - timedelta(hours=1)).isoformat())
    )
    # the corpus's expiring grant g14 (u010 on /finance/budget, 2026-08-01..2026-10-01) stays time-bounded
    aug = datetime(2026, 8, 15, tzinfo=UTC).isoformat()
    # expired since
    assert "d0018" not in hit_ids(recall(pipeline_client, pipeline_sim, "u010", "项目X预算表", top_k=100, as_of=aug))
    assert "d0018" in hit_ids(replay(pipeline_client, pipeline_sim, "u010", "项目X预算表", top_k=100, as_of=aug))
    assert "d0018" not in hit_ids(recall(pipeline_client, pipeline_sim, "u010", "项目X预算表", top_k=100))
