"""The console over HTTP (httpx against a real uvicorn server): sign-in and its cookie, who sees what, errors
that do not reveal forbidden documents, CSRF on fault switching, the run history, and a bounded crawl of every
same-origin link that must never name a document the user may not preview."""

from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from drivebench.server.process import RunningServer
from drivebench.simulator.backend import Simulator
from tests.support.console import DENIED_DOC, DENIED_USER, USER_A, USER_B, forbidden_names, previewable, token

pytestmark = [pytest.mark.e2e]

CRAWL_LIMIT = 200
QUERY = "加密模块设计说明"  # matches d0009, which Emily (u010) is explicitly denied


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.csrf: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("a", "link") and a.get("href"):
            self.hrefs.append(str(a["href"]))
        if tag == "input" and a.get("name") == "csrf" and a.get("value"):
            self.csrf = a["value"]


def parse(html: str) -> Links:
    p = Links()
    p.feed(html)
    return p


@contextmanager
def signed_in(server: RunningServer, tok: str) -> Iterator[httpx.Client]:
    """A client that signed in through the form (the session cookie, not a bearer header)."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post("/ui/signin", data={"token": tok, "next": "/ui/drive"})
        assert r.status_code == 303 and r.headers["location"] == "/ui/drive", r.text[:500]
        yield client


def crawl(client: httpx.Client, base: str, start: str) -> dict[str, httpx.Response]:
    """Every same-origin page reachable from ``start`` by links (at most ``CRAWL_LIMIT``)."""
    origin = urlsplit(base).netloc
    seen: dict[str, httpx.Response] = {}
    queue = deque([urljoin(base, start)])
    while queue and len(seen) < CRAWL_LIMIT:
        url = queue.popleft()
        if url in seen:
            continue
        r = client.get(url)
        seen[url] = r
        if "text/html" not in r.headers.get("content-type", ""):
            continue
        for href in parse(r.text).hrefs:
            target = urljoin(url, href).split("#", 1)[0]
            if urlsplit(target).netloc == origin and target not in seen and urlsplit(target).scheme == "http":
                queue.append(target)
    return seen


def named(text: str, names: set[str]) -> list[str]:
    """The names ``text`` shows, as written or HTML-escaped."""
    return [n for n in names if n in text or html.escape(n) in text]


def test_control_the_name_check_sees_a_name_a_page_shows(ui_server: RunningServer, ui_sim: Simulator) -> None:
    """The admin's withheld list names d0009 for u010: the same check on that page finds it (it is not vacuous)."""
    page = httpx.get(
        f"{ui_server.url}/ui/recall",
        params={"q": QUERY, "as": DENIED_USER},
        headers={"Authorization": f"Bearer {ui_sim.tokens.admin_token}"},
    )
    assert ui_sim.drive.documents[DENIED_DOC].name in named(page.text, forbidden_names(ui_sim, DENIED_USER))


@pytest.mark.parametrize(
    ("user", "start"),
    [(USER_A, "/ui/"), (DENIED_USER, "/ui/"), (DENIED_USER, "/ui/?as_of=2026-06-01T00:00:00Z")],
    ids=["u001", "u010", "u010-as-of-june"],
)
def test_crawl_never_names_a_document_the_user_may_not_preview(
    ui_server: RunningServer, ui_sim: Simulator, user: str, start: str
) -> None:
    forbidden = forbidden_names(ui_sim, user)
    assert len(forbidden) >= 5  # the corpus really hides documents from this user
    with signed_in(ui_server, token(ui_sim, user)) as client:
        pages = crawl(client, ui_server.url, start)
    assert 10 <= len(pages) < CRAWL_LIMIT, len(pages)  # it reached the documents, and it was not cut short
    docs_seen = {m for r in pages.values() for m in re.findall(r'data-doc-id="([^"]+)"', r.text)}
    assert docs_seen and docs_seen <= previewable(ui_sim, user)
    for url, r in pages.items():
        assert r.status_code in (200, 403), (url, r.status_code)  # 403: runs, faults (service tokens only)
        leaked = named(r.text, forbidden)
        assert not leaked, (url, leaked)
    if user == DENIED_USER and "as_of" not in start:
        assert ui_sim.drive.documents[DENIED_DOC].name in forbidden  # the deny is part of what was checked


def test_sign_in_sets_a_strict_http_only_session_cookie_not_the_token(
    ui_server: RunningServer, ui_sim: Simulator
) -> None:
    tok = token(ui_sim, USER_A)
    with httpx.Client(base_url=ui_server.url, timeout=60) as client:
        r = client.get("/ui/drive?folder=/rd")
        assert r.status_code == 303 and r.headers["location"].startswith("/ui/signin?next=")
        bad = client.post("/ui/signin", data={"token": "dbu_" + "0" * 40})
        assert bad.status_code == 401 and "set-cookie" not in bad.headers
        r = client.post("/ui/signin", data={"token": tok, "next": "https://elsewhere.example/"})
        assert r.status_code == 303 and r.headers["location"] == "/ui/"  # never an open redirect
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
        assert tok not in cookie
        page = client.get("/ui/")
        assert page.status_code == 200 and f'id="who">{USER_A}<' in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
        csrf = parse(page.text).csrf
        assert csrf
        sid = client.cookies["drivebench_console"]
        assert client.post("/ui/signout", data={"csrf": "forged"}).status_code == 403
        assert client.post("/ui/signout", data={"csrf": csrf}).status_code == 303
    replay = httpx.get(f"{ui_server.url}/ui/", cookies={"drivebench_console": sid})
    assert replay.status_code == 303  # the session is gone on the server, not only from the browser


def test_bearer_header_works_and_a_bad_one_is_401(ui_server: RunningServer, ui_sim: Simulator) -> None:
    headers = {"Authorization": f"Bearer {token(ui_sim, USER_B)}"}
    ok = httpx.get(f"{ui_server.url}/ui/drive", params={"folder": "/finance/confidential"}, headers=headers)
    shown = set(re.findall(r'data-doc-id="([^"]+)"', ok.text))
    assert ok.status_code == 200 and shown and shown <= previewable(ui_sim, USER_B)
    bad = httpx.get(f"{ui_server.url}/ui/drive", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and "invalid bearer token" in bad.text


def test_forbidden_and_missing_documents_answer_alike(ui_server: RunningServer, ui_sim: Simulator) -> None:
    headers = {"Authorization": f"Bearer {token(ui_sim, DENIED_USER)}"}
    name = ui_sim.drive.documents[DENIED_DOC].name
    forbidden = httpx.get(f"{ui_server.url}/ui/doc/{DENIED_DOC}", headers=headers)
    missing = httpx.get(f"{ui_server.url}/ui/doc/d9999", headers=headers)
    assert forbidden.status_code == missing.status_code == 404
    message = re.search(r'id="error-message">([^<]*)<', forbidden.text)
    other = re.search(r'id="error-message">([^<]*)<', missing.text)
    assert message and other and message.group(1).replace(DENIED_DOC, "X") == other.group(1).replace("d9999", "X")
    assert name not in forbidden.text
    # a user may not view as someone else: the API's 403, and nothing of theirs
    r = httpx.get(f"{ui_server.url}/ui/drive?as={USER_B}", headers=headers)
    assert r.status_code == 403 and "data-doc-id" not in r.text
    # the future is not known (400), as on the API
    r = httpx.get(f"{ui_server.url}/ui/drive?as_of=2999-01-01T00:00:00Z", headers=headers)
    assert r.status_code == 400 and "the future is not known" in r.text


def _results(html: str) -> list[tuple[str, str, float]]:
    rows = re.findall(r'data-doc-id="([^"]+)" data-version-id="([^"]+)" data-score="([^"]+)"', html)
    return [(d, v, float(s)) for d, v, s in rows]


def test_playground_returns_what_the_api_returns_and_withheld_only_for_the_admin(
    ui_server: RunningServer, ui_sim: Simulator
) -> None:
    user_tok, admin_tok = token(ui_sim, DENIED_USER), ui_sim.tokens.admin_token
    for q in (QUERY, "预算 审批", "platform architecture"):
        api = httpx.post(
            f"{ui_server.url}/api/mcp/recall",
            json={"query": q, "top_k": 5},
            headers={"Authorization": f"Bearer {user_tok}"},
        ).json()
        expected = [(r["doc_id"], r["version_id"], r["score"]) for r in api["results"]]
        page = httpx.get(
            f"{ui_server.url}/ui/recall", params={"q": q, "top_k": 5}, headers={"Authorization": f"Bearer {user_tok}"}
        )
        assert page.status_code == 200
        assert _results(page.text) == expected  # the same documents, versions and scores, in the same order
        assert "withheld" not in page.text.lower()
    # the admin viewing as u010: the same results, plus d0009 withheld by the deny
    page = httpx.get(
        f"{ui_server.url}/ui/recall",
        params={"q": QUERY, "top_k": 5, "as": DENIED_USER},
        headers={"Authorization": f"Bearer {admin_tok}"},
    )
    api = httpx.post(
        f"{ui_server.url}/api/mcp/recall",
        json={"query": QUERY, "top_k": 5, "user_id": DENIED_USER},
        headers={"Authorization": f"Bearer {admin_tok}"},
    ).json()
    section = page.text.split('id="withheld"', 1)
    assert len(section) == 2
    assert _results(section[0]) == [(r["doc_id"], r["version_id"], r["score"]) for r in api["results"]]
    reasons = dict(re.findall(r'<tr data-doc-id="([^"]+)" data-reason="([^"]+)"', section[1]))
    assert reasons.get(DENIED_DOC) == "denied", reasons
    assert DENIED_DOC not in {r["doc_id"] for r in api["results"]}


def test_a_second_pipeline_runs_under_the_same_permission_filter(ui_server: RunningServer, ui_sim: Simulator) -> None:
    headers = {"Authorization": f"Bearer {token(ui_sim, DENIED_USER)}"}
    page = httpx.get(
        f"{ui_server.url}/ui/recall", params={"q": QUERY, "top_k": 10, "pipeline": "dense"}, headers=headers
    )
    assert page.status_code == 200
    got = {d for d, _, _ in _results(page.text)}
    assert got and got <= previewable(ui_sim, DENIED_USER) and DENIED_DOC not in got


def test_runs_pages_for_service_tokens_only(ui_server: RunningServer, ui_sim: Simulator, ui_history: Path) -> None:
    admin = {"Authorization": f"Bearer {ui_sim.tokens.admin_token}"}
    runs = httpx.get(f"{ui_server.url}/ui/runs", headers=admin)
    ids = re.findall(r'data-run-id="(\d+)"', runs.text)
    assert runs.status_code == 200 and len(ids) == 3
    trend = httpx.get(f"{ui_server.url}/ui/runs/trend", params={"metric": "hit_rate@10"}, headers=admin)
    assert trend.status_code == 200 and "<svg" in trend.text and trend.text.count('/report">#') == 3
    assert f"History file <code>{html.escape(str(ui_history))}</code>" in trend.text  # where the runs are read from
    assert trend.text.count('<polyline class="trend-line"') >= 1 and "<script" not in trend.text
    bad = httpx.get(f"{ui_server.url}/ui/runs/trend", params={"include_failed": "maybe"}, headers=admin)
    assert 400 <= bad.status_code < 500
    compare = httpx.get(f"{ui_server.url}/ui/runs/compare", params={"a": ids[0], "b": ids[1]}, headers=admin)
    assert compare.status_code == 200 and "hit_rate@10" in compare.text and "paired queries" in compare.text
    report = httpx.get(f"{ui_server.url}/ui/runs/{ids[0]}/report", headers=admin)
    assert report.status_code == 200 and "Hit Rate" in report.text
    assert httpx.get(f"{ui_server.url}/ui/runs/999/report", headers=admin).status_code == 404
    assert httpx.get(f"{ui_server.url}/ui/runs/99999999999999999999/report", headers=admin).status_code == 404
    user = {"Authorization": f"Bearer {token(ui_sim, USER_A)}"}
    assert httpx.get(f"{ui_server.url}/ui/runs", headers=user).status_code == 403
    assert httpx.get(f"{ui_server.url}/ui/faults", headers=user).status_code == 403


def test_fault_switching_needs_the_csrf_token_and_the_same_origin(ui_server: RunningServer, ui_sim: Simulator) -> None:
    assert not ui_sim.faults.active
    with signed_in(ui_server, ui_sim.tokens.admin_token) as client:
        csrf = parse(client.get("/ui/faults").text).csrf
        assert csrf
        form = {"action": "enable", "name": "leaky-acl", "params": "share=0.5"}
        assert client.post("/ui/faults", data=form).status_code == 403  # no CSRF token
        assert client.post("/ui/faults", data={**form, "csrf": "forged"}).status_code == 403
        evil = {"Origin": "http://evil.example"}
        assert client.post("/ui/faults", data={**form, "csrf": csrf}, headers=evil).status_code == 403
        assert not ui_sim.faults.active  # nothing changed
        try:
            r = client.post("/ui/faults", data={**form, "csrf": csrf})
            assert r.status_code == 303
            assert [(f.name, f.get("share")) for f in ui_sim.faults.active] == [("leaky-acl", 0.5)]
            bad = client.post(
                "/ui/faults", data={"action": "enable", "name": "latency", "params": "delay_ms=1e9", "csrf": csrf}
            )
            assert bad.status_code == 400 and [f.name for f in ui_sim.faults.active] == ["leaky-acl"]
            r = client.post("/ui/faults", data={"action": "disable", "name": "leaky-acl", "csrf": csrf})
            assert r.status_code == 303 and not ui_sim.faults.active
        finally:
            ui_sim.faults.replace([])
