"""Fault control (``GET/PUT /_sim/faults``, admin token only) and the request-fault middleware.

``PUT /_sim/faults`` replaces the active set: ``{"faults": ["leaky-acl", "latency:delay_ms=50",
{"name": "errors", "params": {"share": 0.3}}]}`` or ``{"faults": "leaky-acl,errors:share=0.3"}``;
``{"faults": []}`` restores a clean server. Both answer the state: active faults with their full
parameters, a generation counter, how often each fault fired, and every available profile.

``FaultMiddleware`` applies ``latency``, ``errors`` and ``throttle`` to ``/api/`` requests only (never
to ``/_sim``, ``/healthz``, the docs or ``/mcp``, whose tools apply them themselves). The decision for
a request hashes its method, path, body and how many identical requests came before.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.security import HTTPAuthorizationCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from drivebench.simulator.api.auth import NotAdmin, bearer, current_token
from drivebench.simulator.api.body import read_json_object
from drivebench.simulator.api.boundary import replay_body
from drivebench.simulator.drive.errors import InvalidRequest
from drivebench.simulator.faults import FaultSpecError, fault_from_json, parse_fault_specs, request_key

router = APIRouter(prefix="/_sim", tags=["control"])

FAULTED_PREFIXES = ("/api/",)


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
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {"faults": {"oneOf": [{"type": "string"}, {"type": "array"}]}},
                        "required": ["faults"],
                    },
                    "example": {"faults": ["leaky-acl", {"name": "latency", "params": {"delay_ms": 50}}]},
                }
            },
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
_BOUNDS = {"delay_ms": 60_000.0, "jitter_ms": 60_000.0, "delay_s": 604_800.0, "retry_after_s": 3_600.0}


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
        if not any(n in faults for n in ("latency", "errors", "throttle")):
            await self.app(scope, receive, send)  # clean: untouched
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


async def _send_error(send: Send, status: int, message: str, retry_after: float | None) -> None:
    code = "throttled" if status == 429 else "injected-fault"
    payload = json.dumps({"error": {"code": code, "message": message, "fields": []}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", f"{retry_after:g}".encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
