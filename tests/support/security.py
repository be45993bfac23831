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
