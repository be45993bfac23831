"""A small W3C WebDriver client over ``chromedriver`` (Debian ``chromium-driver``, installed with ``chromium`` by
``make browser``), spoken with httpx: no Selenium, no Playwright, no browser download.

The browser runs headless with every host name but 127.0.0.1 unresolvable (``--host-resolver-rules``), logs its
console (``goog:loggingPrefs`` ``browser``) and every network request (``performance``: the DevTools
``Network.requestWillBeSent`` events), so a test can assert that no request left the server's origin and that
the page logged nothing. ``cdp`` passes a DevTools command through chromedriver (screenshots at a given
viewport size).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from drivebench.server.process import free_port
from tests.support.chromium import CHROMIUM_FLAGS

FLAGS = [
    *CHROMIUM_FLAGS,
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # any host but the server's does not resolve
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C element reference key


class WebDriverError(RuntimeError):
    pass


def binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise WebDriverError(f"none of {names} is installed: `make browser` installs chromium and chromium-driver")


class Browser:
    """One chromedriver process and one browser session; ``close()`` ends both."""

    def __init__(self, tmp: Path, width: int = 1280, height: int = 800) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self._proc = subprocess.Popen(
            [binary("chromedriver"), f"--port={port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(tmp)},
        )
        self._http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self._http.get("/status").json()["value"]["ready"]:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self._proc.poll() is not None:
                self._proc.kill()
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.05)
        options = {
            "binary": binary("chromium", "chromium-browser", "google-chrome"),
            "args": [*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={tmp / 'profile'}"],
        }
        caps = {
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
        }
        try:
            value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        except Exception:
            self._proc.kill()
            raise
        self._sid = value["sessionId"]

    # ------------------------------------------------------------------ protocol
    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = self._http.request(method, path, json=body if body is not None or method == "POST" else None)
        data = r.json()
        if r.status_code >= 400:
            raise WebDriverError(f"{method} {path}: {r.status_code} {json.dumps(data)[:500]}")
        return data.get("value")

    def _s(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self._sid}{path}", {} if body is None and method == "POST" else body)

    # ------------------------------------------------------------------ navigation and the page
    def get(self, url: str) -> None:
        self._s("POST", "/url", {"url": url})

    @property
    def url(self) -> str:
        return str(self._s("GET", "/url"))

    @property
    def source(self) -> str:
        return str(self._s("GET", "/source"))

    def find(self, css: str) -> str:
        return str(self._s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT])

    def find_all(self, css: str) -> list[str]:
        return [e[ELEMENT] for e in self._s("POST", "/elements", {"using": "css selector", "value": css})]

    def wait(self, css: str, timeout: float = 15.0) -> list[str]:
        """The elements matching ``css`` once there is at least one (a click may return before the next
        page has loaded); [] after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.find_all(css)
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def text(self, element: str) -> str:
        return str(self._s("GET", f"/element/{element}/text"))

    def attribute(self, element: str, name: str, prop: bool = False) -> str | None:
        """An HTML attribute (``prop``: the DOM property instead, e.g. an absolute ``href``)."""
        value = self._s("GET", f"/element/{element}/{'property' if prop else 'attribute'}/{name}")
        return None if value is None else str(value)

    def displayed(self, element: str) -> bool:
        """Whether the element is rendered visibly (``display:none`` on it or an ancestor: False)."""
        return bool(self._s("GET", f"/element/{element}/displayed"))

    def type(self, element: str, text: str) -> None:
        self._s("POST", f"/element/{element}/clear")
        self._s("POST", f"/element/{element}/value", {"text": text})

    def click(self, element: str) -> None:
        self._s("POST", f"/element/{element}/click")

    def keys(self, element: str, text: str) -> None:
        """Keystrokes into an element (``\\ue007`` is Enter, ``\\ue004`` Tab)."""
        self._s("POST", f"/element/{element}/value", {"text": text})

    def active_element(self) -> str:
        return str(self._s("GET", "/element/active")[ELEMENT])

    def delete_cookies(self) -> None:
        self._s("DELETE", "/cookie")

    def cookies(self) -> list[dict[str, Any]]:
        return list(self._s("GET", "/cookie"))

    # ------------------------------------------------------------------ logs and DevTools
    def console(self) -> list[dict[str, Any]]:
        """Console entries logged since the last call (level, message, source)."""
        return list(self._s("POST", "/se/log", {"type": "browser"}))

    def requests(self) -> list[str]:
        """URLs of every request the browser sent since the last call."""
        out = []
        for entry in self._s("POST", "/se/log", {"type": "performance"}):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                out.append(message["params"]["request"]["url"])
        return out

    def cdp(self, command: str, params: dict[str, Any] | None = None) -> Any:
        return self._s("POST", "/goog/cdp/execute", {"cmd": command, "params": params or {}})

    def screenshot(self, path: Path, width: int, height: int) -> Path:
        """A PNG of the current page at a ``width`` x ``height`` viewport (phone widths emulate a mobile)."""
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700},
        )
        try:
            shot = self.cdp("Page.captureScreenshot", {"format": "png"})
        finally:
            self.cdp("Emulation.clearDeviceMetricsOverride")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def layout(self, width: int, height: int = 800) -> dict[str, float]:
        """The current page laid out at a ``width`` x ``height`` viewport (phone widths emulate a mobile): the
        content's width and height and the viewport's width, in CSS pixels, from DevTools (no script runs in the
        page). Content wider than the viewport means the page scrolls sideways. The emulation stays on."""
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700},
        )
        metrics = self.cdp("Page.getLayoutMetrics")
        content = metrics.get("cssContentSize") or metrics["contentSize"]
        viewport = metrics.get("cssLayoutViewport") or metrics["layoutViewport"]
        return {
            "content_width": float(content["width"]),
            "content_height": float(content["height"]),
            "viewport_width": float(viewport["clientWidth"]),
        }

    def full_page_screenshot(self, path: Path, width: int) -> dict[str, float]:
        """A PNG of the whole page (every row, not one screen) at ``width`` CSS pixels; returns ``layout``'s
        figures at that width."""
        measured = self.layout(width)
        try:
            self.cdp(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": width,
                    "height": max(int(measured["content_height"]), 1),
                    "deviceScaleFactor": 1,
                    "mobile": width < 700,
                },
            )
            shot = self.cdp("Page.captureScreenshot", {"format": "png"})
        finally:
            self.cdp("Emulation.clearDeviceMetricsOverride")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return measured

    def close(self) -> None:
        try:
            self._call("DELETE", f"/session/{self._sid}")
        except Exception:
            pass
        finally:
            self._http.close()
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
