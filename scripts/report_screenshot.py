"""PNG screenshots of the three HTML reports (evaluation, leak probe, oversharing audit) at 1280 and 390 px wide,
taken by headless Chromium through chromedriver (``make report-screenshot``).

    python scripts/report_screenshot.py [RUN_DIR] [--out-dir reports/screenshots]

writes ``OUT_DIR/{eval,probe,audit}-{1280,390}.png``:

* eval: RUN_DIR's report.html re-rendered from its metrics.json; without RUN_DIR the demo runs first, clean and
  under the ``leaky-acl`` fault (``drivebench demo --fault leaky-acl --out reports/screenshot-demo``, recorded in
  its own history there), and the faulted run is shown: it has leaks and misses to list and a change against the
  clean run;
* probe: a real ``drivebench probe`` of acme-zh@1 (small) served by the simulator with the ``leaky-acl`` fault on,
  so the page lists leaks;
* audit: the oversharing audit of acme-zh@1 (small) with the documented planted overshares.

Each page is loaded from a file:// URL and captured whole (every section, not one screen). At each width the
content's width is measured by DevTools (no script runs in the page): content wider than the viewport means the
page scrolls sideways, which the reports must never do; the script then says so and exits 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WIDTHS = (1280, 390)
PROBE_CORPUS = "acme-zh@1"


def eval_page(run_dir: Path | None, corpus: str) -> Path:
    from drivebench.evaluator.report.outputs import load_metrics, write_reports

    if run_dir is None:  # a clean run, then one under leaky-acl: leaks and misses to list, a change to show
        base = Path("reports/screenshot-demo")
        history = base / "history.sqlite3"
        history.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "drivebench.cli", "demo", "--corpus", corpus, "--out", str(base)]
        subprocess.run([*cmd, "--fault", "leaky-acl", "--history", str(history)], check=True)
        run_dir = base / "faulted"
    _, html = write_reports(load_metrics(run_dir), run_dir)
    return html


def probe_page(out: Path) -> Path:
    """``drivebench probe`` against the simulator with ``leaky-acl`` on (the page then has leaks to list)."""
    import httpx

    from drivebench.api import load_simulator
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.drive.tokens import ADMIN_SERVICE, make_token
    from drivebench.server.process import start_in_thread
    from drivebench.simulator.backend import SimConfig

    corpus = Path(resolve_corpus(PROBE_CORPUS, scale="small"))
    sim = load_simulator(str(corpus), config=SimConfig(pipeline="bm25", embedder="hash"))
    with start_in_thread(sim) as server:
        admin = {"Authorization": f"Bearer {make_token(sim.drive.name, ADMIN_SERVICE)}"}
        httpx.put(f"{server.url}/_sim/faults", json={"faults": ["leaky-acl"]}, headers=admin).raise_for_status()
        cmd = [sys.executable, "-m", "drivebench.cli", "probe", "--target", server.url, "--token"]
        cmd += [sim.tokens.eval_token, "--corpus", str(corpus), "--out", str(out), "--pairs", "60"]
        done = subprocess.run([*cmd, "--queries-per-pair", "1"], capture_output=True, text=True, timeout=600)
    page = out / "probe.html"
    if not page.is_file():
        raise SystemExit(f"the probe wrote no page (exit {done.returncode}): {done.stderr[-2000:]}")
    return page


def audit_page(out: Path) -> Path:
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.corpora.plants import apply_plants
    from drivebench.evaluator.audit.oversharing import audit_oversharing
    from drivebench.evaluator.audit.report import write_html
    from drivebench.formats.corpus import load_manifest

    planted, _ = apply_plants(load_manifest(resolve_corpus(PROBE_CORPUS, scale="small")))
    return write_html(audit_oversharing(planted), out / "oversharing.html")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", nargs="?", type=Path, help="A run directory with metrics.json.")
    ap.add_argument("--out-dir", type=Path, default=Path("reports/screenshots"))
    ap.add_argument("--corpus", default="seed", help="Corpus for the demo run (without RUN_DIR).")
    ap.add_argument("--only", choices=("eval", "probe", "audit"), action="append", help="Only these reports.")
    args = ap.parse_args(argv)

    from tests.support.webdriver import Browser, WebDriverError

    kinds = args.only or ["eval", "probe", "audit"]
    work = Path("reports/screenshot-pages")
    pages: dict[str, Path] = {}
    if "eval" in kinds:
        pages["eval"] = eval_page(args.run_dir, args.corpus)
    if "probe" in kinds:
        pages["probe"] = probe_page(work / "probe")
    if "audit" in kinds:
        pages["audit"] = audit_page(work / "audit")

    args.out_dir.mkdir(parents=True, exist_ok=True)
    too_wide: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            browser = Browser(Path(tmp), width=1280, height=800)
        except WebDriverError as exc:
            print(f"{exc}: run `make browser`", file=sys.stderr)
            return 2
        try:
            for kind, page in pages.items():
                browser.get(page.resolve().as_uri())
                for width in WIDTHS:
                    png = args.out_dir / f"{kind}-{width}.png"
                    m = browser.full_page_screenshot(png, width)
                    # a phone zooms out to content that is too wide: the layout viewport then grows past the width
                    wide = m["content_width"] > width or m["viewport_width"] > width
                    if wide:
                        too_wide.append(f"{kind} at {width} px")
                    print(
                        f"wrote {png}: content {m['content_width']:.0f} x {m['content_height']:.0f} px in a "
                        f"{m['viewport_width']:.0f} px viewport{' (SCROLLS SIDEWAYS)' if wide else ''}"
                    )
        finally:
            browser.close()
    if too_wide:
        print(f"wider than the viewport: {', '.join(too_wide)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
