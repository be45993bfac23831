"""``drivebench serve --workers N``: read-only replica processes. What a replica serves answers as
one process does; every write, the control plane, MCP and the console answer 409 in the common error shape
and change nothing."""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.drive.tokens import TokenRegistry
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.search.index.embedders import EMBED_THREADS_ENV
from drivebench.server.api import create_app
from drivebench.server.process import (
    FollowingReplica,
    ReadOnlyReplica,
    ReplicaSpec,
    replica_refusal,
    start_replicas,
)
from drivebench.simulator.backend import Simulator


@pytest.mark.parametrize(
    ("method", "path", "refused"),
    [
        ("POST", "/api/mcp/recall", False),
        ("POST", "/api/mcp/answer", False),
        ("GET", "/api/v1/files", False),
        ("GET", "/_sim/stats", False),
        ("POST", "/api/v1/files", True),
        ("PUT", "/api/v1/files/d0001", True),
        ("DELETE", "/api/permissions/grants/g1", True),
        ("POST", "/_sim/reset", True),
        ("PUT", "/_sim/faults", True),
        ("POST", "/api/mcp/recall/", True),  # only the exact read-only routes pass
        ("GET", "/mcp/", True),
        ("POST", "/mcp/", True),
        ("GET", "/ui/", True),
    ],
)
def test_what_a_replica_refuses(method: str, path: str, refused: bool) -> None:
    assert (replica_refusal(method, path) is not None) is refused


def test_a_refused_write_answers_409_and_changes_nothing(sim: Simulator, seed_evalset: list[EvalQuery]) -> None:
    client = TestClient(ReadOnlyReplica(create_app(sim)), raise_server_exceptions=False)
    admin = {"Authorization": f"Bearer {sim.tokens.admin_token}"}
    before = sim.snapshot(), sim.drive.policy_version, len(sim.drive.changes)
    r = client.post("/api/v1/files/d0001/trash", headers=admin)
    assert r.status_code == 409 and r.json()["error"]["code"] == "read-only-replica"
    r = client.put("/_sim/clock", headers=admin, json={"now": "2030-01-01T00:00:00Z"})
    assert r.status_code == 409
    assert (sim.snapshot(), sim.drive.policy_version, len(sim.drive.changes)) == before
    q = next(q for q in seed_evalset if q.user_id and q.as_of is None and q.gold and not q.forbidden)
    ok = client.post("/api/mcp/recall", headers=admin, json={"query": q.query, "user_id": q.user_id, "top_k": 5})
    assert ok.status_code == 200 and ok.json()["results"]


class _Behind:
    def enter(self) -> None:
        raise RuntimeError("the data directory could not be read")

    def leave(self) -> None:
        raise AssertionError("a request that was refused never leaves")


def test_a_replica_that_cannot_catch_up_answers_503_and_runs_nothing(sim: Simulator) -> None:
    inner, ran = create_app(sim), []

    async def spy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            ran.append(scope["path"])
        await inner(scope, receive, send)

    client = TestClient(FollowingReplica(spy, _Behind()), raise_server_exceptions=False)
    admin = {"Authorization": f"Bearer {sim.tokens.admin_token}"}
    r = client.post("/api/mcp/recall", headers=admin, json={"query": "budget", "user_id": "u009", "top_k": 5})
    assert r.status_code == 503 and r.json()["error"]["code"] == "replica-behind"
    assert "results" not in r.json() and "could not be read" in r.json()["error"]["message"]
    assert client.get("/api/v1/files", headers=admin).status_code == 503  # reads too: never the older state
    assert ran == []  # no route ran on the state the replica could not bring up to date


@pytest.mark.slow
def test_two_worker_processes_serve_recall_with_the_same_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "replica-test-secret-" + "x" * 32
    monkeypatch.setenv("DRIVEBENCH_TOKEN_SECRET", secret)
    corpus = resolve_corpus("seed")
    tokens = TokenRegistry(Drive.from_corpus(corpus), secret.encode())
    q = next(
        q for q in load_evalset(corpus / EVALSET_NAME) if q.user_id and q.as_of is None and q.gold and not q.forbidden
    )
    proc, url = start_replicas(ReplicaSpec(str(corpus), "bm25", "hash", []), 2)
    try:
        body = {"query": q.query, "user_id": q.user_id, "top_k": 5}
        answers = []
        for _ in range(6):  # new connections: the kernel spreads them over both workers
            r = httpx.post(url + "/api/mcp/recall", json=body, headers={"Authorization": f"Bearer {tokens.eval_token}"})
            assert r.status_code == 200, r.text
            answers.append([x["doc_id"] for x in r.json()["results"]])
        assert answers[0] and all(a == answers[0] for a in answers)  # replicas of one state answer alike
        # the processes share the cores: each replica's query encoder gets its share of the threads
        share = int(os.environ.get(EMBED_THREADS_ENV) or max(1, (os.cpu_count() or 1) // 2))
        admin = {"Authorization": f"Bearer {tokens.admin_token}"}
        encoder = httpx.get(url + "/healthz", headers=admin).json()["index"]["query_encoder"]
        assert encoder == {"workers": 1, "threads": share}
        r = httpx.post(url + "/_sim/reset", headers={"Authorization": f"Bearer {tokens.admin_token}"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "read-only-replica"
        r = httpx.post(url + "/api/mcp/recall", json=body, headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401
    finally:
        proc.terminate()
        proc.wait(30)
    assert proc.returncode is not None


def test_the_workers_socket_is_tcp_so_asyncio_turns_nagle_off() -> None:
    """uvicorn binds the shared socket with protocol 0 and asyncio then leaves Nagle on for every accepted
    connection: a keep-alive request waited ~45 ms for the client's delayed ACK. Ours is labelled TCP, and a
    connection asyncio accepts on it has TCP_NODELAY set."""
    import asyncio
    import socket

    from drivebench.server.process import _TcpSocketConfig

    config = _TcpSocketConfig(
        "drivebench.server.process:replica_app", factory=True, host="127.0.0.1", port=0, workers=2
    )
    listener = config.bind_socket()
    assert listener.proto == socket.IPPROTO_TCP
    nodelay: list[int] = []

    class Record(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            nodelay.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def accept_one() -> None:
        server = await asyncio.get_running_loop().create_server(Record, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        for _ in range(100):
            if nodelay:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(accept_one())
    assert nodelay == [1]
