"""Console and MCP hardening: sessions that end (idle, absolute) and that one token cannot use to sign others out,
a rate-limited sign-in, a ``Secure`` cookie behind a trusted TLS proxy only, ``Cache-Control: no-store`` on every
private answer, ``?as=`` and ``user_id`` answering alike for an existing and an unknown user, and an MCP Host check
that parses the header instead of matching its prefix."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from drivebench.drive.tokens import SECRET_ENV, make_token
from drivebench.server.api import create_app
from drivebench.server.console.session import (
    IDLE_ENV,
    LIFETIME_ENV,
    PER_TOKEN_ENV,
    SIGNINS_PER_ADDRESS_ENV,
    ConsoleSettings,
    Sessions,
)
from drivebench.server.process import free_port, spawn_server, start_in_thread
from drivebench.simulator.backend import Simulator
from tests.support.security import h, mcp_call, token

BASE = "http://127.0.0.1"  # an allowed MCP host (TestClient's default "testserver" is not)
USER, OTHER_USER, UNKNOWN_USER = "u001", "u004", "u999"
MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _client(sim: Simulator, address: str = "testclient") -> TestClient:
    return TestClient(create_app(sim), base_url=BASE, follow_redirects=False, client=(address, 50000))


def _sign_in(client: TestClient, tok: str) -> httpx.Response:
    return client.post("/ui/signin", data={"token": tok, "next": "/ui/"})


def _sid(response: httpx.Response) -> str:
    assert response.status_code == 303, response.text
    return response.cookies["drivebench_console"]


def _page(client: TestClient, sid: str) -> int:
    """The status of the console's home page with this session cookie (303: sent to the sign-in form)."""
    client.cookies.clear()
    client.cookies.set("drivebench_console", sid)
    r = client.get("/ui/")
    assert r.status_code == 200 or r.headers["location"].startswith("/ui/signin"), r.status_code
    return r.status_code


# ---------------------------------------------------------------------------- sessions
def test_one_tokens_10050_sign_ins_never_sign_the_admin_out(sim: Simulator) -> None:
    """The attack as reported (10,050 sign-ins with one user token), on the default store: the cap is per token."""
    store = Sessions()
    admin_sid, _ = store.create(sim.tokens.admin_token)
    user_sids = [store.create(token(sim, USER))[0] for _ in range(10_050)]
    assert store.get(admin_sid) is not None
    cap = ConsoleSettings().per_token
    assert 1 <= cap < 100 and len(store) == cap + 1  # the user holds `cap` sessions, the admin still one
    assert all(store.get(s) is None for s in user_sids[:-cap])  # the user's oldest were dropped...
    assert all(store.get(s) is not None for s in user_sids[-cap:])  # ...and its newest kept


def test_the_per_token_cap_drops_that_tokens_oldest_sessions_over_http(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PER_TOKEN_ENV, "3")
    with _client(sim) as c:
        admin = _sid(_sign_in(c, sim.tokens.admin_token))
        other = _sid(_sign_in(c, token(sim, OTHER_USER)))
        mine = [_sid(_sign_in(c, token(sim, USER))) for _ in range(5)]
        assert [_page(c, s) for s in mine] == [303, 303, 200, 200, 200]
        assert _page(c, admin) == _page(c, other) == 200


def test_sessions_end_when_idle_and_after_their_lifetime(sim: Simulator) -> None:
    assert (ConsoleSettings().idle_s, ConsoleSettings().lifetime_s) == (1800, 12 * 3600)  # the documented defaults
    clock = Clock()
    with _client(sim) as c:
        c.app.state.ui_sessions = Sessions(ConsoleSettings(), clock=clock)  # type: ignore[attr-defined]
        r = _sign_in(c, token(sim, USER))
        assert "Max-Age=43200" in r.headers["set-cookie"]  # the browser forgets it when the server would
        idle = _sid(r)
        clock.now += 1799
        assert _page(c, idle) == 200
        clock.now += 1799  # each request restarts the idle time
        assert _page(c, idle) == 200
        clock.now += 1800
        assert _page(c, idle) == 303  # 30 minutes without a request
        assert _page(c, idle) == 303  # and it stays ended
        busy = _sid(_sign_in(c, token(sim, USER)))
        for _ in range(43):  # a request every 1000 s: never idle, 43,000 s old
            clock.now += 1000
            assert _page(c, busy) == 200
        clock.now += 200
        assert _page(c, busy) == 303  # 12 hours after sign-in, however busy


def test_session_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, sim: Simulator) -> None:
    monkeypatch.setenv(IDLE_ENV, "60")
    monkeypatch.setenv(LIFETIME_ENV, "600")
    monkeypatch.setenv(PER_TOKEN_ENV, "2")
    monkeypatch.setenv(SIGNINS_PER_ADDRESS_ENV, "5")
    expected = ConsoleSettings(idle_s=60, lifetime_s=600, per_token=2, signins_per_address=5)
    assert ConsoleSettings.from_env() == expected
    monkeypatch.setenv(IDLE_ENV, "soon")
    with pytest.raises(ValueError, match=IDLE_ENV):
        create_app(sim)  # a bad value stops the server at start
    monkeypatch.setenv(IDLE_ENV, "0")
    with pytest.raises(ValueError, match=IDLE_ENV):
        ConsoleSettings.from_env()


def test_sign_in_is_rate_limited_per_client_address_and_per_token(sim: Simulator) -> None:
    clock = Clock()
    store = Sessions(ConsoleSettings(signins_per_address=4, signins_per_token=3), clock=clock)
    with _client(sim, "192.0.2.7") as c, _client(sim, "192.0.2.8") as d:
        c.app.state.ui_sessions = store  # type: ignore[attr-defined]
        d.app.state.ui_sessions = store  # type: ignore[attr-defined]
        assert [_sign_in(c, "dbu_" + "0" * 40).status_code for _ in range(4)] == [401] * 4
        refused = _sign_in(c, token(sim, USER))  # the address has spent its attempts: a valid token waits too
        assert refused.status_code == 429 and refused.headers["retry-after"] == "15"  # 4 a minute
        assert "set-cookie" not in refused.headers and "Too many sign-in attempts" in refused.text
        assert len(store) == 0
        clock.now += 15
        _sid(_sign_in(c, token(sim, USER)))
        # per token: from another address the token has what is left of its 3 (it spent 1 above); the third
        # attempt there is refused although that address has spent only 3 of its 4, and another token is not
        assert _sign_in(d, token(sim, USER)).status_code == 303
        assert _sign_in(d, token(sim, USER)).status_code == 303
        per_token = _sign_in(d, token(sim, USER))
        assert per_token.status_code == 429 and per_token.headers["retry-after"] == "20"  # 3 a minute
        assert _sign_in(d, token(sim, OTHER_USER)).status_code == 303
        assert len(store) == 4
    defaults = ConsoleSettings()
    assert (defaults.signins_per_address, defaults.signins_per_token) == (30, 10)  # as documented


def test_the_cookie_is_secure_behind_a_trusted_tls_proxy_only(sim: Simulator) -> None:
    def cookie(trusted: str, headers: dict[str, str]) -> str:
        with start_in_thread(sim, forwarded_allow_ips=trusted) as server:
            r = httpx.post(f"{server.url}/ui/signin", data={"token": token(sim, USER)}, headers=headers)
            assert r.status_code == 303
            return r.headers["set-cookie"]

    https = {"X-Forwarded-Proto": "https"}
    assert "Secure" in cookie("127.0.0.1", https)  # the proxy (here: this test, on loopback) is trusted
    assert "Secure" not in cookie("192.0.2.1", https)  # a header from anyone else is not believed
    assert "Secure" not in cookie("127.0.0.1", {})  # plain http without a proxy


# ---------------------------------------------------------------------------- no-store
def _surfaces(sim: Simulator) -> list[tuple[str, str, dict]]:
    user, admin = h(sim, USER), h(sim, "admin")
    recall = {"query": "预算", "top_k": 3}
    return [
        ("POST", "/api/mcp/recall", {"json": recall, "headers": user}),  # the ASGI fast path
        ("POST", "/api/mcp/recall", {"json": {"query": 1}, "headers": user}),  # its error answer
        ("POST", "/api/mcp/recall", {"json": recall}),  # 401
        ("POST", "/api/mcp/answer", {"json": recall, "headers": user}),
        ("GET", "/api/v1/files", {"headers": user}),
        ("GET", "/api/v1/files/d0001", {"headers": user}),
        ("GET", "/api/v1/files/d9999", {"headers": user}),
        ("GET", "/api/v1/changes", {"headers": user}),
        ("GET", "/api/v1/directory", {"headers": user}),
        ("GET", "/api/v1/access", {"headers": admin, "params": {"user_id": USER}}),
        ("GET", "/api/permissions/effective", {"headers": user, "params": {"path": "/rd"}}),
        ("GET", "/api/permissions/grants", {"headers": admin}),
        ("GET", "/_sim/stats", {"headers": admin}),
        ("GET", "/healthz", {}),
        ("POST", "/mcp/", {"json": MCP_INIT, "headers": {**MCP_ACCEPT, **user}}),
        ("GET", "/ui/", {"headers": user}),
        ("GET", "/ui/drive", {"headers": user}),
        ("GET", "/ui/recall", {"headers": user, "params": {"q": "预算"}}),
        ("GET", "/ui/doc/d9999", {"headers": user}),
        ("GET", "/ui/signin", {}),
        ("GET", "/ui/drive", {}),  # the redirect to the sign-in form
        ("POST", "/ui/signin", {"data": {"token": token(sim, USER)}}),  # the redirect that sets the cookie
    ]


@pytest.mark.parametrize("fast_path", [True, False])
def test_every_private_answer_says_no_store(sim: Simulator, fast_path: bool) -> None:
    with TestClient(create_app(sim, recall_fast_path=fast_path), base_url=BASE, follow_redirects=False) as c:
        for method, path, kwargs in _surfaces(sim):
            r = c.request(method, path, **kwargs)
            assert r.status_code < 500, (method, path, r.status_code)
            assert r.headers.get("cache-control") == "no-store", (method, path, r.status_code, r.headers)
        css = c.get("/ui/static/console.css")  # the same for everyone: may be cached
        assert css.status_code == 200 and "no-store" not in css.headers.get("cache-control", "")


# ---------------------------------------------------------------------------- view-as
def _same(a: httpx.Response, b: httpx.Response, a_name: str, b_name: str) -> None:
    assert a.status_code == b.status_code == 403
    assert a.text.replace(a_name, "X") == b.text.replace(b_name, "X")


def test_view_as_answers_alike_for_an_existing_and_an_unknown_user(client: TestClient, sim: Simulator) -> None:
    user = h(sim, USER)
    for path in ("/ui/", "/ui/drive", "/ui/recall?q=x"):
        sep = "&" if "?" in path else "?"
        known = client.get(f"{path}{sep}as={OTHER_USER}", headers=user)
        unknown = client.get(f"{path}{sep}as={UNKNOWN_USER}", headers=user)
        _same(known, unknown, OTHER_USER, UNKNOWN_USER)
    for field, known_value, unknown_value in (
        ("user_id", OTHER_USER, UNKNOWN_USER),
        ("user_role", "finance", "astronaut"),  # a role u001 does not hold, and no role at all
        ("department", "finance", "mars"),
    ):
        bodies = [{"query": "预算", field: v} for v in (known_value, unknown_value)]
        for path in ("/api/mcp/recall", "/api/mcp/answer"):
            known, unknown = (client.post(path, json=b, headers=user) for b in bodies)
            _same(known, unknown, known_value, unknown_value)
        known_mcp, unknown_mcp = (mcp_call(sim, USER, "recall", b) for b in bodies)
        assert known_mcp[0] and unknown_mcp[0]
        assert known_mcp[1].replace(known_value, "X") == unknown_mcp[1].replace(unknown_value, "X")
        assert "(403)" in known_mcp[1]
    # a service token may name anyone: an unknown user is still its 400
    r = client.post("/api/mcp/recall", json={"query": "预算", "user_id": UNKNOWN_USER}, headers=h(sim, "eval"))
    assert r.status_code == 400


# ---------------------------------------------------------------------------- MCP Host
@pytest.fixture(scope="module")
def mcp_client(sim: Simulator) -> Iterator[TestClient]:
    with TestClient(create_app(sim), base_url=BASE) as c:
        yield c


BAD_HOSTS = [
    "localhost:1@evil.example",  # userinfo: the SDK's prefix match took it for localhost with a port
    "localhost.evil.example",
    "127.0.0.1.nip.io",
    "localhost:evil.example",
    "localhost:",
    "localhost:99999",
    "localhost:80/x",
    "evil.example",
    "[::1].evil.example",
]
GOOD_HOSTS = ["localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "127.0.0.1"]


def test_mcp_host_check_refuses_userinfo_and_suffix_tricks(mcp_client: TestClient, sim: Simulator) -> None:
    auth = {**MCP_ACCEPT, **h(sim, USER)}
    for host in BAD_HOSTS:
        r = mcp_client.post("/mcp/", json=MCP_INIT, headers={**auth, "Host": host})
        assert r.status_code == 421, (host, r.status_code)
    for host in GOOD_HOSTS:
        r = mcp_client.post("/mcp/", json=MCP_INIT, headers={**auth, "Host": host})
        assert r.status_code == 200, (host, r.status_code, r.text[:200])
    for origin in ("http://localhost:1@evil.example", "http://localhost.evil.example", "https://127.0.0.1.nip.io"):
        r = mcp_client.post("/mcp/", json=MCP_INIT, headers={**auth, "Origin": origin})
        assert r.status_code == 403, (origin, r.status_code)
    r = mcp_client.post("/mcp/", json=MCP_INIT, headers={**auth, "Origin": "http://localhost:3000"})
    assert r.status_code == 200


def test_mcp_host_check_over_real_http(sim: Simulator) -> None:
    """The exact header from the report, through uvicorn's own parsing."""
    with start_in_thread(sim) as server:
        auth = {**MCP_ACCEPT, **h(sim, USER)}
        bad = httpx.post(f"{server.url}/mcp/", json=MCP_INIT, headers={**auth, "Host": "localhost:1@evil.example"})
        assert bad.status_code == 421
        good = httpx.post(f"{server.url}/mcp/", json=MCP_INIT, headers={**auth, "Host": f"localhost:{server.port}"})
        assert good.status_code == 200


def test_serve_passes_the_proxy_and_session_options_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """``drivebench serve --forwarded-allow-ips`` reaches uvicorn (loopback, trusted by default, is not listed:
    its X-Forwarded-Proto is ignored) and ``--console-session-lifetime`` the session store (the cookie's Max-Age)."""
    secret = "console-hardening-test-secret-0123456789"
    monkeypatch.setenv(SECRET_ENV, secret)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "drivebench", "serve", "--corpus", "seed", "--pipeline", "bm25"]
    args += ["--embedder", "hash", "--port", str(port), "--no-access-log", "--forwarded-allow-ips", "192.0.2.1"]
    args += ["--console-session-lifetime", "600"]
    proc = spawn_server(args, url, "drivebench serve", timeout=180)
    try:
        tok = make_token("seed", USER, secret.encode())
        r = httpx.post(f"{url}/ui/signin", data={"token": tok}, headers={"X-Forwarded-Proto": "https"})
        assert r.status_code == 303 and "Max-Age=600" in r.headers["set-cookie"]
        assert "Secure" not in r.headers["set-cookie"]
    finally:
        proc.terminate()
        proc.wait(30)
