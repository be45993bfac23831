"""The FastAPI application over one ``Simulator`` (the same object the pytest fixture uses)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from drivebench import __version__
from drivebench.simulator.api import answer as answer_api
from drivebench.simulator.api import control as control_api
from drivebench.simulator.api import faults as faults_api
from drivebench.simulator.api import files as files_api
from drivebench.simulator.api import permissions as permissions_api
from drivebench.simulator.api import recall
from drivebench.simulator.api.auth import NotAdmin, Unauthorized
from drivebench.simulator.api.body import BadBody
from drivebench.simulator.api.docs import mount_offline_docs
from drivebench.simulator.api.schemas import AnswerRequest, RecallRequest
from drivebench.simulator.backend import PermissionCheckFailed, Simulator
from drivebench.simulator.drive.errors import (
    Conflict,
    DriveError,
    Forbidden,
    InvalidRequest,
    NotFound,
    UnknownPrincipal,
)
from drivebench.simulator.mcp import mount_mcp

log = logging.getLogger("drivebench.api")

BODY_MODELS: list[type[BaseModel]] = [RecallRequest, AnswerRequest]


def _error(status: int, code: str, message: str, fields: list[str] | None = None, **headers: str) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "fields": fields or []}}
    return JSONResponse(body, status_code=status, headers=headers or None)


def _validation_fields(errors: list[Any]) -> tuple[list[str], str]:
    fields, messages = [], []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ()) if x not in ("body",)]
        name = ".".join(loc) or "body"
        fields.append(name)
        messages.append(f"{name}: {e.get('msg')}")
    return sorted(set(fields)), "; ".join(messages)


def create_app(sim: Simulator) -> FastAPI:
    app = FastAPI(
        title="drivebench simulator",
        version=__version__,
        description=(
            "A fake enterprise cloud drive with permission-filtered recall shaped like the vendor's "
            "`POST /api/mcp/recall`. Authenticate with `Authorization: Bearer <token>` "
            "(`drivebench tokens` lists them)."
        ),
        docs_url=None,  # issue #15: Swagger UI and ReDoc come from packaged assets (api/docs.py), not a CDN
        redoc_url=None,
    )
    mount_offline_docs(app)  # issue #15: /docs, /redoc offline
    app.state.sim = sim
    app.include_router(recall.router)
    app.include_router(files_api.router)  # /api/v1/files, /api/v1/changes, /api/v1/settings
    app.include_router(control_api.router)  # /_sim: reset, seed, clock, stats (faults: their own router)
    app.include_router(answer_api.router)
    app.include_router(faults_api.router)
    app.add_middleware(faults_api.FaultMiddleware)  # latency/errors/throttle faults; a no-op when clean
    mount_mcp(app, sim)  # /mcp/ (streamable HTTP); its session manager runs in the app's lifespan
    app.include_router(permissions_api.router)  # /api/permissions: grants, effective permissions, move

    @app.get("/healthz", tags=["meta"], summary="Liveness and what is loaded")
    def healthz() -> dict[str, Any]:
        return {
            "status": "ok",
            "corpus": sim.drive.name,
            "documents": len(sim.drive.documents),
            "chunks": sim.store.n_alive,
            "pipeline": sim.config.pipeline,
            "embedder": sim.embedder.name,
            "index": sim.index_metadata(),
        }

    @app.exception_handler(Unauthorized)
    async def _unauthorized(_: Request, exc: Unauthorized) -> JSONResponse:
        return _error(401, "unauthorized", str(exc), **{"WWW-Authenticate": 'Bearer realm="drivebench"'})

    @app.exception_handler(NotAdmin)
    async def _not_admin(_: Request, exc: NotAdmin) -> JSONResponse:
        return _error(403, "forbidden", str(exc) or "this endpoint needs the admin token")

    @app.exception_handler(BadBody)
    async def _bad_body(_: Request, exc: BadBody) -> JSONResponse:
        return _error(exc.status, "bad-body", str(exc), ["body"])

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        fields, message = _validation_fields(exc.errors())
        return _error(422, "invalid-field", message, fields)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields, message = _validation_fields(list(exc.errors()))
        return _error(422, "invalid-field", message, fields)

    @app.exception_handler(UnknownPrincipal)
    async def _unknown(_: Request, exc: UnknownPrincipal) -> JSONResponse:
        return _error(400, exc.code, str(exc))

    @app.exception_handler(InvalidRequest)
    async def _bad_request(_: Request, exc: InvalidRequest) -> JSONResponse:
        return _error(400, exc.code, str(exc))

    @app.exception_handler(Forbidden)
    async def _forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return _error(403, exc.code, str(exc))

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound) -> JSONResponse:
        return _error(404, exc.code, str(exc))

    @app.exception_handler(DriveError)
    async def _drive_error(_: Request, exc: DriveError) -> JSONResponse:  # 413, 422, 503 and any other
        return _error(exc.status, exc.code, str(exc))

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
        return _error(409, exc.code, str(exc))

    @app.exception_handler(PermissionCheckFailed)
    async def _fail_closed(_: Request, exc: PermissionCheckFailed) -> JSONResponse:
        log.error("permission check failed: %s", exc)
        return _error(503, "permission-check-failed", "the permission check failed; no results are returned")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return _error(500, "internal-error", f"{type(exc).__name__}: the request failed; the server is still up")

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in BODY_MODELS:
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(js.pop("$defs", {}))
            components[model.__name__] = js
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
