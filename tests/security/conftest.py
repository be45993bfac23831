"""Fixtures for the security regressions: one seed simulator (hash embedder: real FAISS + BM25, no model)
per module, reset to the corpus after every test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from drivebench.server.mcp import build_mcp_server
from drivebench.simulator.backend import Simulator
from tests.support.sims import client_for, fresh_sim


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    yield fresh_sim()


@pytest.fixture
def client(sim: Simulator) -> Iterator[TestClient]:
    with client_for(sim) as c:
        yield c
    sim.reset()


def token(sim: Simulator, who: str) -> str:
    if who == "admin":
        return sim.tokens.admin_token
    if who == "eval":
        return sim.tokens.eval_token
    return sim.tokens.for_subject(who).token


def h(sim: Simulator, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(sim, who)}"}


def mcp_call(sim: Simulator, who: str, tool: str, args: dict[str, Any]) -> tuple[bool, str, Any]:
    """(is_error, text, structured content) of one MCP tool call, in-process, with ``who``'s token."""

    async def go() -> tuple[bool, str, Any]:
        async with Client(build_mcp_server(sim, token=token(sim, who))) as c:
            result = await c.call_tool(tool, args)
            text = "".join(getattr(x, "text", "") for x in result.content)
            return bool(result.is_error), text, result.structured_content

    return asyncio.run(go())
