"""Who a console request acts as: the API's bearer token, or a session cookie set by the sign-in form.

* ``Authorization: Bearer <token>`` works on every console page, exactly as on the API (scripts, tests).
* The sign-in form takes a token, checks it with ``sim.tokens`` and sets ``drivebench_console``: a random
  session id (HttpOnly, SameSite=Strict, Path=/ui, ``Secure`` whenever the request came over https, directly or
  through a proxy ``serve --forwarded-allow-ips`` trusts), never the token itself. The server keeps
  ``session id -> (token, CSRF token, times)`` in memory (a restart signs everyone out) and resolves the token
  again on every request, so a token the simulator no longer knows (a reseed, another secret) stops working.
* A session ends after ``idle_s`` without a request (default 30 min) and ``lifetime_s`` after sign-in whatever
  happens (default 12 h). One token holds at most ``per_token`` live sessions (default 10): a new sign-in past
  that drops the oldest session **of the same token**, never another token's, so signing in over and over with
  one token cannot sign anyone else out. Memory is bounded by (tokens x ``per_token``); expired sessions are
  swept as new ones are made.
* Sign-in is rate limited per client address (30 a minute) and per valid token (10 a minute): token buckets of
  that size refilled over the minute (``ConsoleSettings``). Past the limit the form answers 429 with
  ``Retry-After`` and creates no session.
* The settings come from ``DRIVEBENCH_CONSOLE_*`` variables (``ConsoleSettings.from_env``; ``drivebench serve
  --console-idle-timeout / --console-session-lifetime`` set two of them).
* State-changing forms (sign-out, faults) carry the session's CSRF token in a hidden field; a POST whose
  ``Origin`` header names another origin is refused too. A bearer request needs no CSRF token (a browser
  never attaches that header by itself).
"""

from __future__ import annotations

import hmac
import math
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request

from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.request import NotAdmin, Unauthorized

COOKIE = "drivebench_console"
ENV_PREFIX = "DRIVEBENCH_CONSOLE_"
IDLE_ENV = ENV_PREFIX + "IDLE_TIMEOUT"
LIFETIME_ENV = ENV_PREFIX + "SESSION_LIFETIME"
PER_TOKEN_ENV = ENV_PREFIX + "SESSIONS_PER_TOKEN"
SIGNINS_PER_ADDRESS_ENV = ENV_PREFIX + "SIGNINS_PER_ADDRESS"
SIGNINS_PER_TOKEN_ENV = ENV_PREFIX + "SIGNINS_PER_TOKEN"
MAX_LIMITER_KEYS = 10_000  # client addresses (or tokens) whose sign-in bucket is remembered
SWEEP_EVERY_S = 60.0  # expired sessions are removed at most this often (on a sign-in)

Clock = Callable[[], float]


def _env_number(name: str, default: float, *, minimum: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: a number, not {text!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name}: at least {minimum:g}, not {text!r}")
    return value


@dataclass(frozen=True)
class ConsoleSettings:
    idle_s: float = 30 * 60.0  # a session unused this long is signed out
    lifetime_s: float = 12 * 3600.0  # and every session this long after its sign-in
    per_token: int = 10  # live sessions one token may hold (the oldest of that token's is dropped)
    # sign-in attempts a minute (a bucket that size, refilled over the minute): per client address, which may be
    # a whole office behind one proxy, and per valid token, which is one user
    signins_per_address: int = 30
    signins_per_token: int = 10

    @classmethod
    def from_env(cls) -> ConsoleSettings:
        d = cls()
        return cls(
            idle_s=_env_number(IDLE_ENV, d.idle_s, minimum=1),
            lifetime_s=_env_number(LIFETIME_ENV, d.lifetime_s, minimum=1),
            per_token=int(_env_number(PER_TOKEN_ENV, d.per_token, minimum=1)),
            signins_per_address=int(_env_number(SIGNINS_PER_ADDRESS_ENV, d.signins_per_address, minimum=1)),
            signins_per_token=int(_env_number(SIGNINS_PER_TOKEN_ENV, d.signins_per_token, minimum=1)),
        )


class RateLimiter:
    """Token buckets by key: ``burst`` attempts at once, refilled at ``per_s`` a second. The least recently
    used keys are forgotten past ``max_keys`` (memory stays bounded; a forgotten key starts full again)."""

    def __init__(self, burst: int, per_s: float, clock: Clock, max_keys: int = MAX_LIMITER_KEYS) -> None:
        self.burst, self.per_s, self.clock, self.max_keys = float(burst), per_s, clock, max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)

    def take(self, key: str) -> float | None:
        """Spend one attempt for ``key``: None when allowed, else the seconds until the next one is."""
        now = self.clock()
        tokens, at = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.per_s)
        allowed = tokens >= 1.0
        self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return None if allowed else (1.0 - tokens) / self.per_s


@dataclass
class Session:
    token: str
    csrf: str
    created: float
    last_seen: float


class Sessions:
    """The live console sessions and the sign-in limits (``ConsoleSettings``), on an injectable monotonic clock."""

    def __init__(self, settings: ConsoleSettings | None = None, clock: Clock = time.monotonic) -> None:
        self.settings = settings or ConsoleSettings()
        self.clock = clock
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}
        self._by_token: dict[str, OrderedDict[str, None]] = {}  # token -> its session ids, oldest first
        by_address, by_token = self.settings.signins_per_address, self.settings.signins_per_token
        self._by_address = RateLimiter(by_address, by_address / 60.0, clock)
        self._by_signin_token = RateLimiter(by_token, by_token / 60.0, clock)
        self._swept = clock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)

    def signin_wait(self, address: str, token: str | None) -> float | None:
        """Spend one sign-in attempt for the client address and, when it is a valid one, the token: None when
        allowed, else the seconds to wait (``Retry-After``)."""
        with self._lock:
            wait = self._by_address.take(address)
            if wait is None and token is not None:
                wait = self._by_signin_token.take(token)
            return wait

    def create(self, token: str) -> tuple[str, Session]:
        now = self.clock()
        sid = secrets.token_urlsafe(32)
        session = Session(token, secrets.token_urlsafe(32), now, now)
        with self._lock:
            if now - self._swept >= SWEEP_EVERY_S:
                self._sweep(now)
            for old in [s for s in self._by_token.get(token, ()) if self._expired(self._by_id[s], now)]:
                self._remove(old)
            while len(self._by_token.get(token, ())) >= self.settings.per_token:  # this token's oldest only
                self._remove(next(iter(self._by_token[token])))
            self._by_id[sid] = session
            self._by_token.setdefault(token, OrderedDict())[sid] = None
        return sid, session

    def get(self, sid: str) -> Session | None:
        """The live session (its idle time restarts), or None: unknown, signed out or expired."""
        now = self.clock()
        with self._lock:
            session = self._by_id.get(sid)
            if session is None:
                return None
            if self._expired(session, now):
                self._remove(sid)
                return None
            session.last_seen = now
            return session

    def drop(self, sid: str) -> None:
        with self._lock:
            if sid in self._by_id:
                self._remove(sid)

    def _expired(self, session: Session, now: float) -> bool:
        s = self.settings
        return now - session.last_seen >= s.idle_s or now - session.created >= s.lifetime_s

    def _remove(self, sid: str) -> None:
        session = self._by_id.pop(sid)
        mine = self._by_token.get(session.token)
        if mine is not None:
            mine.pop(sid, None)
            if not mine:
                del self._by_token[session.token]

    def _sweep(self, now: float) -> None:
        self._swept = now
        for sid in [sid for sid, s in self._by_id.items() if self._expired(s, now)]:
            self._remove(sid)


def sessions(request: Request) -> Sessions:
    state = request.app.state
    if not hasattr(state, "ui_sessions"):
        state.ui_sessions = Sessions(ConsoleSettings.from_env())
    return state.ui_sessions


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
