"""Deliberately broken recall endpoints for the fail-safe probe's tests, and a way to serve any ASGI app.

``failopen_app()`` answers ``POST /<flaw>/api/mcp/recall`` in the simulator's shape (``{"results": [{"doc_id"}]}``)
and checks everything a recall endpoint should (the bearer token, the user, role and department, the filters'
shape, ``as_of`` not in the future) except what its flaw (the first path segment) breaks:

* ``sound``: nothing: every check holds (the probe must find it closed);
* ``missing-auth``: a request *without* an Authorization header is trusted and answered for the body's user;
* ``unknown-user``: a ``user_id`` nobody has is answered with every document, as a default principal;
* ``empty``: a valid, empty result list for everyone (never testable: it proves nothing).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from drivebench.server.process import free_port

TOKEN = "good-token"
DOCS = {"u001": ["doc-a", "doc-b"], "u002": ["doc-c"]}
EVERYTHING = ["doc-a", "doc-b", "doc-c", "doc-secret"]
ROLES = {"engineer"}
DEPARTMENTS = {"rd"}
FLAWS = ("sound", "missing-auth", "unknown-user", "empty")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message}}, status_code=status)


def _bad_filters(filters: Any) -> str | None:
    if filters is None:
        return None
    if not isinstance(filters, dict) or set(filters) - {"folder", "file_types"}:
        return "unknown filter"
    if "folder" in filters and not isinstance(filters["folder"], str):
        return "folder must be a string"
    if "file_types" in filters and not isinstance(filters["file_types"], list):
        return "file_types must be a list"
    return None


def failopen_app() -> FastAPI:
    app = FastAPI()

    @app.post("/{flaw}/api/mcp/recall")
    async def recall(flaw: str, request: Request) -> JSONResponse:
        body = await request.json()
        auth = request.headers.get("authorization")
        if auth is None and flaw != "missing-auth":
            return _error(401, "missing bearer token")
        if auth is not None and auth != f"Bearer {TOKEN}":
            return _error(401, "invalid bearer token")
        user = body.get("user_id")
        if user is None:
            return _error(400, "give user_id")
        docs = DOCS.get(user)
        if docs is None:
            if flaw != "unknown-user":
                return _error(400, f"unknown user_id {user!r}")
            docs = EVERYTHING  # the flaw: an unknown principal falls back to a default that sees everything
        if body.get("user_role") is not None and body["user_role"] not in ROLES:
            return _error(400, "unknown user_role")
        if body.get("department") is not None and body["department"] not in DEPARTMENTS:
            return _error(400, "unknown department")
        problem = _bad_filters(body.get("filters"))
        if problem:
            return _error(422, problem)
        if body.get("as_of") and datetime.fromisoformat(body["as_of"]) > datetime.now(UTC):
            return _error(400, "as_of is in the future")
        if flaw == "empty":
            docs = []
        top_k = int(body.get("top_k", 10))
        return JSONResponse(
            {"results": [{"doc_id": d, "score": 1.0, "rank": i} for i, d in enumerate(docs[:top_k], 1)]}
        )

    return app


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``app`` behind a real uvicorn on a free local port, in a daemon thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name=f"failopen-uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
