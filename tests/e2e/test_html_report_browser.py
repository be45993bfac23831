"""The HTML report in a real browser: headless Chromium loads it from a file:// URL, offline.

How: no WebDriver and no DevTools client (neither is a dependency). Chromium runs once with
``--dump-dom`` (prints the DOM after the load event and exits) and ``--enable-logging=stderr
--v=0``, which makes it log every console message of the page to stderr as
``...:INFO:CONSOLE...] "message", source: URL (line)``. The test asserts

* the rendered DOM holds every chart as an inline ``<svg>`` with its expected id;
* the page logged no console message at all: the report has no JavaScript, and its
  Content-Security-Policy turns any attempt to load something (a font, a stylesheet, an image)
  into a console error;
* a screenshot shows the charts' colours, i.e. the SVG was actually painted.

A control page with a deliberate ``console.error`` and a blocked external image checks that this
Chromium still reports console messages the way the test reads them, so a change of log format
fails the test instead of silently passing it.

Chromium comes from the Debian packages ``chromium`` and ``chromium-driver`` (``make browser``,
which ``make test`` runs). Without it the test fails: a skipped browser test would prove nothing.
"""

from __future__ import annotations

import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from drivebench.evaluator.report.charts import PALETTE
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.report.sample import sample_result
from tests.support.chromium import CONSOLE, FLAGS, chromium_binary

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def run_chromium(page: Path, tmp: Path, *extra: str) -> tuple[str, list[str]]:
    """Load ``page`` headless; returns (stdout, console messages logged to stderr)."""
    done = subprocess.run(
        [chromium_binary(), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *extra, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    messages = [m["message"] for line in done.stderr.splitlines() if (m := CONSOLE.search(line))]
    return done.stdout, messages


class SvgIds(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.bars = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg" and a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "rect" and a.get("class") == "bar":
            self.bars += 1


def test_control_page_console_messages_are_seen(tmp_path: Path) -> None:
    page = tmp_path / "control.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'\">"
        '</head><body><svg id="x"></svg><img src="https://example.invalid/a.png">'
        '<script>console.error("control-error")</script></body></html>',
        encoding="utf-8",
    )
    dom, messages = run_chromium(page, tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom")
    assert 'id="x"' in dom
    assert any("control-error" in m for m in messages), messages
    assert any("example.invalid" in m for m in messages), messages


def test_report_renders_offline_with_every_chart_and_no_console_errors(tmp_path: Path) -> None:
    result = sample_result(seed=0)
    _, html_path = write_reports(result, tmp_path / "run")
    dom, messages = run_chromium(html_path, tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom")
    assert messages == []
    parser = SvgIds()
    parser.feed(dom)
    expected = {
        "chart-hit-rate",
        "chart-multi-hop",
        "chart-leaks",
        "chart-citations",
        *(f"chart-strata-{s}" for s in result["strata"]),
    }
    assert set(parser.ids) == expected
    assert parser.bars > 20

    from PIL import Image as pil

    shot = tmp_path / "report.png"
    run_chromium(html_path, tmp_path, f"--screenshot={shot}", "--window-size=1280,1600")
    assert shot.exists()
    with pil.open(shot) as im:
        rgb = im.convert("RGB")
        assert rgb.size == (1280, 1600)
        colours = {c for _, c in rgb.getcolors(maxcolors=1 << 20)}
    for hex_colour in PALETTE[:3]:  # hit rate, recall and nDCG bars of the first chart
        want = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        assert want in colours, f"no {hex_colour} pixels: the chart was not painted"
