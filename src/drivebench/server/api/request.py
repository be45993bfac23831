"""What a router reads of a request: the bearer token it acts with and its body as a JSON object.

The principal comes from the token, never from the body alone (``current_token``: 401 without a valid one).

The body (``read_json_object``) is read whatever Content-Type the client sent. The vendor's documented call is
``curl -d '{...}'`` with no Content-Type, which curl sends as ``application/x-www-form-urlencoded``. So a JSON
object is accepted under JSON, form-urlencoded, text/plain or no content type; a genuine form body
(``query=...&top_k=5``) is accepted too. The boundary reads and checks a JSON body first (``check_json``) and
hands it on with ``replay_body``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import Message, Receive

from drivebench.drive.tokens import TokenInfo

bearer = HTTPBearer(auto_error=False, description="A corpus user's token, the evaluation token or the admin token.")


class Unauthorized(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)


class NotAdmin(Exception):
    pass


def current_token(request: Request, credentials: HTTPAuthorizationCredentials | None) -> TokenInfo:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("missing bearer token: send Authorization: Bearer <token>")
    info = request.app.state.sim.tokens.resolve(credentials.credentials)
    if info is None:
        raise Unauthorized("invalid bearer token")
    return info


_TEXTUAL = {"", "application/json", "application/x-www-form-urlencoded", "text/plain"}
MAX_BODY_BYTES = 1 << 20
MAX_JSON_DEPTH = 32


class BadBody(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str) -> Any:
    """``json.loads`` bounded: no NaN/Infinity literals, at most ``MAX_JSON_DEPTH`` levels (else BadBody)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise BadBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise BadBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


PARSED_BODY = "drivebench.parsed_json"  # scope key: (body, its parsed JSON), set by the boundary's check


def check_json(raw: bytes) -> tuple[bytes, Any] | None:
    """Raise ``BadBody`` (400) unless ``raw`` is empty or UTF-8 JSON within the bounds of ``parse_json``;
    returns ``(raw, parsed)`` (None for an empty body), which ``read_json_object`` reuses instead of parsing
    the same bytes again."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadBody(f"body is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        return None  # the route says what it needs
    try:
        return raw, parse_json(text)
    except ValueError as exc:
        raise BadBody(f"malformed JSON: {exc}") from None


def _form_to_object(text: str) -> dict[str, Any]:
    fields = parse_qs(text, keep_blank_values=True, strict_parsing=True)
    obj: dict[str, Any] = {k: v[-1] for k, v in fields.items()}
    if isinstance(obj.get("top_k"), str) and obj["top_k"].strip().lstrip("-").isdigit():
        obj["top_k"] = int(obj["top_k"])
    return obj


async def read_json_object(request: Request) -> dict[str, Any]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype not in _TEXTUAL and not ctype.endswith("+json"):
        raise BadBody(f"unsupported Content-Type {ctype!r}: send a JSON object", status=415)
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise BadBody(f"body larger than {MAX_BODY_BYTES} bytes", status=413)
    checked = request.scope.get(PARSED_BODY)
    if checked is not None and checked[0] == raw:  # the boundary parsed these bytes already (bounded, UTF-8)
        obj = checked[1]
        if not isinstance(obj, dict):
            raise BadBody(f"the body must be a JSON object, not {type(obj).__name__}")
        return obj
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadBody(f"body is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise BadBody('empty body: send a JSON object such as {"query": "...", "top_k": 10}')
    try:
        obj = parse_json(text)
    except json.JSONDecodeError as exc:
        if ctype == "application/x-www-form-urlencoded" and "=" in text and not text.lstrip().startswith(("{", "[")):
            try:
                return _form_to_object(text)
            except ValueError:
                pass
        raise BadBody(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        raise BadBody(f"malformed JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise BadBody(f"the body must be a JSON object, not {type(obj).__name__}")
    return obj


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body a middleware already read, then defers to the real one."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
