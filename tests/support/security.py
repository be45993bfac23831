"""Helpers for the security regressions: a principal's bearer header and one in-process MCP tool call, each with
the token of ``who`` (``admin``, ``eval`` or a user id)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client

from drivebench.server.mcp import build_mcp_server
from drivebench.simulator.backend import Simulator


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


def mcp_calls(sim: Simulator, who: str, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str, Any]]:
    """``mcp_call`` for each (tool, arguments) of ``calls``, in order, over one in-process session with ``who``'s
    token: the server is built and the session opened once (~40 ms each time), not once per call."""

    async def go() -> list[tuple[bool, str, Any]]:
        out = []
        async with Client(build_mcp_server(sim, token=token(sim, who))) as c:
            for tool, args in calls:
                result = await c.call_tool(tool, args)
                text = "".join(getattr(x, "text", "") for x in result.content)
                out.append((bool(result.is_error), text, result.structured_content))
        return out

    return asyncio.run(go())
