"""The FastAPI application over one ``Simulator`` (the same object the pytest fixture uses)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel

from drivebench import __version__
from drivebench.server.api import access as access_api
from drivebench.server.api import answer as answer_api
from drivebench.server.api import boundary, recall
from drivebench.server.api import control as control_api
from drivebench.server.api import directory as directory_api
from drivebench.server.api import faults as faults_api
from drivebench.server.api import files as files_api
from drivebench.server.api import inventory as inventory_api
from drivebench.server.api import permissions as permissions_api
from drivebench.server.api.docs import mount_offline_docs
from drivebench.server.api.indexstate import IndexStateHeader
from drivebench.server.api.nostore import NoStore
from drivebench.server.api.request import bearer
from drivebench.server.api.schemas import AnswerRequest, RecallRequest
from drivebench.server.console import mount_console
from drivebench.server.mcp import mount_mcp
from drivebench.simulator.backend import Simulator

log = logging.getLogger("drivebench.api")

BODY_MODELS: list[type[BaseModel]] = [RecallRequest, AnswerRequest]


def create_app(sim: Simulator, *, recall_fast_path: bool = True) -> FastAPI:
    """The app over ``sim``. ``recall_fast_path=False``: ``POST /api/mcp/recall`` through the framework's routing
    instead of ``recall.RecallFastPath`` (the same endpoint and responses; tests compare the two)."""
    app = FastAPI(
        title="drivebench simulator",
        version=__version__,
        description=(
            "A fake enterprise cloud drive with permission-filtered recall shaped like the vendor's "
            "`POST /api/mcp/recall`. Authenticate with `Authorization: Bearer <token>` "
            "(`drivebench tokens` lists them)."
        ),
        docs_url=None,  # Swagger UI and ReDoc come from packaged assets (api/docs.py), not a CDN
        redoc_url=None,
    )
    mount_offline_docs(app)  # /docs, /redoc offline
    app.state.sim = sim
    app.include_router(recall.router)
    app.include_router(files_api.router)  # /api/v1/files, /api/v1/changes, /api/v1/settings
    app.include_router(inventory_api.router)  # /api/v1/directory
    app.include_router(access_api.router)  # /api/v1/access, /api/v1/files/{id}/access: who may preview what
    app.include_router(directory_api.router)  # /api/v1/users, /api/v1/projects, /api/v1/folders (admin)
    app.include_router(control_api.router)  # /_sim: reset, seed, clock, stats (faults: their own router)
    app.include_router(answer_api.router)
    app.include_router(faults_api.router)
    if recall_fast_path:  # innermost: after the boundary's checks and the faults, the recall endpoint directly
        app.add_middleware(recall.RecallFastPath)
    app.add_middleware(faults_api.FaultMiddleware)  # latency/errors/throttle faults; a no-op when clean
    app.add_middleware(boundary.BoundaryMiddleware)  # body limits, JSON checks, no unhandled exception
    app.add_middleware(IndexStateHeader, sim=sim)  # Drivebench-Index: behind while the Milvus rows lag the drive
    app.add_middleware(NoStore)  # outermost: Cache-Control: no-store on every private answer, fast path included
    mount_mcp(app, sim)  # /mcp/ (streamable HTTP); its session manager runs in the app's lifespan
    app.include_router(permissions_api.router)  # /api/permissions: grants, effective permissions, move
    mount_console(app)  # the web console under /ui/ (server/console)

    @app.get(
        "/healthz",
        tags=["meta"],
        summary="Liveness; with the evaluation token also the corpus served, with the admin token counts and index",
    )
    def healthz(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> dict[str, Any]:
        """``{"status": "ok"}`` to anyone (a liveness or readiness probe sends no token). The evaluation token
        also learns which corpus is served (``corpus``, ``corpus_version``: an evaluator checks its eval set is
        for it). The counts (documents, chunks, indexed versions, rejected uploads) include what most users may
        not see, so only the admin token gets them; any other token, valid or not, gets the liveness answer."""
        info = sim.tokens.resolve(credentials.credentials) if credentials is not None else None
        if info is None or not (info.has("admin") or info.has("evaluate-as")):
            return {"status": "ok"}
        served = {"status": "ok", "corpus": sim.drive.name, "corpus_version": served_version(sim)}
        if not info.has("admin"):  # the evaluation token learns which corpus it evaluates against, no counts
            return served
        return {
            **served,
            "documents": len(sim.drive.documents),
            "chunks": sim.store.n_alive,
            "pipeline": sim.config.pipeline,
            "rerank": sim.reranker,
            "embedder": sim.embedder.name,
            "index": sim.index_metadata(),
        }

    # one renderer for every error (boundary.error_response), the framework's own 404/405/413/415 included
    for kind in boundary.RENDERED:
        app.add_exception_handler(kind, boundary.handle_error)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in BODY_MODELS:
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(js.pop("$defs", {}))
            components[model.__name__] = js
        app.openapi_schema = boundary.document_errors(schema)  # every error status, on every operation
        # the token is optional on /healthz (it only adds what is loaded): say so, an empty requirement first
        health = schema["paths"]["/healthz"]["get"]
        health["security"] = [{}, *health.get("security", [])]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's way to post-process the schema
    return app


def served_version(sim: Simulator) -> str | None:
    """The built-in label of the corpus served (``acme-zh@3``), None for a corpus that is not a built-in."""
    from drivebench.corpora.builtin import corpus_version

    return corpus_version(sim.corpus_dir) if sim.corpus_dir is not None else None
