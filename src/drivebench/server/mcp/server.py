"""The simulator as an MCP server (official ``mcp`` SDK 2.x, ``MCPServer``), mounted at ``/mcp``.

Tools: ``recall`` and ``answer`` (the HTTP endpoints' request fields as arguments, the same
response as JSON), ``get_document`` (one version's extracted text) and ``list_versions``.
Resources: ``drive://documents/{doc_id}`` (the text of the version current now), listed per caller:
a user token lists the documents its user may preview; a service token lists none and names a
principal through the tools instead.

Authentication: ``Authorization: Bearer <token>`` with the simulator's own tokens
(``SimTokenVerifier`` asks ``sim.tokens``). A tool resolves the caller exactly like the HTTP API
(``Simulator.principal_for``): a user token acts as its user only; the evaluation and admin tokens
may name ``user_id`` or ``user_role`` (+ ``department``), and every such call is audited.
In-process (``mcp.Client(server)``, no HTTP) there is no bearer header: build the server with
``build_mcp_server(sim, token=...)`` to say whose token the in-process caller holds.

Every tool result (errors too) carries the active faults in its ``_meta``, under ``drivebench/faults``, in the
form of the HTTP API's ``X-Drivebench-Faults`` header (``none`` on a clean server), over every transport.

Errors come back as tool errors (``is_error``) whose text starts ``<code> (<status>):``, the status
the HTTP API would have answered (401, 400, 403, 404, 422, 429, 503...); a throttled call ends with
``retry_after=<seconds>``. The ``latency``, ``errors`` and ``throttle`` faults apply to tool calls.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolRequestParams, CallToolResult, ListResourcesResult, PaginatedRequestParams
from mcp_types import Resource as MCPResource
from pydantic import ValidationError

from drivebench import __version__
from drivebench.drive.errors import (
    Conflict,
    DriveError,
    Forbidden,
    InvalidRequest,
    NotFound,
    PermissionCheckFailed,
    UnknownPrincipal,
)
from drivebench.drive.tokens import TokenInfo
from drivebench.server.mcp.mount import ALLOWED_HOSTS_ENV, LOCAL_HOSTS, allowed_hosts_from_env, mount_mcp
from drivebench.simulator import documents
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import request_key
from drivebench.simulator.recall import RecallQuery, recall_for

T = TypeVar("T")
RESOURCE_PREFIX = "drive://documents/"
MAX_DOCUMENT_CHARS = 200_000
FAULTS_META = "drivebench/faults"  # a tool result's _meta key naming the active faults

INSTRUCTIONS = (
    "drivebench: a simulated enterprise cloud drive with permission-filtered search. Use `recall` to find "
    "documents the caller may preview, `answer` for an extractive answer that cites its sources, "
    "`get_document` for one document's text and `list_versions` for its history. A user token acts as its "
    "user; the evaluation token must name user_id or user_role."
)


class SimTokenVerifier:
    """Bearer tokens are the simulator's own (``drivebench tokens``)."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim

    async def verify_token(self, token: str) -> AccessToken | None:
        info = self.sim.tokens.resolve(token)
        if info is None:
            return None
        return AccessToken(token=token, client_id=info.subject, scopes=list(info.scopes), subject=info.subject)


def _status_error(exc: Exception) -> tuple[str, int, str]:
    """(code, HTTP status, message) for an exception, as the HTTP API maps it."""
    from drivebench.server.api.request import BadBody

    if isinstance(exc, ValidationError):
        fields = sorted({".".join(str(x) for x in e.get("loc", ())) for e in exc.errors()})
        return "invalid-field", 422, "; ".join(f"{f}: invalid" for f in fields) or str(exc)
    if isinstance(exc, PermissionCheckFailed):
        return "permission-check-failed", 503, "the permission check failed; no results are returned"
    if isinstance(exc, BadBody):
        return "bad-body", exc.status, str(exc)
    status = {
        UnknownPrincipal: 400,
        InvalidRequest: 400,
        Forbidden: 403,
        NotFound: 404,
        Conflict: 409,
    }
    for kind, code in status.items():
        if isinstance(exc, kind):
            return exc.code, code, str(exc)
    if isinstance(exc, DriveError):
        return exc.code, 400, str(exc)
    return "internal-error", 500, f"{type(exc).__name__}: the call failed; the server is still up"


def tool_error(code: str, status: int, message: str) -> ToolError:
    return ToolError(f"{code} ({status}): {message}")


class DriveMCPServer(MCPServer):
    def __init__(self, sim: Simulator, *, token: str | None = None) -> None:
        # MCPServer calls logging.basicConfig (a rich handler on the root logger at INFO): keep the
        # process's logging as the application configured it by giving basicConfig a handler to see.
        root = logging.getLogger()
        guard = logging.NullHandler() if not root.handlers else None
        if guard is not None:
            root.addHandler(guard)
        try:
            super().__init__(
                name="drivebench",
                version=__version__,
                instructions=INSTRUCTIONS,
                token_verifier=SimTokenVerifier(sim),
                auth=AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None, required_scopes=["recall"]),
                log_level="WARNING",
            )
        finally:
            if guard is not None:
                root.removeHandler(guard)
        self.sim = sim
        self.in_process_token = token
        self._register()

    # ------------------------------------------------------------------ who is calling
    def caller(self, ctx: Context | _ContextShim | None) -> TokenInfo:
        access = get_access_token()
        if access is None and ctx is not None:
            try:
                request = ctx.request_context.request
            except ValueError:
                request = None
            user = request.scope.get("user") if request is not None and hasattr(request, "scope") else None
            access = getattr(user, "access_token", None)
        raw = access.token if access is not None else self.in_process_token
        info = self.sim.tokens.resolve(raw) if raw else None
        if info is None:
            raise tool_error("unauthorized", 401, "missing or invalid bearer token")
        return info

    async def _call(self, ctx: Context | None, tool: str, args: dict[str, Any], fn: Callable[[TokenInfo], T]) -> T:
        token = self.caller(ctx)
        decision = self.sim.faults.request_fault(
            request_key("mcp", tool, token.subject, json.dumps(args, sort_keys=True, default=str))
        )
        if decision is not None and decision.delay_s > 0:
            await anyio.sleep(decision.delay_s)
        if decision is not None and decision.status is not None:
            suffix = f" retry_after={decision.retry_after_s:g}" if decision.retry_after_s is not None else ""
            code = "throttled" if decision.status == 429 else "injected-fault"
            raise tool_error(code, decision.status, decision.message + suffix)
        try:
            return await anyio.to_thread.run_sync(fn, token)
        except ToolError:
            raise
        except Exception as exc:
            raise tool_error(*_status_error(exc)) from exc

    async def _handle_call_tool(self, ctx: Any, params: CallToolRequestParams) -> Any:
        """Every tool result, errors included, with the active faults in ``_meta[FAULTS_META]`` (as at the call's
        start, like the HTTP header), so an MCP client records what it was measured against."""
        faults = self.sim.faults.header_value()
        result = await super()._handle_call_tool(ctx, params)
        if isinstance(result, CallToolResult):
            result = result.model_copy(update={"meta": {**(result.meta or {}), FAULTS_META: faults}})
        return result

    # ------------------------------------------------------------------ tools and resources
    def _register(self) -> None:
        # imported here: drivebench.server.api imports this module (the app mounts the server)
        from drivebench.server.api.answer import answer_for
        from drivebench.server.api.recall import recall_query, to_response
        from drivebench.server.api.schemas import AnswerRequest, RecallRequest

        sim = self.sim

        @self.tool(
            name="recall",
            description="Permission-filtered recall: at most top_k documents the principal may preview, one per "
            "document (its best chunk), by descending score. Same fields and response as POST /api/mcp/recall.",
        )
        async def recall(
            query: str,
            top_k: int = 10,
            user_id: str | None = None,
            user_role: str | None = None,
            department: str | None = None,
            as_of: str | None = None,
            file_types: list[str] | None = None,
            folder: str | None = None,
            ctx: Context | None = None,
        ) -> dict[str, Any]:
            args = _request_args(
                query=query,
                top_k=top_k,
                user_id=user_id,
                user_role=user_role,
                department=department,
                as_of=as_of,
                file_types=file_types,
                folder=folder,
            )

            def run(token: TokenInfo) -> dict[str, Any]:
                req = RecallRequest.model_validate(args)
                outcome = recall_for(sim, token, recall_query(req))
                return to_response(req, outcome, []).model_dump(mode="json")

            return await self._call(ctx, "recall", args, run)

        @self.tool(
            name="answer",
            description="Recall plus a deterministic extractive answer built only from the permitted results, "
            "citing every source it quotes. citation_style: brackets ([file name]), ids ([[doc-id]]) or "
            "footnotes. Same response as POST /api/mcp/answer.",
        )
        async def answer(
            query: str,
            top_k: int = 10,
            citation_style: str = "brackets",
            user_id: str | None = None,
            user_role: str | None = None,
            department: str | None = None,
            as_of: str | None = None,
            file_types: list[str] | None = None,
            folder: str | None = None,
            ctx: Context | None = None,
        ) -> dict[str, Any]:
            args = _request_args(
                query=query,
                top_k=top_k,
                citation_style=citation_style,
                user_id=user_id,
                user_role=user_role,
                department=department,
                as_of=as_of,
                file_types=file_types,
                folder=folder,
            )

            def run(token: TokenInfo) -> dict[str, Any]:
                return answer_for(sim, token, AnswerRequest.model_validate(args)).model_dump(mode="json")

            return await self._call(ctx, "answer", args, run)

        @self.tool(
            name="get_document",
            description="The extracted text of one document version the principal may preview: the version "
            "current at as_of (default now) unless version_id names one that existed then.",
        )
        async def get_document(
            doc_id: str,
            version_id: str | None = None,
            user_id: str | None = None,
            user_role: str | None = None,
            department: str | None = None,
            as_of: str | None = None,
            max_chars: int = 20_000,
            ctx: Context | None = None,
        ) -> dict[str, Any]:
            args = _request_args(
                doc_id=doc_id,
                version_id=version_id,
                user_id=user_id,
                user_role=user_role,
                department=department,
                as_of=as_of,
                max_chars=max_chars,
            )
            return await self._call(ctx, "get_document", args, lambda token: self.document(token, **args))

        @self.tool(
            name="list_versions",
            description="The versions of a document the principal may preview, oldest first, as of as_of.",
        )
        async def list_versions(
            doc_id: str,
            user_id: str | None = None,
            user_role: str | None = None,
            department: str | None = None,
            as_of: str | None = None,
            ctx: Context | None = None,
        ) -> dict[str, Any]:
            args = _request_args(
                doc_id=doc_id, user_id=user_id, user_role=user_role, department=department, as_of=as_of
            )
            return await self._call(ctx, "list_versions", args, lambda token: self.versions(token, **args))

        @self.resource(
            RESOURCE_PREFIX + "{doc_id}",
            name="document",
            description="The text of a document the token's user may preview (version current now).",
            mime_type="text/plain",
        )
        async def document_resource(doc_id: str, ctx: Context) -> str:
            try:
                token = self.caller(ctx)
            except ToolError as exc:
                raise ResourceError(str(exc)) from None
            if token.user_id is None:
                raise ResourceError(
                    "forbidden (403): a service token has no principal of its own; "
                    "use the get_document tool with user_id or user_role"
                )
            try:
                doc = await anyio.to_thread.run_sync(lambda: self.document(token, doc_id=doc_id))
            except Exception as exc:
                raise ResourceError("{} ({}): {}".format(*_status_error(exc))) from None
            return str(doc["text"])

    # ------------------------------------------------------------------ documents
    def _who(self, args: dict[str, Any]) -> RecallQuery:
        """Who a document tool asks as, and when: its arguments checked like a recall request's."""
        from drivebench.server.api.recall import recall_query
        from drivebench.server.api.schemas import RecallRequest

        return recall_query(
            RecallRequest.model_validate({"query": "-", **{k: v for k, v in args.items() if v is not None}})
        )

    def document(
        self,
        token: TokenInfo,
        *,
        doc_id: str,
        version_id: str | None = None,
        max_chars: int = 20_000,
        **principal_args: Any,
    ) -> dict[str, Any]:
        if not 1 <= max_chars <= MAX_DOCUMENT_CHARS:
            raise InvalidRequest(f"max_chars must be between 1 and {MAX_DOCUMENT_CHARS}")
        who = self._who(principal_args)
        return documents.document_text(self.sim, token, doc_id, who, version_id, max_chars)

    def versions(self, token: TokenInfo, *, doc_id: str, **principal_args: Any) -> dict[str, Any]:
        return documents.document_versions(self.sim, token, doc_id, self._who(principal_args))

    # ------------------------------------------------------------------ resource listing, per caller
    async def _handle_list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        try:
            token = self.caller(_ContextShim(ctx))
        except ToolError:
            return ListResourcesResult(resources=[])
        return ListResourcesResult(resources=await anyio.to_thread.run_sync(self._listed, token))

    def _listed(self, token: TokenInfo) -> list[MCPResource]:
        sim = self.sim
        if token.user_id is None:
            return []
        engine = sim.engine
        at = sim.drive.clock.now()
        mask = engine.allowed_mask(engine.user_principal(token.user_id), "preview", at)
        out = []
        for i in mask.nonzero()[0]:
            doc = sim.drive.documents.get(engine.doc_ids[i])
            if doc is None or doc.trashed_at is not None:
                continue
            out.append(
                MCPResource(
                    uri=RESOURCE_PREFIX + doc.doc_id,
                    name=doc.name,
                    title=doc.title,
                    description=sim.drive.doc_path(doc),
                    mime_type="text/plain",
                )
            )
        return out


class _ContextShim:
    """Just enough of ``Context`` for ``caller``: the low-level request context of a list call."""

    def __init__(self, request_context: Any) -> None:
        self.request_context = request_context


def _request_args(**values: Any) -> dict[str, Any]:
    """A tool's arguments as a request body: unset values dropped, filters nested."""
    args = {k: v for k, v in values.items() if v is not None}
    filters = {k: args.pop(k) for k in ("file_types", "folder") if k in args}
    if filters:
        args["filters"] = filters
    return args


def build_mcp_server(sim: Simulator, *, token: str | None = None) -> DriveMCPServer:
    """A new MCP server over ``sim``. ``token``: the bearer token an in-process client acts with."""
    return DriveMCPServer(sim, token=token)


# where they were defined before mount_mcp built the server lazily (mount.py, which does not import the SDK)
__all__ = [
    "ALLOWED_HOSTS_ENV",
    "LOCAL_HOSTS",
    "DriveMCPServer",
    "SimTokenVerifier",
    "allowed_hosts_from_env",
    "build_mcp_server",
    "mount_mcp",
]
