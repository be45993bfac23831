"""Every front door of recall runs the one recall service (``simulator/recall.py``): the HTTP recall, the answer,
the MCP ``recall`` and ``answer`` tools, the console's playground and the in-process target. The doors that take a
token resolve who it acts as in one place (``recall.principal_of``), and every door returns the same documents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from drivebench.formats.evalset import EvalQuery
from drivebench.server.api.schemas import RecallRequest
from drivebench.server.console import recall_view
from drivebench.server.mcp import build_mcp_server
from drivebench.simulator import recall as recall_service
from drivebench.simulator.backend import Simulator
from drivebench.simulator.target import InProcessTarget
from tests.support.http import bearer

QUERY = "项目X的技术方案审批人"
USER = "u001"


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """What the service saw: the subjects ``principal_of`` resolved, the documents ``recall_hit`` returned."""
    seen: dict[str, list[str]] = {"principals": [], "hits": []}
    principal_of, recall_hit = recall_service.principal_of, recall_service.recall_hit

    def resolving(*args: Any) -> Any:
        principal = principal_of(*args)
        seen["principals"].append(principal.subject)
        return principal

    def hit(*args: Any) -> Any:
        out = recall_hit(*args)
        seen["hits"].append(out.doc_id)
        return out

    monkeypatch.setattr(recall_service, "principal_of", resolving)
    monkeypatch.setattr(recall_service, "recall_hit", hit)
    return seen


def _mcp(sim: Simulator, tool: str, body: dict[str, Any]) -> list[str]:
    async def go() -> list[str]:
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            result = await c.call_tool(tool, body)
            assert not result.is_error
            return [r["doc_id"] for r in result.structured_content["results"]]

    return asyncio.run(go())


def test_every_door_runs_the_one_recall_service(
    sim: Simulator, client: TestClient, spies: dict[str, list[str]]
) -> None:
    body = {"query": QUERY, "user_id": USER, "top_k": 5}
    principal = sim.principal_for(sim.tokens.resolve(sim.tokens.eval_token), user_id=USER)  # type: ignore[arg-type]
    target = InProcessTarget(sim)
    doors = {
        "http recall": lambda: [
            r["doc_id"]
            for r in client.post("/api/mcp/recall", json=body, headers=bearer(sim.tokens.eval_token)).json()["results"]
        ],
        "http answer": lambda: [
            r["doc_id"]
            for r in client.post("/api/mcp/answer", json=body, headers=bearer(sim.tokens.eval_token)).json()["results"]
        ],
        "mcp recall": lambda: _mcp(sim, "recall", body),
        "mcp answer": lambda: _mcp(sim, "answer", body),
        "in-process target": lambda: [
            h.doc_id for h in asyncio.run(target.recall(EvalQuery(query_id="q", query=QUERY, user_id=USER), 5)).hits
        ],
        "console": lambda: [
            r.doc_id
            for r in recall_view.run_recall(
                sim, principal, RecallRequest(query=QUERY, top_k=5), sim.retriever.pipeline
            ).results
        ],
    }
    answers: dict[str, list[str]] = {}
    for door, ask in doors.items():
        spies["principals"].clear()
        spies["hits"].clear()
        answers[door] = ask()
        assert answers[door], door
        assert spies["hits"] == answers[door], door  # these results were made by the service's recall
        # a door with a token asks the service who it acts as; the console's page has resolved its principal
        assert spies["principals"] == ([] if door == "console" else [principal.subject]), door
    assert len({tuple(a) for a in answers.values()}) == 1, answers
