"""The HTML report in a real browser: headless Chromium loads it from a file:// URL, offline.

How: no WebDriver and no DevTools client (neither is a dependency). Chromium runs once with
``--dump-dom`` (prints the DOM after the load event and exits) and ``--enable-logging=stderr
--v=0``, which makes it log every console message of the page to stderr as
``...:INFO:CONSOLE...] "message", source: URL (line)``. The test asserts

* the rendered DOM holds every chart as an inline ``<svg>`` with its expected id;
* the page logged no console message at all: the report has no JavaScript, and its
  Content-Security-Policy turns any attempt to load something (a font, a stylesheet, an image)
  into a console error;
* a screenshot shows the charts' colours, i.e. the SVG was actually painted;
* the eval, probe and audit pages, laid out at 390 px (a phone) and 1280 px through chromedriver, are no wider
  than the viewport (measured by DevTools, no script in the page; a control page that is wider is measured so),
  and the sort buttons of the missed-or-leaked table switch its order with CSS alone.

A control page with a deliberate ``console.error`` and a blocked external image checks that this
Chromium still reports console messages the way the test reads them, so a change of log format
fails the test instead of silently passing it.

Chromium comes from the Debian packages ``chromium`` and ``chromium-driver`` (``make browser``,
which ``make test`` runs). Without it the test fails: a skipped browser test would prove nothing.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from drivebench.evaluator.report.charts import PALETTE
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.report.sample import sample_result
from tests.support.chromium import CONSOLE, FLAGS, chromium_binary
from tests.support.webdriver import Browser

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


# --- the three report pages at phone width: no sideways scrolling; the sortable table switches without script ---


@pytest.fixture(scope="module")
def report_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from drivebench.evaluator.audit.report import write_html as write_audit_html
    from drivebench.evaluator.failed_queries import attach
    from drivebench.evaluator.probe.report import write_html as write_probe_html
    from drivebench.evaluator.report.sample import sample_inputs
    from tests.support.report_samples import audit_result, probe_result

    tmp = tmp_path_factory.mktemp("pages")
    result = sample_result(seed=1)
    queries, records, catalog = sample_inputs(1)
    attach(result, queries, records, [1, 3, 5, 10], catalog)  # the missed-or-leaked table, with long names
    long_name = "Quarterly-compensation-review-for-every-department-and-every-region-" * 3 + ".xlsx"
    return {
        "eval": write_reports(result, tmp / "eval")[1],
        "probe": write_probe_html(probe_result(long_name), tmp / "probe.html"),
        "audit": write_audit_html(audit_result(long_name), tmp / "oversharing.html"),
    }


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium"))
    try:
        yield b
    finally:
        b.close()


def test_a_page_wider_than_a_phone_is_measured_as_such(browser: Browser, tmp_path: Path) -> None:
    """The control for the next test: a page with a 900 px wide block measures wider than a 390 px viewport."""
    page = tmp_path / "wide.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        '<body><div style="width:900px;height:20px;background:#c00"></div></body></html>',
        encoding="utf-8",
    )
    browser.get(page.resolve().as_uri())
    m = browser.layout(390)
    # what the next test checks fails here: content wider than 390 px (a phone then zooms out: the layout
    # viewport grows to the content, so that is checked too)
    assert m["content_width"] >= 900 and m["viewport_width"] > 390


@pytest.mark.parametrize("kind", ["eval", "probe", "audit"])
def test_reports_do_not_scroll_sideways_at_390_px(browser: Browser, report_pages: dict[str, Path], kind: str) -> None:
    browser.get(report_pages[kind].resolve().as_uri())
    for width in (390, 1280):
        m = browser.layout(width)
        assert m["viewport_width"] == width
        assert m["content_width"] <= width, f"{kind} at {width} px: content {m['content_width']} px wide"
    assert browser.console() == []  # no script, nothing blocked by the CSP


def test_sort_buttons_switch_the_failed_queries_table_without_script(
    browser: Browser, report_pages: dict[str, Path]
) -> None:
    browser.get(report_pages["eval"].resolve().as_uri())
    browser.layout(390)  # at phone width, as a manager reading it on the go
    tables = {
        key: browser.find(f"#{tid}") for key, tid in (("query", "table-failed"), ("leaks", "table-failed-by-leaks"))
    }
    assert browser.displayed(tables["query"]) and not browser.displayed(tables["leaks"])
    browser.click(browser.find('label[for="sort-failed-1"]'))
    assert browser.displayed(tables["leaks"]) and not browser.displayed(tables["query"])
    browser.click(browser.find('label[for="sort-failed-0"]'))
    assert browser.displayed(tables["query"]) and not browser.displayed(tables["leaks"])
