"""Finding 1: ``as_of`` widened access. A principal acting as itself sees at T only what it could preview at
T **and** may preview now; an ``as_of`` after the clock is a 400; the evaluation token replays T with the
permissions in force at T. Every surface: recall, answer, MCP tools, effective permissions, change feed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import Simulator
from tests.support.pit import Q, revoke_after_a_day
from tests.support.security import h, mcp_call

BUDGET = "项目X预算表"
AUG = datetime(2026, 8, 15, tzinfo=UTC).isoformat()  # inside g14 (u010 preview /finance/budget, Aug-Oct 2026)


def _ids(client: TestClient, sim: Simulator, who: str, query: str, path: str = "/api/mcp/recall", **body) -> list[str]:
    r = client.post(path, headers=h(sim, who), json={"query": query, "top_k": 100, **body})
    assert r.status_code == 200, r.text
    return [x["doc_id"] for x in r.json()["results"]]


def test_revoked_grant_is_gone_for_every_past_as_of_on_recall_and_answer(
    module_client: TestClient, module_sim: Simulator
) -> None:
    during = revoke_after_a_day(module_sim)
    for path in ("/api/mcp/recall", "/api/mcp/answer"):
        assert "d0014" not in _ids(module_client, module_sim, "u012", Q, path, as_of=during)
        # replay: in force then
        assert "d0014" in _ids(module_client, module_sim, "eval", Q, path, as_of=during, user_id="u012")
    assert module_sim.audit and module_sim.audit[-1]["as"] == "user:u012"  # the replay is audited


def test_expired_grant_is_gone_for_the_users_own_token(module_client: TestClient, module_sim: Simulator) -> None:
    assert "d0018" not in _ids(module_client, module_sim, "u010", BUDGET, as_of=AUG)
    assert "d0018" in _ids(module_client, module_sim, "eval", BUDGET, as_of=AUG, user_id="u010")


def test_future_as_of_is_a_400_everywhere(module_client: TestClient, module_sim: Simulator) -> None:
    future = (module_sim.drive.clock.now() + timedelta(days=30)).isoformat()
    for who, extra in (("u008", {}), ("eval", {"user_id": "u008"})):
        for path in ("/api/mcp/recall", "/api/mcp/answer"):
            r = module_client.post(path, headers=h(module_sim, who), json={"query": "合同", "as_of": future, **extra})
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid-request", r.text
        params = {"path": "/finance/contracts", "as_of": future, **extra}
        r = module_client.get("/api/permissions/effective", params=params, headers=h(module_sim, who))
        assert r.status_code == 400, r.text
        err, text, _ = mcp_call(module_sim, who, "get_document", {"doc_id": "d0019", "as_of": future, **extra})
        assert err and "invalid-request (400):" in text, text


def test_mcp_get_document_and_versions_follow_the_rule(module_client: TestClient, module_sim: Simulator) -> None:
    during = revoke_after_a_day(module_sim)
    for tool in ("get_document", "list_versions"):
        err, text, _ = mcp_call(module_sim, "u012", tool, {"doc_id": "d0014", "as_of": during})
        assert err and "not-found (404):" in text, text
        err, text, _ = mcp_call(module_sim, "u012", tool, {"doc_id": "d0099", "as_of": during})  # missing: same answer
        assert err and "not-found (404):" in text, text
        err, text, _ = mcp_call(module_sim, "eval", tool, {"doc_id": "d0014", "as_of": during, "user_id": "u012"})
        assert not err, text
    err, text, _ = mcp_call(module_sim, "u010", "get_document", {"doc_id": "d0018", "as_of": AUG})
    assert err and "not-found (404):" in text, text


def test_mcp_get_document_uses_the_tree_as_of_then(module_client: TestClient, module_sim: Simulator) -> None:
    """Moved into /finance-secret: u004 (finance_manager) may preview it now but could not before the move."""
    before = module_sim.drive.clock.now()
    module_sim.drive.clock.advance(timedelta(hours=1))
    r = module_client.patch("/api/v1/files/d0014", headers=h(module_sim, "admin"), json={"folder": "/finance-secret"})
    assert r.status_code == 200, r.text
    err, text, _ = mcp_call(module_sim, "u004", "get_document", {"doc_id": "d0014"})
    assert not err, text
    err, text, _ = mcp_call(module_sim, "u004", "get_document", {"doc_id": "d0014", "as_of": before.isoformat()})
    assert err and "not-found (404):" in text, text
    # the evaluation token, as u003 (who could preview it then), sees it where it was then
    err, text, got = mcp_call(
        module_sim, "eval", "get_document", {"doc_id": "d0014", "as_of": before.isoformat(), "user_id": "u003"}
    )
    assert not err and got["path"] == "/projects/project-x/项目X技术方案.docx", text


def test_effective_permissions_as_of_do_not_bring_back_a_revoked_grant(
    module_client: TestClient, module_sim: Simulator
) -> None:
    during = revoke_after_a_day(module_sim)
    path = "/projects/project-x/项目X技术方案.docx"
    own = module_client.get(
        "/api/permissions/effective", params={"path": path, "as_of": during}, headers=h(module_sim, "u012")
    )
    assert own.status_code == 404, own.text  # it may not list it now: as if it did not exist
    replay = module_client.get(
        "/api/permissions/effective",
        params={"path": path, "as_of": during, "user_id": "u012"},
        headers=h(module_sim, "eval"),
    )
    assert replay.status_code == 200 and "preview" in replay.json()["allowed"], replay.text


def test_effective_marks_what_was_taken_away_as_revoked(module_client: TestClient, module_sim: Simulator) -> None:
    """u012 keeps `list` on /projects (a grant that stays) but loses preview: preview is reported revoked."""
    folder = module_sim.drive.folder_by_path("/projects").folder_id
    module_sim.drive.add_grant(GrantRec("g-list", "user:u012", ["list"], "allow", folder_id=folder))
    during = revoke_after_a_day(module_sim)
    path = "/projects/project-x/项目X技术方案.docx"
    r = module_client.get(
        "/api/permissions/effective", params={"path": path, "as_of": during}, headers=h(module_sim, "u012")
    )
    assert r.status_code == 200, r.text
    decisions = {a["action"]: a for a in r.json()["actions"]}
    assert decisions["preview"]["allowed"] is False and decisions["preview"]["reason"] == "revoked"
    assert "preview" not in r.json()["allowed"]


def test_change_feed_hides_entries_from_before_the_user_could_list(
    module_client: TestClient, module_sim: Simulator
) -> None:
    """A document created where u001 could not list it, then moved into /rd: its creation stays hidden."""
    r = module_client.post(
        "/api/v1/files",
        headers=h(module_sim, "admin"),
        files={"file": ("plan.md", b"# secret plan\n")},
        data={"folder": "/finance-secret", "secret_level": "internal"},
    )
    assert r.status_code == 201, r.text
    doc_id = r.json()["doc_id"]
    r = module_client.patch(f"/api/v1/files/{doc_id}", headers=h(module_sim, "admin"), json={"folder": "/rd"})
    assert r.status_code == 200, r.text
    feed = module_client.get("/api/v1/changes", params={"limit": 1000}, headers=h(module_sim, "u001")).json()["changes"]
    kinds = [c["kind"] for c in feed if c["doc_id"] == doc_id]
    assert kinds == ["moved"], kinds
    everything = module_client.get("/api/v1/changes", params={"limit": 1000}, headers=h(module_sim, "admin")).json()[
        "changes"
    ]
    assert [c["kind"] for c in everything if c["doc_id"] == doc_id] == ["created", "moved"]
