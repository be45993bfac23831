"""The headless-Chromium flags shared by the browser tests and the screenshot scripts: headless, no sandbox (CI
runs as root), no GPU, and none of Chromium's own traffic (QUIC, first-run pages, background requests, component
updates, sync), so a test that asserts "no request leaves the page's origin" sees only the page's requests.

Also: the binary (``chromium_binary``; no Chromium fails the test, a skipped browser test would prove nothing)
and the pattern of the console messages Chromium logs to stderr with ``--enable-logging=stderr --v=0``."""

from __future__ import annotations

import re
import shutil

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

FLAGS = CHROMIUM_FLAGS
CONSOLE = re.compile(r":CONSOLE[^\]]*\]\s*(?P<message>.*)$")


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    import pytest  # here, not at the top: the screenshot scripts import this module with the runtime install only

    pytest.fail("chromium is not installed: `make browser` installs it (make test depends on it)")
