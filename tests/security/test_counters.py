"""Counters anyone can read: nothing a user reads counts what they cannot see. u007 (who may upload into
/rd/platform and may not list /finance-secret) watches every number it is shown while the admin writes
where u007 cannot look: ``/healthz``, recall's (answer's, MCP's) ``snapshot``/``policy_version``/``chunk_id``,
the change feed's cursors and ``seq``, upload and grant ids, and the feed's error for a cursor past its end."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from drivebench.drive.tokens import OpaqueInts
from drivebench.simulator.backend import Simulator
from tests.support.security import h, mcp_call
from tests.support.sims import client_for, fresh_sim

USER, MINE, HIDDEN = "u007", "/rd/platform", "/finance-secret"
WORD = "quokkaword"
TIME_FIELDS = frozenset({"as_of", "at", "created_at"})  # the simulated clock: see the docs' residual note


def _upload(client: TestClient, sim: Simulator, who: str, folder: str, name: str) -> dict[str, Any]:
    body = f"# {name}\n\n{WORD} notes for {name}".encode()
    r = client.post("/api/v1/files", headers=h(sim, who), files={"file": (name, body)}, data={"folder": folder})
    assert r.status_code == 201, r.text
    return r.json()


def _hidden_writes(client: TestClient, sim: Simulator, n: int = 3) -> None:
    """The admin uploads ``n`` documents u007 may not list and grants on one of them."""
    assert client.get("/api/v1/files", params={"folder": HIDDEN}, headers=h(sim, USER)).status_code == 404
    for i in range(n):
        doc = _upload(client, sim, "admin", HIDDEN, f"hidden-{i}-{len(sim.drive.changes)}.md")
    grant = {"path": doc["path"], "subject": {"kind": "user", "id": "u004"}, "actions": ["preview"]}
    assert client.post("/api/permissions/grants", headers=h(sim, "admin"), json=grant).status_code == 201


def _let_user_manage(client: TestClient, sim: Simulator) -> None:
    """u007 may add grants on what it uploads into /rd/platform (so a grant it adds is answered 201)."""
    grant = {"path": MINE, "subject": {"kind": "user", "id": USER}, "actions": ["manage"]}
    assert client.post("/api/permissions/grants", headers=h(sim, "admin"), json=grant).status_code == 201


def _without_time(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_time(v) for k, v in value.items() if k not in TIME_FIELDS}
    if isinstance(value, list):
        return [_without_time(v) for v in value]
    return value


def _recall_views(client: TestClient, sim: Simulator) -> list[Any]:
    body = {"query": WORD, "top_k": 5}
    views = []
    for path in ("/api/mcp/recall", "/api/mcp/answer"):
        r = client.post(path, headers=h(sim, USER), json=body)
        assert r.status_code == 200, r.text
        views.append(_without_time(r.json()))
    is_error, text, data = mcp_call(sim, USER, "recall", body)
    assert not is_error, text
    views.append(_without_time(data))
    return views


def _feed(client: TestClient, sim: Simulator, who: str = USER, **params: int) -> dict[str, Any]:
    r = client.get("/api/v1/changes", headers=h(sim, who), params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_healthz_counts_need_the_admin_token(module_client: TestClient, module_sim: Simulator) -> None:
    for headers in ({}, h(module_sim, USER), {"Authorization": "Bearer not-a-token"}):
        r = module_client.get("/healthz", headers=headers)
        assert r.status_code == 200 and r.json() == {"status": "ok"}, r.text
    # the evaluation token learns which corpus it evaluates against, and nothing counted
    served = module_client.get("/healthz", headers=h(module_sim, "eval")).json()
    assert served == {"status": "ok", "corpus": module_sim.drive.name, "corpus_version": "seed@1"}, served
    full = module_client.get("/healthz", headers=h(module_sim, "admin")).json()
    assert full["documents"] == len(module_sim.drive.documents) and full["chunks"] == module_sim.store.n_alive


def test_recall_answer_and_mcp_do_not_move_when_the_admin_writes_what_the_user_cannot_see(
    module_client: TestClient, module_sim: Simulator
) -> None:
    _upload(module_client, module_sim, USER, MINE, "mine.md")
    before = _recall_views(module_client, module_sim)
    eval_before = module_client.post(
        "/api/mcp/recall", headers=h(module_sim, "eval"), json={"query": WORD, "user_id": USER}
    ).json()
    _hidden_writes(module_client, module_sim)
    assert _recall_views(module_client, module_sim) == before  # every field, counters and chunk ids included
    recall = before[0]
    assert recall["snapshot"] is None and recall["policy_version"] is None
    # the evaluation token still sees the global ones, and they moved
    eval_after = module_client.post(
        "/api/mcp/recall", headers=h(module_sim, "eval"), json={"query": WORD, "user_id": USER}
    ).json()
    assert eval_after["snapshot"] != eval_before["snapshot"] and eval_after["policy_version"] > 0
    assert eval_after["policy_version"] == module_sim.drive.policy_version


def test_chunk_ids_a_user_sees_are_not_the_global_rows(module_client: TestClient, module_sim: Simulator) -> None:
    mine = _upload(module_client, module_sim, USER, MINE, "rows.md")
    body = {"query": f"{WORD} rows.md", "top_k": 3}
    own = module_client.post("/api/mcp/recall", headers=h(module_sim, USER), json=body).json()["results"]
    served = module_client.post("/api/mcp/recall", headers=h(module_sim, "eval"), json={**body, "user_id": USER})
    rows = {x["doc_id"]: x["chunk_id"] for x in served.json()["results"]}
    assert mine["doc_id"] in rows and rows[mine["doc_id"]] in module_sim.store.by_version[mine["version_id"]]
    shown = {x["doc_id"]: x["chunk_id"] for x in own}
    assert shown.keys() == rows.keys() and all(shown[d] != rows[d] for d in rows)
    assert all(0 <= v < 2**53 for v in shown.values())  # exact in any JSON reader


def test_the_change_feed_does_not_count_hidden_entries(module_client: TestClient, module_sim: Simulator) -> None:
    first = _upload(module_client, module_sim, USER, MINE, "feed-1.md")
    before = _feed(module_client, module_sim, limit=1000)
    assert [c["doc_id"] for c in before["changes"]] == [first["doc_id"]]
    _hidden_writes(module_client, module_sim)
    after = _feed(module_client, module_sim, limit=1000)
    assert _without_time(after) == _without_time(before)  # latest_cursor and every seq unchanged
    assert _feed(module_client, module_sim, cursor=before["next_cursor"]) == {
        "changes": [],
        "next_cursor": before["next_cursor"],
        "has_more": False,
        "latest_cursor": before["latest_cursor"],
        "epoch": before["epoch"],  # hidden writes move no number, and not the epoch either
    }
    second = _upload(module_client, module_sim, USER, MINE, "feed-2.md")
    _hidden_writes(module_client, module_sim)
    third = _upload(module_client, module_sim, USER, MINE, "feed-3.md")
    # one entry a page: exactly as many pages as entries the user may see, however many hidden lie between
    pages, cursor = [], 0
    while True:
        page = _feed(module_client, module_sim, cursor=cursor, limit=1)
        pages.append([c["doc_id"] for c in page["changes"]])
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert pages == [[first["doc_id"]], [second["doc_id"]], [third["doc_id"]]]
    assert cursor == page["latest_cursor"] == page["changes"][-1]["seq"]
    whole = _feed(module_client, module_sim, limit=1000)
    seqs = [c["seq"] for c in whole["changes"]]
    global_seqs = [c.seq for c in module_sim.drive.changes if c.doc_id in {first["doc_id"], third["doc_id"]}]
    assert not set(seqs) & set(global_seqs) and max(seqs) >= 2**32  # opaque, not positions in the feed
    assert _feed(module_client, module_sim, "admin", limit=1000)["latest_cursor"] == len(module_sim.drive.changes)


def test_no_feed_error_states_the_feed_length(module_client: TestClient, module_sim: Simulator) -> None:
    messages = set()
    for writes in (0, 2):
        if writes:
            _hidden_writes(module_client, module_sim, writes)
        length = len(module_sim.drive.changes)
        for who, cursor in (("admin", length + 1), ("admin", 10**6), (USER, 7), (USER, 2**52 - 1)):
            r = module_client.get("/api/v1/changes", headers=h(module_sim, who), params={"cursor": cursor})
            assert r.status_code == 409, r.text
            message = r.json()["error"]["message"]
            # no number but the cursor sent back and "start again from 0"
            assert set(re.findall(r"\d+", message)) <= {str(cursor), "0"}, message
            if who == USER:
                messages.add(message)
    assert len(messages) == 1  # a user's bad cursor gets one answer whatever the feed holds


def test_upload_and_grant_ids_are_not_sequences(module_client: TestClient, module_sim: Simulator) -> None:
    _let_user_manage(module_client, module_sim)
    a = _upload(module_client, module_sim, USER, MINE, "ids-a.md")
    _hidden_writes(module_client, module_sim)
    b = _upload(module_client, module_sim, USER, MINE, "ids-b.md")
    for doc in (a, b):
        assert re.fullmatch(r"n[0-9a-f]{12}", doc["doc_id"]), doc
        assert doc["version_id"] == f"{doc['doc_id']}-v1"  # version numbers count the document's own versions
    grants = []
    for doc in (a, b):
        grant = {"path": doc["path"], "subject": {"kind": "user", "id": "u001"}, "actions": ["preview"]}
        r = module_client.post("/api/permissions/grants", headers=h(module_sim, USER), json=grant)
        assert r.status_code == 201, r.text
        assert r.json()["policy_version"] is None  # the global count of permission changes is not shown
        grants.append(r.json()["grant"]["grant_id"])
    assert all(re.fullmatch(r"g-[0-9a-f]{16}", g) for g in grants), grants
    # folders created after the load (which users meet in feed entries and grants) count no one's folders either
    folders = []
    for name in ("ids-folder-a", "ids-folder-b"):
        r = module_client.post("/api/v1/folders", headers=h(module_sim, "admin"), json={"path": f"/rd/{name}"})
        assert r.status_code == 201, r.text
        folders.append(module_sim.drive.folder_by_path(f"/rd/{name}").folder_id)
    assert all(re.fullmatch(r"fld-[0-9a-f]{12}", f) for f in folders), folders


def test_a_user_chosen_grant_id_answers_alike_taken_or_free(module_client: TestClient, module_sim: Simulator) -> None:
    _let_user_manage(module_client, module_sim)
    doc = _upload(module_client, module_sim, USER, MINE, "chosen.md")
    hidden = _upload(module_client, module_sim, "admin", HIDDEN, "chosen-hidden.md")
    hidden_grant = {"path": hidden["path"], "subject": {"kind": "user", "id": "u004"}, "actions": ["preview"]}
    r = module_client.post(
        "/api/permissions/grants", headers=h(module_sim, "admin"), json={**hidden_grant, "grant_id": "g-hidden-one"}
    )
    assert r.status_code == 201, r.text
    answers = []
    for gid in ("g-hidden-one", "g-fresh-one", "g01"):
        grant = {
            "path": doc["path"],
            "subject": {"kind": "user", "id": "u001"},
            "actions": ["preview"],
            "grant_id": gid,
        }
        r = module_client.post("/api/permissions/grants", headers=h(module_sim, USER), json=grant)
        answers.append((r.status_code, r.json()["error"]["message"]))
    assert answers[0] == answers[1] == answers[2] and answers[0][0] == 400, answers
    assert "g-fresh-one" not in module_sim.drive.grants  # refused: nothing stored
    grant = {"path": doc["path"], "subject": {"kind": "user", "id": "u001"}, "actions": ["preview"]}
    assert module_client.post("/api/permissions/grants", headers=h(module_sim, USER), json=grant).status_code == 201


def test_hidden_writes_leave_a_users_answers_identical_to_a_world_without_them() -> None:
    """Two drives, the same user actions, hidden writes in one only: everything the user reads about the
    drive (what recall finds, its null counters, its feed) is the same; only opaque values and the clock
    differ."""
    worlds = []
    for hidden in (False, True):
        sim = fresh_sim()
        client = client_for(sim)
        _upload(client, sim, USER, MINE, "world-1.md")
        if hidden:
            _hidden_writes(client, sim, 4)
        _upload(client, sim, USER, MINE, "world-2.md")
        recall = client.post("/api/mcp/recall", headers=h(sim, USER), json={"query": WORD, "top_k": 5}).json()
        feed = _feed(client, sim, limit=1000)
        worlds.append(
            (
                # names, not scores: BM25 statistics over hidden documents are a side channel of their own
                sorted(x["name"] for x in recall["results"]),
                recall["snapshot"],
                recall["policy_version"],
                [c["kind"] for c in feed["changes"]],
                feed["has_more"],
            )
        )
    assert worlds[0] == worlds[1]


@given(st.integers(0, 2**52 - 1), st.binary(min_size=16, max_size=64))
@settings(max_examples=300, deadline=None)
def test_opaque_numbers_round_trip_and_stay_json_exact(n: int, key: bytes) -> None:
    codec = OpaqueInts(key)
    value = codec.encode(n)
    assert 0 <= value < 2**52 and codec.decode(value) == n
    assert codec.decode(-1) is None and codec.decode(2**52) is None  # out of the domain: no position at all
