"""Restart equality over a real ``drivebench serve --data-dir`` subprocess: the same queries before and
after a restart give identical responses (results, scores, chunk ids, paths, snapshot), after a clean
stop (SIGTERM: final index snapshot) and after a SIGKILL (index files behind: the feed is replayed)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.milvus import backend_params, index_spec, kind
from tests.support.serverproc import ServerProc

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUERIES: list[tuple[str, str, str | None]] = [
    ("u001", "项目X的技术方案审批人", None),
    ("u001", "项目X的技术方案审批人", "2026-08-01T00:00:00+00:00"),
    ("u003", "项目X 方案 审批", None),
    ("u009", "restart-marker 运维", None),
    ("u009", "restart-marker 运维", "2026-11-01T00:00:00.000002+00:00"),
    ("u010", "platform architecture restart-marker", None),
    ("u005", "预算 budget", None),
    ("u004", "融资计划", "2026-10-15T00:00:00+00:00"),
    ("u011", "员工手册 年假", None),
    ("u007", "encryption module design", None),
]


def run_queries(srv: ServerProc) -> list[Any]:
    out: list[Any] = []
    with httpx.Client(base_url=srv.url, timeout=60) as c:
        for user, query, as_of in QUERIES:
            body: dict[str, Any] = {"query": query, "top_k": 10}
            if as_of:
                body["as_of"] = as_of
            r = c.post("/api/mcp/recall", json=body, headers=srv.headers(user))
            assert r.status_code == 200, r.text
            out.append(r.json())
        for folder in ("/it", "/rd/platform", "/projects/project-x"):
            out.append(c.get("/api/v1/files", params={"folder": folder}, headers=srv.headers("admin")).json())
        out.append(c.get("/api/v1/changes", params={"limit": 1000}, headers=srv.headers("admin")).json())
    return out


def writes(srv: ServerProc, tag: str) -> None:
    with httpx.Client(base_url=srv.url, timeout=60) as c:

        def up(user: str, folder: str, name: str, data: bytes) -> dict:
            r = c.post(
                "/api/v1/files", headers=srv.headers(user), files={"file": (name, data)}, data={"folder": folder}
            )
            assert r.status_code == 201, r.text
            return r.json()

        a = up("u009", "/it", f"运维-{tag}.md", f"# 运维 {tag}\nrestart-marker 运维手册 {tag}".encode())
        b = up("u010", "/rd/platform", f"arch-{tag}.md", f"# Platform arch {tag}\nrestart-marker platform".encode())
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("../x.txt", "restart-marker")
        assert up("u009", "/it", f"evil-{tag}.zip", buf.getvalue())["index"]["state"] == "rejected"
        r = c.post(
            f"/api/v1/files/{a['doc_id']}/versions",
            headers=srv.headers("u009"),
            files={"file": ("x.md", f"# 运维 {tag} v2\nrestart-marker 运维 备份 {tag}".encode())},
        )
        assert r.status_code == 201
        assert (
            c.post(
                f"/api/v1/files/{a['doc_id']}/versions/{a['version_id']}/restore", headers=srv.headers("u009")
            ).status_code
            == 201
        )
        assert (
            c.patch(
                f"/api/v1/files/{b['doc_id']}", headers=srv.headers("admin"), json={"name": f"arch2-{tag}.md"}
            ).status_code
            == 200
        )
        assert c.patch("/api/v1/files/d0010", headers=srv.headers("admin"), json={"folder": "/it"}).status_code in (
            200,
            409,
        )
        assert c.post(f"/api/v1/files/{b['doc_id']}/trash", headers=srv.headers("admin")).status_code == 200
        assert c.post("/_sim/clock/advance", headers=srv.headers("admin"), json={"minutes": 5}).status_code == 200
        assert c.post(f"/api/v1/files/{b['doc_id']}/untrash", headers=srv.headers("admin")).status_code == 200
        extra = up("u009", "/it", f"tmp-{tag}.md", b"# tmp\nrestart-marker tmp")
        assert c.delete(f"/api/v1/files/{extra['doc_id']}", headers=srv.headers("admin")).status_code == 200


@backend_params  # the same restart and SIGKILL checks with the vectors in milvus-lite and in a Milvus server
def test_same_answers_after_sigterm_and_after_sigkill(tmp_path: Path, index: str) -> None:
    srv = ServerProc(tmp_path / "data", index=index_spec(index))
    try:
        srv.start()
        initial = srv.get("/_sim/stats").json()
        writes(srv, "a")
        before = run_queries(srv)
        stats = srv.get("/_sim/stats").json()
        assert stats["snapshot"] != initial["snapshot"]

        srv.stop()  # clean: the final index snapshot is written
        srv.start()
        assert run_queries(srv) == before
        after = srv.get("/_sim/stats").json()
        assert after["snapshot"] == stats["snapshot"]
        assert after["durable"]["rebuilt_index_at_start"] is False
        assert after["durable"]["replayed_changes_at_start"] == 0
        srv.stop()

        # SIGKILL with the index files behind the metadata: the restart replays the change feed
        srv.start(env={"DRIVEBENCH_INDEX_SAVE_INTERVAL": "600"})
        writes(srv, "b")
        with httpx.Client(
            base_url=srv.url, timeout=60, headers=srv.headers("u009")
        ) as c:  # after the purge's checkpoint
            for i in range(3):
                data = f"# late {i}\nrestart-marker 运维 late {i}".encode()
                r = c.post("/api/v1/files", files={"file": (f"late-{i}.md", data)}, data={"folder": "/it"})
                assert r.status_code == 201
                doc = r.json()["doc_id"]
                r = c.post(f"/api/v1/files/{doc}/versions", files={"file": ("v.md", data + b" v2")})
                assert r.status_code == 201
        before_kill = run_queries(srv)
        stats = srv.get("/_sim/stats").json()
        assert stats["durable"]["index_file_seq"] < stats["durable"]["meta_seq"]
        srv.kill()
        srv.start()
        assert run_queries(srv) == before_kill
        after = srv.get("/_sim/stats").json()
        assert after["snapshot"] == stats["snapshot"]
        assert (
            after["durable"]["replayed_changes_at_start"]
            == stats["durable"]["meta_seq"] - stats["durable"]["index_file_seq"]
            > 0
        )
        assert after["durable"]["rebuilt_index_at_start"] is False
        assert after["index_backend"]["backend"] == kind(index)
        assert after["index_backend"]["spec"] == index_spec(index)
        if kind(index) == "milvus":  # the collection holds exactly the live chunks after the replay
            assert after["index_backend"]["rows"] == after["chunks"] and after["index_backend"]["pending"] == 0
            assert after["index_backend"]["id_list_searches"] == 0
        print(
            "restart-test",
            json.dumps(
                {
                    "queries_compared": len(QUERIES) + 4,
                    "changes": after["changes"],
                    "replayed_after_sigkill": after["durable"]["replayed_changes_at_start"],
                    "snapshot": after["snapshot"],
                }
            ),
        )
    finally:
        srv.kill()
