"""Finding 4: a request that fails changes nothing. A failure is injected into every write path after
validation (the drive's change-feed record, written after the change itself) and the drive's whole state,
the change feed and the index must be exactly as before; the same request then succeeds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drivebench.drive.state import Drive
from drivebench.simulator.backend import Simulator
from tests.support.security import h


def state(sim: Simulator) -> str:
    d = sim.drive
    with d.lock:
        return repr(
            (
                sorted(d.documents.items()),
                sorted(d.grants.items()),
                d.removed_grants,
                sorted(d.folders.items()),
                sorted(d._children.items()),
                sorted(d.users.items()),
                d.retention,
                d.clock.now(),
                d.changes,
                sorted(d.blobs),
                sim.store.n_alive,
            )
        )


def _upload(c: TestClient, sim: Simulator) -> Any:
    return c.post("/api/v1/files", headers=h(sim, "admin"), files={"file": ("x.md", b"# x\n")}, data={"folder": "/rd"})


def _version(c: TestClient, sim: Simulator) -> Any:
    return c.post("/api/v1/files/d0005/versions", headers=h(sim, "admin"), files={"file": ("a.docx", b"new")})


WRITES: dict[str, Callable[[TestClient, Simulator], Any]] = {
    "upload": _upload,
    "new-version": _version,
    "restore": lambda c, s: c.post("/api/v1/files/d0014/versions/d0014-v1/restore", headers=h(s, "admin")),
    "rename": lambda c, s: c.patch("/api/v1/files/d0005", json={"name": "renamed.docx"}, headers=h(s, "admin")),
    "move": lambda c, s: c.patch("/api/v1/files/d0005", json={"folder": "/hr"}, headers=h(s, "admin")),
    "trash": lambda c, s: c.post("/api/v1/files/d0005/trash", headers=h(s, "admin")),
    "purge": lambda c, s: c.delete("/api/v1/files/d0005", headers=h(s, "admin")),
    "add-grant": lambda c, s: c.post(
        "/api/permissions/grants",
        json={"path": "/rd", "subject": {"kind": "user", "id": "u012"}, "actions": ["preview"]},
        headers=h(s, "admin"),
    ),
    "remove-grant": lambda c, s: c.delete("/api/permissions/grants/g02", headers=h(s, "admin")),
    "move-folder": lambda c, s: c.post(
        "/api/permissions/move", json={"path": "/rd/platform", "to": "/hr"}, headers=h(s, "admin")
    ),
    "move-document": lambda c, s: c.post(
        "/api/permissions/move", json={"path": "/rd/Code Review Guidelines.md", "to": "/hr"}, headers=h(s, "admin")
    ),
    "retention": lambda c, s: c.put("/api/v1/settings/retention", json={"versions_kept": 1}, headers=h(s, "admin")),
    "user-upload": lambda c, s: c.post(
        "/api/v1/files",
        headers=h(s, "u003"),
        files={"file": ("y.md", b"# y\n")},
        data={"folder": "/projects/project-x"},
    ),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_failed_write_changes_nothing(
    module_client: TestClient, module_sim: Simulator, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    write = WRITES[name]
    before = state(module_sim)
    feed = module_client.get("/api/v1/changes", params={"limit": 1000}, headers=h(module_sim, "admin")).json()
    real_record = Drive._record

    def failing_record(self: Drive, kind: str, **kw: object) -> object:
        real_record(self, kind, **kw)  # the change and its feed entry are made...
        raise RuntimeError("injected failure after the change")  # ...and then the write fails

    monkeypatch.setattr(Drive, "_record", failing_record)
    r = write(module_client, module_sim)
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal-error", (name, r.status_code, r.text)
    monkeypatch.setattr(Drive, "_record", real_record)
    assert state(module_sim) == before, name
    assert module_client.get("/api/v1/changes", params={"limit": 1000}, headers=h(module_sim, "admin")).json() == feed
    ok = write(module_client, module_sim)  # nothing is wedged: the same request now succeeds
    assert ok.status_code in (200, 201), (name, ok.text)
    assert state(module_sim) != before


def test_a_failed_untrash_changes_nothing(
    module_client: TestClient, module_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert module_client.post("/api/v1/files/d0005/trash", headers=h(module_sim, "admin")).status_code == 200
    before = state(module_sim)
    monkeypatch.setattr(Drive, "bump_content", lambda self: (_ for _ in ()).throw(RuntimeError("injected")))
    assert module_client.post("/api/v1/files/d0005/untrash", headers=h(module_sim, "admin")).status_code == 500
    monkeypatch.undo()
    assert state(module_sim) == before
    assert module_client.post("/api/v1/files/d0005/untrash", headers=h(module_sim, "admin")).status_code == 200


def test_a_bad_retention_setting_is_not_stored(module_client: TestClient, module_sim: Simulator) -> None:
    """It was stored although the call answered 500, and every later upload answered 500 (stored anyway)."""
    before = state(module_sim)
    r = module_client.put("/api/v1/settings/retention", json={"days": 1e300}, headers=h(module_sim, "admin"))
    assert r.status_code == 422, r.text
    assert state(module_sim) == before
    assert _upload(module_client, module_sim).status_code == 201
