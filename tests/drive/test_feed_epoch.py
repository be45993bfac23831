"""The change feed's epoch: a reset (or a seed, or a restart without a data directory) starts another history of
the feed, and a cursor from the old one is refused (410 ``resync-required``) instead of being answered from the
new one, where it would skip entries and hide that every grant read before may be gone. A durable drive keeps
its epoch across restarts. Clients that send no epoch keep the old behaviour."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from drivebench.simulator.backend import Simulator
from drivebench.simulator.persistence import open_durable
from tests.support.sims import HASH, auth, client_for, upload


def _feed(client: TestClient, sim: Simulator, who: str, **params: object) -> dict:
    r = client.get("/api/v1/changes", headers=auth(sim, who), params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _grant_preview(client: TestClient, sim: Simulator, path: str, user: str) -> None:
    body = {"path": path, "subject": {"kind": "user", "id": user}, "actions": ["preview"]}
    r = client.post("/api/permissions/grants", headers=auth(sim, "admin"), json=body)
    assert r.status_code == 201, r.text


def test_a_cursor_from_before_a_reset_is_refused_even_when_the_new_feed_is_longer(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    paths = sorted(fresh_sim.drive.doc_path(d) for d in fresh_sim.drive.documents.values())[:3]
    for path in paths:
        _grant_preview(fresh_client, fresh_sim, path, "u012")
    before = _feed(fresh_client, fresh_sim, "admin", limit=1)
    cursor, epoch = before["latest_cursor"], before["epoch"]
    assert cursor == 3 and re.fullmatch(r"[0-9a-f]{32}", epoch)
    assert _feed(fresh_client, fresh_sim, "admin", cursor=cursor, epoch=epoch)["changes"] == []
    assert fresh_client.post("/_sim/reset", headers=auth(fresh_sim, "admin")).status_code == 200
    for i in range(5):  # the new history outgrows the old cursor: a past-the-end check alone cannot tell
        assert upload(fresh_client, fresh_sim, "u009", "/it", f"after-reset-{i}.md", b"# new").status_code == 201
    after = _feed(fresh_client, fresh_sim, "admin", limit=1)
    assert after["latest_cursor"] >= 5 and after["epoch"] != epoch
    r = fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "admin"), params={"cursor": cursor, "epoch": epoch})
    assert r.status_code == 410, r.text
    error = r.json()["error"]
    assert error["code"] == "resync-required" and not re.search(r"\d", error["message"].replace("cursor 0", ""))
    # the new epoch is honoured; a client that sends none is answered as before
    assert len(_feed(fresh_client, fresh_sim, "admin", cursor=0, epoch=after["epoch"])["changes"]) >= 5
    assert _feed(fresh_client, fresh_sim, "admin", cursor=cursor)["epoch"] == after["epoch"]
    spec = fresh_client.get("/openapi.json").json()["paths"]["/api/v1/changes"]["get"]
    assert "410" in spec["responses"] and "epoch" in {p["name"] for p in spec["parameters"]}


def test_a_users_cursor_from_before_a_reset_is_refused(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    for i in range(2):
        assert upload(fresh_client, fresh_sim, "u009", "/it", f"before-{i}.md", b"# old").status_code == 201
    before = _feed(fresh_client, fresh_sim, "u009")
    cursor, epoch = before["next_cursor"], before.get("epoch")  # (a drive without epochs fails below)
    assert fresh_client.post("/_sim/reset", headers=auth(fresh_sim, "admin")).status_code == 200
    for i in range(3):
        assert upload(fresh_client, fresh_sim, "u009", "/it", f"after-{i}.md", b"# new").status_code == 201
    # the user's opaque cursors are keyed by the epoch: the old one means nothing in the new history
    stale = fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "u009"), params={"cursor": cursor})
    assert stale.status_code == 409, stale.text
    assert len(before["changes"]) == 2 and before["latest_cursor"] == cursor
    told = fresh_client.get(
        "/api/v1/changes", headers=auth(fresh_sim, "u009"), params={"cursor": cursor, "epoch": epoch}
    )
    assert told.status_code == 410 and told.json()["error"]["code"] == "resync-required"
    again = _feed(fresh_client, fresh_sim, "u009")
    assert again["epoch"] != epoch and [c["doc_id"] for c in again["changes"]] != []
    assert len(again["changes"]) == 3


def test_an_epoch_that_is_not_one_is_a_clear_error(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    for value in ("", "x" * 65):
        r = fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "admin"), params={"epoch": value})
        assert r.status_code in (400, 422) and "epoch" in r.text, (value, r.status_code, r.text)
    r = fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "admin"), params={"epoch": "nope"})
    assert r.status_code == 410


def test_a_durable_drive_keeps_its_epoch_across_a_restart_and_a_reset_changes_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    sim = open_durable(data_dir, "seed", HASH, start_saver=False)
    try:
        client = client_for(sim)
        assert upload(client, sim, "u009", "/it", "kept.md", b"# kept").status_code == 201
        page = _feed(client, sim, "admin")
        cursor, epoch = page["next_cursor"], page["epoch"]
    finally:
        sim.close()
    sim = open_durable(data_dir, "seed", HASH, start_saver=False)
    try:
        client = client_for(sim)
        # the same history: the cursor resumes where it was
        assert _feed(client, sim, "admin", cursor=cursor, epoch=epoch) == {
            "changes": [],
            "next_cursor": cursor,
            "has_more": False,
            "latest_cursor": cursor,
            "epoch": epoch,
        }
        assert client.post("/_sim/reset", headers=auth(sim, "admin")).status_code == 200
        r = client.get("/api/v1/changes", headers=auth(sim, "admin"), params={"cursor": 0, "epoch": epoch})
        assert r.status_code == 410, r.text
    finally:
        sim.close()
