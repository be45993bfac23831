"""Who a console request acts as: the API's bearer token, or a session cookie set by the sign-in form.

* ``Authorization: Bearer <token>`` works on every console page, exactly as on the API (scripts, tests).
* The sign-in form takes a token, checks it with ``sim.tokens`` and sets ``drivebench_console``: a random
  session id (HttpOnly, SameSite=Strict, Path=/ui), never the token itself. The server keeps
  ``session id -> (token, CSRF token)`` in memory (a restart signs everyone out) and resolves the token again
  on every request, so a token the simulator no longer knows (a reseed, another secret) stops working at once.
* State-changing forms (sign-out, faults) carry the session's CSRF token in a hidden field; a POST whose
  ``Origin`` header names another origin is refused too. A bearer request needs no CSRF token (a browser
  never attaches that header by itself).
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from fastapi import Request

from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.auth import NotAdmin, Unauthorized

COOKIE = "drivebench_console"
MAX_SESSIONS = 10_000  # the oldest is dropped beyond this (signed out)


@dataclass(frozen=True)
class Session:
    token: str
    csrf: str


class Sessions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: OrderedDict[str, Session] = OrderedDict()

    def create(self, token: str) -> tuple[str, Session]:
        sid, session = secrets.token_urlsafe(32), Session(token, secrets.token_urlsafe(32))
        with self._lock:
            self._by_id[sid] = session
            while len(self._by_id) > MAX_SESSIONS:
                self._by_id.popitem(last=False)
        return sid, session

    def get(self, sid: str) -> Session | None:
        with self._lock:
            return self._by_id.get(sid)

    def drop(self, sid: str) -> None:
        with self._lock:
            self._by_id.pop(sid, None)


def sessions(request: Request) -> Sessions:
    state = request.app.state
    if not hasattr(state, "ui_sessions"):
        state.ui_sessions = Sessions()
    return state.ui_sessions  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Identity:
    token: TokenInfo
    session: Session | None  # None: the request came with a bearer header


def identify(request: Request) -> Identity | None:
    """The request's identity; None when it has neither a bearer header nor a live session (sign in).
    A bearer header that is present but invalid is a 401, as on the API."""
    tokens = request.app.state.sim.tokens
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthorized("missing bearer token: send Authorization: Bearer <token>")
        info = tokens.resolve(value.strip())
        if info is None:
            raise Unauthorized("invalid bearer token")
        return Identity(info, None)
    sid = request.cookies.get(COOKIE)
    session = sessions(request).get(sid) if sid else None
    if session is None:
        return None
    info = tokens.resolve(session.token)
    if info is None:
        return None
    return Identity(info, session)


def check_origin(request: Request) -> None:
    """A state-changing request from another origin is refused (the session cookie is SameSite=Strict too)."""
    origin = request.headers.get("origin")
    if origin is None or (origin == "null" and request.headers.get("authorization")):
        return
    own = f"{request.url.scheme}://{request.url.netloc}"
    if origin != own:
        raise NotAdmin(f"cross-origin request refused (Origin {origin})")


def check_csrf(request: Request, identity: Identity, sent: str | None) -> None:
    """The form's CSRF token must be the session's (bearer requests carry none)."""
    check_origin(request)
    if identity.session is None:
        return
    if not sent or not hmac.compare_digest(sent, identity.session.csrf):
        raise NotAdmin("the form's CSRF token is missing or stale: reload the page and try again")
