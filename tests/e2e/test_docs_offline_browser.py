"""/docs (Swagger UI) and /redoc (ReDoc) render every operation in headless Chromium with no network.

The simulator runs behind a real uvicorn server (the ``drivebench_server`` fixture). Chromium loads each page
with every host name but 127.0.0.1 unresolvable (``--host-resolver-rules``), runs its scripts for a virtual
15 s, and dumps the DOM. The test compares the operations in the DOM with the operations in /openapi.json.

A control serves a stock ``FastAPI()`` app (its docs load Swagger UI from a CDN) the same way and finds no
operation rendered and a failed load in the console: the flags really cut the network, so the simulator's pages
pass only because their assets come from the server itself (``drivebench.server.api.docs``).
"""

from __future__ import annotations

import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from drivebench.server.process import RunningServer, free_port
from drivebench.testing import ServedSimulator
from tests.support.chromium import CONSOLE, FLAGS, chromium_binary

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OFFLINE = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--virtual-time-budget=15000"]
METHODS = ("get", "put", "post", "delete", "patch", "options", "head")


def dump_dom(url: str, tmp: Path) -> tuple[str, list[str]]:
    done = subprocess.run(
        [
            chromium_binary(),
            *FLAGS,
            *OFFLINE,
            f"--user-data-dir={tmp / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, [m["message"] for line in done.stderr.splitlines() if (m := CONSOLE.search(line))]


class SwaggerOperations(HTMLParser):
    """(method, path) of every operation block Swagger UI rendered."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[str, str]] = []
        self._method: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "div" and "opblock" in classes:
            self._method = next((c.removeprefix("opblock-") for c in classes if c.startswith("opblock-")), None)
        if "opblock-summary-path" in classes and self._method and a.get("data-path"):
            self.ops.append((self._method, str(a["data-path"])))
            self._method = None


class RedocOperations(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        section = dict(attrs).get("data-section-id") or ""
        if "operation/" in section:
            self.ids.add(section.rsplit("operation/", 1)[1])


def spec_operations(base_url: str) -> dict[tuple[str, str], str]:
    spec = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    return {
        (method, path): op["operationId"]
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in METHODS
    }


def test_swagger_ui_renders_every_operation_offline(drivebench_server: ServedSimulator, tmp_path: Path) -> None:
    expected = spec_operations(drivebench_server.url)
    assert len(expected) >= 25  # recall, answer, files, permissions, control plane, faults
    page = httpx.get(f"{drivebench_server.url}/docs", timeout=30).text
    assert "cdn" not in page.lower() and "https://" not in page
    dom, messages = dump_dom(f"{drivebench_server.url}/docs", tmp_path)
    parser = SwaggerOperations()
    parser.feed(dom)
    assert sorted(parser.ops) == sorted(expected)
    assert not [m for m in messages if "Failed to load" in m or "ERR_" in m or "Error" in m], messages


def test_redoc_renders_every_operation_offline(drivebench_server: ServedSimulator, tmp_path: Path) -> None:
    expected = spec_operations(drivebench_server.url)
    page = httpx.get(f"{drivebench_server.url}/redoc", timeout=30).text
    assert "fonts.googleapis" not in page and "cdn" not in page.lower()
    dom, messages = dump_dom(f"{drivebench_server.url}/redoc", tmp_path)
    parser = RedocOperations()
    parser.feed(dom)
    assert parser.ids == set(expected.values())
    assert not [m for m in messages if "Failed to load" in m or "ERR_" in m], messages


def test_control_cdn_docs_render_nothing_offline(tmp_path: Path) -> None:
    stock = FastAPI()

    @stock.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(stock, host="127.0.0.1", port=port, log_level="warning"))
    import threading
    import time

    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    with RunningServer(server, thread, "127.0.0.1", port) as running:
        assert "cdn" in httpx.get(f"{running.url}/docs", timeout=30).text  # the stock page does use a CDN
        dom, messages = dump_dom(f"{running.url}/docs", tmp_path)
    parser = SwaggerOperations()
    parser.feed(dom)
    assert parser.ops == []
    assert any("ERR_NAME_NOT_RESOLVED" in m or "SwaggerUIBundle" in m for m in messages), messages
