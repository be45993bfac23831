"""The connector's HTTP face: ``POST /api/mcp/recall`` in the simulator's shape (so ``eval run`` and
``eval sync`` need no profile), ``GET /healthz`` and ``GET /syncs`` (when each sync ran: the truth a measured
lag can be checked against). It answers from its own index only.

Two credentials, never the same one: the client token (recall, ``/syncs``) and the admin token, the drive
token the connector reads with, which only unlocks the counts of ``/healthz`` (how many documents it indexed,
hidden ones included, and its sync counters); without it ``/healthz`` says only that the connector is up."""

from __future__ import annotations

import hmac
import math
from typing import Any

from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from drivebench.connector.index import ConnectorIndex
from drivebench.connector.sync import Syncer


class RecallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=10, ge=1, le=100)
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    user_role: str | None = None
    department: str | None = None
    as_of: str | None = None
    filters: dict[str, Any] | None = None


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _bearer_is(authorization: str | None, expected: str) -> bool:
    given = (authorization or "").removeprefix("Bearer ").strip()
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def create_connector_app(
    index: ConnectorIndex, syncer: Syncer, token: str, *, admin_token: str, allow_admin_client_token: bool = False
) -> FastAPI:
    """``token``: what clients send; ``admin_token``: the drive token, for ``/healthz``'s counts. A client
    token equal to it is refused unless ``allow_admin_client_token``: every client would hold the drive's key."""
    if not token or not admin_token:
        raise ValueError("the client token and the admin token must not be empty")
    if hmac.compare_digest(token.encode(), admin_token.encode()) and not allow_admin_client_token:
        raise ValueError("the client token is the drive token: every client would hold the drive's admin token")
    app = FastAPI(title="drivebench reference connector", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid-request", "; ".join(str(e.get("msg")) for e in exc.errors())[:500])

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, "error", str(exc.detail))

    def authenticate(authorization: str | None) -> None:
        if not _bearer_is(authorization, token):
            raise HTTPException(401, "missing or invalid bearer token")

    @app.post("/api/mcp/recall", response_model=None)
    def recall(body: RecallIn, authorization: str | None = Header(default=None)) -> dict[str, Any] | JSONResponse:
        authenticate(authorization)
        if body.user_role is not None or body.department is not None or body.as_of is not None or body.filters:
            raise HTTPException(400, "not supported by the connector: give user_id only (no role, as_of or filters)")
        if body.user_id is None:
            raise HTTPException(400, "give user_id: the connector answers for one user")
        snapshot = index.snapshot
        if snapshot is None:  # the drive's history was replaced: the grants held may be revoked, answer none
            response = _error(503, "resyncing", "the connector is reading the drive again after a reset; retry soon")
            response.headers["Retry-After"] = str(max(1, math.ceil(syncer.interval)))
            return response
        hits = snapshot.search(body.query, body.user_id, body.top_k)
        return {
            "results": [
                {
                    "rank": i,
                    "doc_id": d.doc_id,
                    "version_id": d.version_id,
                    "name": d.name,
                    "path": d.path,
                    "score": round(score, 6),
                    "snippet": text[:300],
                }
                for i, (d, score, text) in enumerate(hits, 1)
            ],
            "as_of": None,
            "synced_at": syncer.stats.last_sync_at,
        }

    @app.get("/healthz")
    def healthz(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        """Up. Counts for the admin token only (another token or none gets the same short answer: no
        oracle for the admin token, and no count of documents a client's users may not see)."""
        if not _bearer_is(authorization, admin_token):
            return {"ok": True}
        s, snapshot = syncer.stats, index.snapshot
        return {
            "ok": True,
            "strategy": syncer.strategy,
            "interval_s": syncer.interval,
            "serving": snapshot is not None,
            "syncs": s.syncs,
            "last_sync_at": s.last_sync_at,
            "documents": None if snapshot is None else len(snapshot.docs),
            "errors": s.errors,
            "resyncs": s.resyncs,
        }

    @app.get("/syncs")
    def syncs(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        """Every sync step since start (the last 10,000): wall-clock start and end, seconds since the epoch."""
        authenticate(authorization)
        return {
            "strategy": syncer.strategy,
            "interval_s": syncer.interval,
            "syncs": [{"started": a, "ended": b} for a, b in list(syncer.stats.timeline)],
        }

    return app
