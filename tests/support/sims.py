"""Helpers for tests with a simulator of their own: a fresh simulator on the seed corpus (what the ``fresh_sim``
and ``module_sim`` fixtures of ``tests/conftest.py`` hold), an HTTP client over it, tokens, uploads."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from drivebench.api import load_simulator
from drivebench.server.api import create_app
from drivebench.simulator.backend import SimConfig, Simulator

HASH = SimConfig(embedder="hash", pipeline="hybrid")  # documented test backend: real FAISS + BM25, no model


def fresh_sim(config: SimConfig = HASH) -> Simulator:
    return load_simulator("seed", config=config)


def client_for(sim: Simulator) -> TestClient:
    return TestClient(create_app(sim), raise_server_exceptions=False)


def auth(sim: Simulator, user: str) -> dict[str, str]:
    token = sim.tokens.admin_token if user == "admin" else sim.tokens.for_subject(user).token
    return {"Authorization": f"Bearer {token}"}


def upload(client: TestClient, sim: Simulator, user: str, folder: str, name: str, data: bytes, **params: Any) -> Any:
    return client.post(
        "/api/v1/files",
        headers=auth(sim, user),
        files={"file": (name, data)},
        data={"folder": folder, **{k: v for k, v in params.items() if k != "strict"}},
        params={"strict": "true"} if params.get("strict") else None,
    )


def recall(client: TestClient, sim: Simulator, user: str, query: str, top_k: int = 10, **body: Any) -> dict:
    r = client.post("/api/mcp/recall", headers=auth(sim, user), json={"query": query, "top_k": top_k, **body})
    assert r.status_code == 200, r.text
    return r.json()


def hit_ids(resp: dict) -> list[str]:
    return [h["doc_id"] for h in resp["results"]]
