"""The console in headless Chromium (one browser session for the module, driven through ``chromedriver``).

Two users sign in through the form and each sees exactly the documents they may preview, never the name of one
they may not; the playground shows what ``POST /api/mcp/recall`` returns; the "withheld" list appears for the
admin viewing as a user and never for the user; the admin switches a fault through the CSRF-protected form.
After every step the browser's own logs are read: no request left the server's origin and the pages logged
nothing to the console. A control page proves both logs really capture a console error and an off-origin request.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from drivebench.server.process import RunningServer
from drivebench.simulator.backend import Simulator
from tests.support.console import DENIED_DOC, DENIED_USER, USER_A, USER_B, forbidden_names, previewable, token
from tests.support.webdriver import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUERY = "加密模块设计说明"
ENTER, TAB = "\ue007", "\ue004"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium"))
    try:
        yield b
    finally:
        b.close()


def assert_clean(browser: Browser, origin: str, allow: tuple[str, ...] = ()) -> None:
    """Since the last check: every request went to ``origin`` and nothing was logged to the console (but
    the expected ``allow`` messages, e.g. the 404 of a page that is meant to be one)."""
    network = [u for u in browser.requests() if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")]
    off = [u for u in network if not u.startswith(origin + "/")]  # chrome:// and data: never leave the browser
    assert not off, off
    logged = [e["message"] for e in browser.console() if not any(a in e["message"] for a in allow)]
    assert not logged, logged


def sign_in(browser: Browser, base: str, tok: str, start: str = "/ui/drive") -> None:
    """Through the form, from a page that needs a session (the console redirects to the form and back)."""
    browser.delete_cookies()
    browser.get(base + start)
    assert "/ui/signin?next=" in browser.url
    field = browser.find("#token")
    browser.type(field, tok)
    browser.keys(field, ENTER)  # the keyboard submits the form
    assert browser.wait("#who")
    assert browser.url == base + start


def test_control_the_logs_catch_console_errors_and_off_origin_requests(browser: Browser) -> None:
    page = "<script>console.error('control-error')</script><img src='http://offsite.example/x.png'>"
    browser.get("data:text/html," + quote(page))
    assert any("offsite.example" in u for u in browser.requests())
    assert any("control-error" in e["message"] for e in browser.console())


@pytest.mark.parametrize("user", [USER_A, USER_B])
def test_each_user_signs_in_and_sees_only_their_documents(
    browser: Browser, ui_server: RunningServer, ui_sim: Simulator, user: str
) -> None:
    base = ui_server.url
    sign_in(browser, base, token(ui_sim, user))
    assert browser.text(browser.find("#who")) == user
    cookie = next(c for c in browser.cookies() if c["name"] == "drivebench_console")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    forbidden = forbidden_names(ui_sim, user)
    folders = [browser.attribute(a, "href") for a in browser.find_all(".tree a")]
    assert len(folders) >= 3
    shown: set[str] = set()
    for href in folders:
        browser.get(href if href and href.startswith("http") else base + str(href))
        source = browser.source
        shown |= set(re.findall(r'data-doc-id="([^"]+)"', source))
        leaked = [n for n in forbidden if n in source or html.escape(n) in source]
        assert not leaked, (href, leaked)
    allowed = previewable(ui_sim, user)
    assert shown == allowed  # every document it may preview (live or in the trash), and nothing else
    doc = sorted(allowed)[0]
    browser.get(f"{base}/ui/doc/{doc}")
    assert browser.find_all("#preview details") and browser.find_all("#versions tbody tr")
    assert not [n for n in forbidden if n in browser.source or html.escape(n) in browser.source]
    assert_clean(browser, base)


def test_keyboard_skip_link_then_every_control_is_reachable(
    browser: Browser, ui_server: RunningServer, ui_sim: Simulator
) -> None:
    base = ui_server.url
    sign_in(browser, base, token(ui_sim, USER_A), "/ui/drive")
    body = browser.find("body")
    browser.keys(body, TAB)
    first = browser.active_element()
    assert (
        browser.attribute(first, "class") == "skip"
        and browser.attribute(first, "href", prop=True) == base + "/ui/drive#main"
    )
    browser.keys(first, ENTER)
    assert browser.attribute(browser.active_element(), "id") == "main"
    reached = set()
    element = browser.find(".bar .brand")
    for _ in range(12):  # Tab walks the navigation, the sign-out button and the as-of form, in order
        browser.keys(element, TAB)
        element = browser.active_element()
        reached.add(
            browser.attribute(element, "href", prop=True) or browser.attribute(element, "name") or browser.text(element)
        )
    assert {base + "/ui/drive", base + "/ui/recall", "as_of", "Apply"} <= reached, reached
    assert_clean(browser, base)


def test_playground_shows_what_the_api_returns_and_never_a_withheld_list_to_a_user(
    browser: Browser, ui_server: RunningServer, ui_sim: Simulator
) -> None:
    base, tok = ui_server.url, token(ui_sim, DENIED_USER)
    sign_in(browser, base, tok, "/ui/recall")
    browser.type(browser.find("#q"), QUERY)
    browser.type(browser.find("#top_k"), "5")
    browser.click(browser.find("#ask"))
    browser.wait("#results li")
    rows = [
        (
            browser.attribute(li, "data-doc-id"),
            browser.attribute(li, "data-version-id"),
            browser.attribute(li, "data-score"),
        )
        for li in browser.find_all("#results li")
    ]
    api = httpx.post(
        f"{base}/api/mcp/recall", json={"query": QUERY, "top_k": 5}, headers={"Authorization": f"Bearer {tok}"}
    ).json()
    assert rows and rows == [(r["doc_id"], r["version_id"], str(r["score"])) for r in api["results"]]
    source = browser.source
    assert "withheld" not in source.lower() and not browser.find_all("#withheld")
    assert ui_sim.drive.documents[DENIED_DOC].name not in source
    # a forbidden document's page is the same 404 as a missing one, and names nothing
    browser.get(f"{base}/ui/doc/{DENIED_DOC}")
    assert "404" in browser.text(browser.find("h1"))
    assert ui_sim.drive.documents[DENIED_DOC].name not in browser.source
    assert_clean(
        browser,
        base,
        allow=(f"/ui/doc/{DENIED_DOC} - Failed to load resource: the server responded with a status of 404",),
    )


def test_admin_views_as_a_user_and_sees_what_was_withheld_and_why(
    browser: Browser, ui_server: RunningServer, ui_sim: Simulator
) -> None:
    base = ui_server.url
    sign_in(browser, base, ui_sim.tokens.admin_token, "/ui/recall")
    browser.get(f"{base}/ui/recall?as={DENIED_USER}&q={quote(QUERY)}&top_k=5")
    assert browser.text(browser.find("#viewing-as")) == DENIED_USER
    withheld = {
        browser.attribute(tr, "data-doc-id"): browser.attribute(tr, "data-reason")
        for tr in browser.find_all("#withheld tbody tr")
    }
    assert withheld.get(DENIED_DOC) == "denied", withheld
    assert "deny preview to user:u010" in browser.text(browser.find("#withheld"))
    shown = [browser.attribute(li, "data-doc-id") for li in browser.find_all("#results li")]
    assert DENIED_DOC not in shown and set(shown) <= previewable(ui_sim, DENIED_USER)
    assert_clean(browser, base)


def test_admin_reads_runs_and_switches_a_fault_by_form(
    browser: Browser, ui_server: RunningServer, ui_sim: Simulator, tmp_path: Path
) -> None:
    base = ui_server.url
    sign_in(browser, base, ui_sim.tokens.admin_token, "/ui/runs")
    assert len(browser.find_all("#runs tbody tr")) == 3
    browser.click(browser.find("form[action='/ui/runs/trend'] button"))
    assert browser.wait("svg#trend") and len(browser.find_all("#trend-points tbody tr")) == 3
    browser.get(f"{base}/ui/runs/compare?a=latest&b=latest~1")
    assert len(browser.find_all("#compare tbody tr")) >= 3
    browser.get(f"{base}/ui/runs/latest/report")
    assert browser.find_all("svg")
    assert_clean(browser, base)
    try:
        browser.get(f"{base}/ui/faults")
        browser.type(browser.find("#fault-leaky-acl input[name='params']"), "share=0.5")
        browser.click(browser.find("#fault-leaky-acl button"))
        assert browser.wait("#active-faults tr[data-fault='leaky-acl']")
        assert browser.url.startswith(f"{base}/ui/faults")
        assert [f.name for f in ui_sim.faults.active] == ["leaky-acl"]
        browser.click(browser.find("#clear-faults"))
        assert browser.wait("#clean") and not ui_sim.faults.active
    finally:
        ui_sim.faults.replace([])
    assert_clean(browser, base)
