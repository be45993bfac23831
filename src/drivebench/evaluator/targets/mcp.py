"""An MCP server with ``recall`` (and ``answer``) tools, through the official ``mcp`` SDK client.

``McpTarget("http://127.0.0.1:8000/mcp/", token)`` talks streamable HTTP with a bearer token;
``McpTarget(server)`` connects in-process to an ``MCPServer`` instance (for the simulator:
``build_mcp_server(sim, token=...)``). Each eval query is one ``tools/call`` with the vendor-shaped
request fields as arguments; the tool's structured result (or its JSON text) is read like an HTTP
response (``ResponseMapping``).

The simulator's tool results carry its active faults in ``_meta["drivebench/faults"]`` (the value of the HTTP
API's ``X-Drivebench-Faults`` header): recorded per call like the HTTP target's header, so ``run_info.faults``
and every report name them; another MCP server that sends nothing leaves them "not reported".

Tool errors are mapped like HTTP statuses: the simulator's error text carries ``(<status>)``; 429
and 5xx (and timeouts, lost connections) are retryable, ``retry_after=<s>`` is honoured.

The SDK client's task group must be entered and left by the same task, while the runner calls
from many tasks: one background task owns the connection for the target's lifetime.
"""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import AsyncExitStack
from typing import Any

from drivebench.evaluator.targets.http import ResponseMapping, _dig, check_ok, parse_hits
from drivebench.formats.evalset import EvalQuery
from drivebench.formats.target import TargetError, TargetResponse, http_error_kind, request_body

_STATUS = re.compile(r"\((\d{3})\)")
_RETRY_AFTER = re.compile(r"retry_after=([0-9.]+)")
FAULTS_META = "drivebench/faults"  # simulator.mcp.server.FAULTS_META (not imported: a client needs no server code)


def tool_arguments(query: EvalQuery, top_k: int) -> dict[str, Any]:
    """The recall tool's arguments: the HTTP request body (filters are flat tool arguments)."""
    return request_body(query, top_k)


class McpTarget:
    def __init__(
        self,
        server: Any,
        token: str | None = None,
        *,
        mapping: ResponseMapping | None = None,
        timeout: float = 30.0,
        recall_tool: str = "recall",
        answer_tool: str = "answer",
        citation_style: str = "brackets",
    ) -> None:
        self.server = server
        self.token = token
        self.mapping = mapping or ResponseMapping()
        self.timeout = timeout
        self.recall_tool, self.answer_tool = recall_tool, answer_tool
        self.citation_style = citation_style
        where = server if isinstance(server, str) else f"in-process:{type(server).__name__}"
        self.name = f"mcp:{where}"
        self._client: Any = None
        self._ready: asyncio.Future[Any] | None = None
        self._closing: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._start_lock = asyncio.Lock()

    # ------------------------------------------------------------------ connection
    async def _hold(self) -> None:
        from mcp import Client

        assert self._ready is not None and self._closing is not None
        try:
            async with AsyncExitStack() as stack:
                if isinstance(self.server, str):
                    from mcp.client.streamable_http import streamable_http_client
                    from mcp.shared._httpx_utils import create_mcp_http_client

                    headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
                    http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                    client = Client(streamable_http_client(self.server, http_client=http))
                else:
                    client = Client(self.server)
                self._client = await stack.enter_async_context(client)
                self._ready.set_result(self._client)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                raise

    async def _connected(self) -> Any:
        async with self._start_lock:
            if self._owner is None:
                loop = asyncio.get_running_loop()
                self._ready, self._closing = loop.create_future(), asyncio.Event()
                self._owner = asyncio.create_task(self._hold(), name="drivebench-mcp-target")
        assert self._ready is not None
        try:
            return await asyncio.shield(self._ready)
        except Exception as exc:
            raise TargetError(
                f"cannot connect to {self.name}: {_describe(exc)}", retryable=True, kind="connection"
            ) from exc

    async def aclose(self) -> None:
        if self._owner is None:
            return
        assert self._closing is not None
        self._closing.set()
        try:
            await asyncio.wait_for(self._owner, timeout=10)
        except (TimeoutError, asyncio.CancelledError):
            self._owner.cancel()
        except Exception:
            pass
        self._owner = None

    # ------------------------------------------------------------------ calls
    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await self._call(self.recall_tool, tool_arguments(query, top_k))

    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
        args = {**tool_arguments(query, top_k), "citation_style": self.citation_style}
        return await self._call(self.answer_tool, args)

    async def _call(self, tool: str, args: dict[str, Any]) -> TargetResponse:
        client = await self._connected()
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), timeout=self.timeout)
        except TimeoutError as exc:
            raise TargetError(
                f"timeout: {tool} took more than {self.timeout:g} s", retryable=True, kind="timeout"
            ) from exc
        except Exception as exc:  # protocol or transport failure
            raise TargetError(f"MCP call failed: {_describe(exc)}", retryable=True, kind="connection") from exc
        text = "".join(getattr(c, "text", "") for c in (result.content or []))
        if result.is_error:
            m = _STATUS.search(text)
            status = int(m.group(1)) if m else 500
            ra = _RETRY_AFTER.search(text)
            retryable = status == 429 or status >= 500
            raise TargetError(
                f"MCP {status}: {text[:300]}",
                retryable=retryable,
                retry_after=float(ra.group(1)) if ra else None,
                kind=http_error_kind(status),
            )
        data = result.structured_content
        if not isinstance(data, dict):
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise TargetError(f"{tool} returned no JSON object", retryable=False, kind="not_json") from exc
        if not isinstance(data, dict):
            raise TargetError(f"{tool} returned no JSON object", retryable=False, kind="not_json")
        check_ok(data, self.mapping)
        answer = _dig(data, self.mapping.answer)
        faults = (result.meta or {}).get(FAULTS_META)
        return TargetResponse(
            hits=parse_hits(data, self.mapping),
            as_of=data.get("as_of"),
            snapshot=data.get("snapshot"),
            answer=answer if isinstance(answer, str) else None,
            raw=data,
            faults=faults if isinstance(faults, str) else None,  # what the server ran with
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
