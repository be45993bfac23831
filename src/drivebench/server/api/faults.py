"""Fault control (``GET/PUT /_sim/faults``, admin token only) and the request-fault middleware.

``PUT /_sim/faults`` replaces the active set: ``{"faults": ["leaky-acl", "latency:delay_ms=50",
{"name": "errors", "params": {"share": 0.3}}]}`` or ``{"faults": "leaky-acl,errors:share=0.3"}``;
``{"faults": []}`` restores a clean server. Both answer the state: active faults with their full
parameters, a generation counter, how often each fault fired, and every available profile.

``FaultMiddleware`` applies ``latency``, ``errors`` and ``throttle`` to ``/api/`` requests only (never
to ``/_sim``, ``/healthz``, the docs or ``/mcp``, whose tools apply them themselves). The decision for
a request hashes its method, path, body and how many identical requests came before.

Every ``/api/`` response (recall, answer, files...; injected errors too) carries
``X-Drivebench-Faults``: the active faults with all their parameters and seeds
(``leaky-acl:seed=0:share=0.2,latency:...``), or ``none`` on a clean server, so a client records
what it was measured against (``eval run`` writes it to ``run_info.faults``).
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.security import HTTPAuthorizationCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from drivebench.drive.errors import InvalidRequest
from drivebench.server.api.request import NotAdmin, bearer, current_token, read_json_object, replay_body
from drivebench.simulator.faults import FaultSpecError, fault_from_json, parse_fault_specs, request_key
from drivebench.simulator.faults.schema import BOUNDS, FAULTS_EXAMPLE, faults_body_schema

router = APIRouter(prefix="/_sim", tags=["control"])

FAULTED_PREFIXES = ("/api/",)
FAULTS_HEADER = "X-Drivebench-Faults"


def _require_admin(request: Request, credentials: HTTPAuthorizationCredentials | None) -> None:
    token = current_token(request, credentials)
    if not token.has("admin"):
        raise NotAdmin("fault control needs the admin token")


@router.get("/faults", summary="The active fault profiles and the available ones (admin token)")
async def get_faults(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> dict[str, Any]:
    _require_admin(request, credentials)
    return request.app.state.sim.faults.describe()


@router.put(
    "/faults",
    summary="Replace the active fault profiles (admin token); [] restores a clean server",
    description=(
        'The body is `{"faults": [...]}`: a list whose items are `"name"`, `"name:key=value[:key=value]"` or '
        '`{"name": ..., "params": {...}}`, or one comma-separated string of `name:key=value` specs. '
        "Parameters left out take their defaults (`GET /_sim/faults` lists them); one fault per name, the last "
        "wins. A body outside this schema, an unknown fault or parameter, or a value out of range is a 400."
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": faults_body_schema(), "example": FAULTS_EXAMPLE}},
        }
    },
)
async def put_faults(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> dict[str, Any]:
    _require_admin(request, credentials)
    body = await read_json_object(request)
    if set(body) != {"faults"}:
        raise InvalidRequest('send {"faults": [...]} (a list of faults, or one comma-separated string)')
    value = body["faults"]
    try:
        if isinstance(value, str):
            faults = parse_fault_specs(value)
        elif isinstance(value, list):
            faults = [fault_from_json(v) for v in value]
        else:
            raise FaultSpecError("faults must be a list or a comma-separated string")
    except FaultSpecError as exc:
        raise InvalidRequest(str(exc)) from None
    _check_bounds(faults)
    sim = request.app.state.sim
    # switching cad-blind re-ingests dxf documents: off the event loop
    await asyncio.get_running_loop().run_in_executor(None, sim.faults.replace, faults)
    return sim.faults.describe()


# the largest value each time parameter may take: a fault slows a server down, it never hangs it
# (stale-acl's delay_s is how long a policy stays stale, not a sleep: up to a week)
_BOUNDS = BOUNDS


def _check_bounds(faults: list[Any]) -> None:
    """Every numeric parameter finite and in range (400 otherwise)."""
    for fault in faults:
        for key, value in fault.params:
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if not math.isfinite(value) or abs(value) > 1e12:
                raise InvalidRequest(f"{fault.name}: {key} must be a finite number, got {value}")
            if key in _BOUNDS and value > _BOUNDS[key]:
                raise InvalidRequest(f"{fault.name}: {key} must be <= {_BOUNDS[key]:g}, got {value}")


class FaultMiddleware:
    """Pure ASGI: reads the body (to key the decision), replays it, then delays and/or answers 5xx/429."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(FAULTED_PREFIXES):
            await self.app(scope, receive, send)
            return
        faults = scope["app"].state.sim.faults
        send = _with_faults_header(send, faults.header_value())
        if not any(n in faults for n in ("latency", "errors", "throttle")):
            await self.app(scope, receive, send)  # no request-level fault: only the header added
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        decision = faults.request_fault(request_key(scope["method"], scope["path"], body))
        if decision is not None and decision.delay_s > 0:
            await asyncio.sleep(decision.delay_s)
        if decision is not None and decision.status is not None:
            await _send_error(send, decision.status, decision.message, decision.retry_after_s)
            return
        await self.app(scope, replay_body(body, receive), send)


def _with_faults_header(send: Send, value: str) -> Send:
    """``send`` with ``X-Drivebench-Faults: value`` added to the response start."""
    header = (FAULTS_HEADER.lower().encode(), value.encode("latin-1", "replace"))

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), header]}
        await send(message)

    return wrapped


async def _send_error(send: Send, status: int, message: str, retry_after: float | None) -> None:
    code = "throttled" if status == 429 else "injected-fault"
    payload = json.dumps({"error": {"code": code, "message": message, "fields": []}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", f"{retry_after:g}".encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
