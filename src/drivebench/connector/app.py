"""The connector's HTTP face: ``POST /api/mcp/recall`` in the simulator's shape (so ``eval run`` and
``eval sync`` need no profile), ``GET /healthz`` and ``GET /syncs`` (when each sync ran: the truth a measured
lag can be checked against). It answers from its own index only."""

from __future__ import annotations

import hmac
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


def create_connector_app(index: ConnectorIndex, syncer: Syncer, token: str) -> FastAPI:
    app = FastAPI(title="drivebench reference connector", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid-request", "; ".join(str(e.get("msg")) for e in exc.errors())[:500])

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, "error", str(exc.detail))

    def authenticate(authorization: str | None) -> None:
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or invalid bearer token")

    @app.post("/api/mcp/recall")
    def recall(body: RecallIn, authorization: str | None = Header(default=None)) -> dict[str, Any]:
        authenticate(authorization)
        if body.user_role is not None or body.department is not None or body.as_of is not None or body.filters:
            raise HTTPException(400, "not supported by the connector: give user_id only (no role, as_of or filters)")
        if body.user_id is None:
            raise HTTPException(400, "give user_id: the connector answers for one user")
        hits = index.snapshot.search(body.query, body.user_id, body.top_k)
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
    def healthz() -> dict[str, Any]:
        s = syncer.stats
        return {
            "ok": True,
            "strategy": syncer.strategy,
            "interval_s": syncer.interval,
            "syncs": s.syncs,
            "last_sync_at": s.last_sync_at,
            "documents": len(index.snapshot.docs),
            "errors": s.errors,
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
