"""The HTTP boundary: bounded input, and one renderer for every error.

* ``BoundaryMiddleware`` (pure ASGI, outermost of the app's own middleware):
  - refuses a body larger than its route allows (413), before reading it when ``Content-Length`` says so
    and while reading otherwise: uploads ``MAX_UPLOAD_BYTES`` (+ multipart slack), everything else
    ``MAX_BODY_BYTES`` (1 MiB);
  - checks every JSON body (``application/json``, ``*+json``) before any route sees it: UTF-8 (400),
    parseable (400), nested at most ``MAX_JSON_DEPTH`` levels (400), no NaN or Infinity literals (400);
  - turns any exception that escaped the routes into a 500 in the common shape **and returns normally**,
    so the server never resets the keep-alive connection (Starlette's own handler re-raises after a 500).
* ``error_response``: the one function that renders every error, the framework's own 404/405/413/415
  included, as ``{"error": {"code", "message", "fields"}}``.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any
from urllib.parse import parse_qsl

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from drivebench.drive.errors import DriveError, InvalidRequest, PermissionCheckFailed
from drivebench.server.api.request import (
    MAX_BODY_BYTES,
    PARSED_BODY,
    BadBody,
    NotAdmin,
    Unauthorized,
    check_json,
    replay_body,
)

log = logging.getLogger("drivebench.api")

MAX_UPLOAD_BYTES = int(os.environ.get("DRIVEBENCH_MAX_UPLOAD_BYTES", 32 * 2**20))
MULTIPART_SLACK = 64 * 1024  # form boundaries and fields around the file
_HTTP_CODES = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    409: "conflict",
    413: "too-large",
    415: "unsupported-media-type",
    422: "invalid-field",
    429: "throttled",
}


class BodyTooLarge(StarletteHTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the body exceeds the limit of {limit} bytes for this route")


def body_limit(scope: Scope) -> int:
    """The most bytes a request to this route may send."""
    path, method = scope.get("path", ""), scope.get("method", "")
    if method == "POST" and (
        path == "/api/v1/files" or (path.startswith("/api/v1/files/") and path.endswith("/versions"))
    ):
        limit = getattr(getattr(scope.get("app"), "state", None), "max_upload_bytes", MAX_UPLOAD_BYTES)
        return int(limit) + MULTIPART_SLACK
    return MAX_BODY_BYTES


def _is_json(scope: Scope) -> bool:
    for key, value in scope.get("headers", ()):
        if key == b"content-type":
            ctype = value.decode("latin-1").split(";")[0].strip().lower()
            return ctype == "application/json" or ctype.endswith("+json")
    return False


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


# ---------------------------------------------------------------------------- rendering
def _fields(errors: list[Any]) -> tuple[list[str], str]:
    fields, messages = [], []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ()) if x not in ("body",)]
        name = ".".join(loc) or "body"
        fields.append(name)
        messages.append(f"{name}: {e.get('msg')}")
    return sorted(set(fields)), "; ".join(messages)


def error_parts(exc: BaseException) -> tuple[int, str, str, list[str], dict[str, str]]:
    """(status, code, message, fields, headers) for any exception: the whole error vocabulary in one place."""
    if isinstance(exc, Unauthorized):
        return 401, "unauthorized", str(exc), [], {"WWW-Authenticate": 'Bearer realm="drivebench"'}
    if isinstance(exc, NotAdmin):
        return 403, "forbidden", str(exc) or "this endpoint needs the admin token", [], {}
    if isinstance(exc, BadBody):
        return exc.status, "bad-body", str(exc), ["body"], {}
    if isinstance(exc, ValidationError | RequestValidationError):
        fields, message = _fields(list(exc.errors()))
        return 422, "invalid-field", message, fields, {}
    if isinstance(exc, DriveError):
        return exc.status, exc.code, str(exc), [], {}
    if isinstance(exc, PermissionCheckFailed):
        log.error("permission check failed: %s", exc)
        return 503, "permission-check-failed", "the permission check failed; no results are returned", [], {}
    if isinstance(exc, StarletteHTTPException):
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail, default=str)
        code = _HTTP_CODES.get(exc.status_code, f"http-{exc.status_code}")
        if exc.status_code == 400 and "parsing the body" in detail:
            code, detail = "bad-body", "the body could not be parsed: send a JSON object"
        return exc.status_code, code, detail, [], dict(exc.headers or {})
    log.error("unhandled error", exc_info=exc)
    return 500, "internal-error", f"{type(exc).__name__}: the request failed; the server is still up", [], {}


def error_response(exc: BaseException) -> JSONResponse:
    status, code, message, fields, headers = error_parts(exc)
    body = {"error": {"code": code, "message": message, "fields": fields}}
    return JSONResponse(body, status_code=status, headers=headers or None)


async def handle_error(request: Any, exc: Exception) -> JSONResponse:
    """The one exception handler every error class is registered with."""
    response = error_response(exc)
    if isinstance(exc, StarletteHTTPException) and exc.status_code == 405 and isinstance(request, Request):
        allowed = allowed_methods(request)
        if allowed:  # a path the document does not know (the console, MCP) keeps the router's own answer
            response.headers["Allow"] = allowed
    return response


_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}


def documented_operations(app: Any) -> list[tuple[re.Pattern[str], dict[str, frozenset[str]]]]:
    """The OpenAPI document as (path pattern, {method: the query parameters it declares}), built once per app."""
    table = getattr(app.state, "documented_operations", None)
    if table is None:
        table = []
        for path, item in app.openapi().get("paths", {}).items():
            pattern = re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$")
            methods = {
                method.upper(): frozenset(p["name"] for p in op.get("parameters", []) if p.get("in") == "query")
                for method, op in item.items()
                if method.upper() in _METHODS
            }
            table.append((pattern, methods))
        app.state.documented_operations = table
    return table


def allowed_methods(request: Request) -> str:
    """Every method the OpenAPI document declares at this path. The router answers 405 with the methods of the
    first route whose path matched, but a path such as ``/api/v1/files`` is served by several routes."""
    methods: set[str] = set()
    for pattern, declared in documented_operations(request.app):
        if pattern.match(request.url.path):
            methods |= set(declared)
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


def unknown_query_parameter(scope: Scope) -> str | None:
    """The first query parameter the documented operation does not declare (a typo such as ``?folfer=`` would
    otherwise be ignored and the request answered as if it had not been given). Paths the document does not
    describe (the console, MCP, the docs) are not judged here."""
    query = scope.get("query_string", b"")
    app = scope.get("app")
    if not query or app is None:
        return None
    method = "GET" if scope["method"] == "HEAD" else scope["method"]
    declared: set[str] | None = None
    for pattern, methods in documented_operations(app):
        if method in methods and pattern.match(scope["path"]):
            declared = (declared or set()) | methods[method]
    if declared is None:
        return None
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name not in declared:
            return name
    return None


HANDLED = (
    Unauthorized,
    NotAdmin,
    BadBody,
    ValidationError,
    RequestValidationError,
    DriveError,
    StarletteHTTPException,
)
# every error class the app renders with ``handle_error`` (``create_app`` registers it for each; the recall
# route's ASGI fast path renders the same classes with the same function)
RENDERED = (*HANDLED, PermissionCheckFailed)


# ---------------------------------------------------------------------------- the OpenAPI contract
_ERROR_DESCRIPTIONS = {
    400: "Malformed request: undecodable, malformed or too deeply nested body; a value the drive cannot use.",
    401: "Missing or invalid bearer token.",
    403: "The token may not do this.",
    404: "No such item, or one you may not list (the two answer alike).",
    409: "Conflicts with the current state.",
    413: "The body is larger than this route accepts.",
    415: "The body's Content-Type is not one this route reads.",
    422: "A field has a wrong type or value (named in `fields`).",
    429: "Throttled (only under the `throttle` fault profile); see Retry-After.",
    503: "The permission check failed, the drive is read-only after a failed commit, or an injected fault "
    "(`errors` profile).",
}
_ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare on every operation each error status it can answer, all as ``application/json``
    ``ErrorResponse`` (the route's own description wins where it gave one)."""
    for path, item in schema.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "put", "post", "patch", "delete"):
                continue
            if path == "/healthz":
                continue
            has_body = "requestBody" in op
            has_params = bool(op.get("parameters")) or has_body
            codes = {401, 403, 503}
            if has_params:
                codes |= {400, 422}
            if has_body or method != "get":
                codes |= {400, 413, 415}
            if "{" in path or path.startswith(("/api/v1", "/api/permissions")):
                codes.add(404)
            if method != "get" or path.startswith("/api/permissions"):
                codes.add(409)
            if path.startswith("/api/"):
                codes |= {429, 503}
            responses = op.setdefault("responses", {})
            for code in sorted(codes):
                entry = responses.setdefault(str(code), {"description": _ERROR_DESCRIPTIONS[code]})
                entry["content"] = {"application/json": {"schema": _ERROR_REF}}
    schema.setdefault("components", {}).setdefault("schemas", {}).setdefault("ErrorResponse", _error_schema())
    return schema


def _error_schema() -> dict[str, Any]:
    from drivebench.server.api.schemas import ErrorResponse

    js = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    return js


# ---------------------------------------------------------------------------- middleware
class BoundaryMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self._guarded(scope, receive, tracking_send)
        except Exception as exc:  # never let an error reach Starlette's 500 path (it drops the connection)
            if started:
                log.error("error after the response started", exc_info=exc)
                return
            await error_response(exc)(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        unknown = unknown_query_parameter(scope)
        if unknown is not None:
            await error_response(InvalidRequest(f"unknown query parameter {unknown[:64]!r}"))(scope, receive, send)
            return
        limit = body_limit(scope)
        length = _content_length(scope)
        if length is not None and length > limit:
            await error_response(BodyTooLarge(limit))(scope, receive, send)
            return
        if not _is_json(scope):
            await self.app(scope, _counting(receive, limit), send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await error_response(BodyTooLarge(limit))(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            checked = check_json(body)
        except BadBody as exc:
            await error_response(exc)(scope, receive, send)
            return
        if checked is not None:
            scope[PARSED_BODY] = checked  # read_json_object takes it from here: one parse per request
        await self.app(scope, replay_body(body, receive), send)


def _counting(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return wrapped
