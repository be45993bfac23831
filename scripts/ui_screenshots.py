"""PNG screenshots of every console page at 1280x800 and at phone width (``make ui-screenshots``).

    python scripts/ui_screenshots.py [--out reports/ui-screenshots] [--phone 390x844]

Starts the seed corpus (``hash`` embedder, ``bm25`` pipeline: seconds, no model) behind a real uvicorn server
with a history of three sample runs, signs in through the console's form in headless Chromium (chromedriver,
``make browser``) as a user and as the admin, and captures each page. Prints the files it wrote.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

USER, VIEW_AS = "u001", "u010"
QUERY = "加密模块设计说明"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "ui-screenshots")
    parser.add_argument("--phone", default="390x844", help="phone viewport WIDTHxHEIGHT")
    args = parser.parse_args()
    phone = tuple(int(x) for x in args.phone.lower().split("x"))

    from drivebench.api import load_simulator
    from drivebench.evaluator.history import HistoryStore
    from drivebench.evaluator.report.sample import sample_result
    from drivebench.server.process import start_in_thread
    from drivebench.simulator.backend import SimConfig
    from tests.support.webdriver import Browser

    sim = load_simulator("seed", config=SimConfig(pipeline="bm25", embedder="hash"))
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="drivebench-ui-shots-") as tmp:
        history = Path(tmp) / "history.sqlite3"
        store = HistoryStore(history)
        for seed in range(3):
            store.record(sample_result(seed=seed, n_queries=24, resamples=50))
        server = start_in_thread(sim)
        server.server.config.app.state.ui_history = history
        browser = Browser(Path(tmp) / "browser")
        try:
            base = server.url

            def shoot(name: str, path: str) -> None:
                browser.get(base + path)
                for width, height in ((1280, 800), phone):
                    out = args.out / f"{len(written) // 2 + 1:02d}-{name}-{width}x{height}.png"
                    written.append(browser.screenshot(out, width, height))

            def sign_in(tok: str) -> None:
                browser.delete_cookies()
                browser.get(base + "/ui/signin")
                browser.type(browser.find("#token"), tok)
                browser.click(browser.find("#signin"))

            shoot("signin", "/ui/signin")
            sign_in(sim.tokens.for_subject(USER).token)
            shoot("home-user", "/ui/")
            shoot("drive-user", "/ui/drive?folder=/rd/platform")
            mask = sim.engine.allowed_mask(sim.engine.user_principal(USER), "preview", sim.drive.clock.now())
            doc = sim.engine.doc_ids[mask.nonzero()[0][0]]  # doc_ids are sorted: the first previewable
            shoot("document-user", f"/ui/doc/{doc}")
            shoot("drive-user-as-of", "/ui/drive?folder=/rd&as_of=2026-06-01T00:00:00Z")
            shoot("recall-user", f"/ui/recall?q={QUERY}&top_k=5")
            shoot("not-found", "/ui/doc/d9999")
            sign_in(sim.tokens.admin_token)
            shoot("home-admin", "/ui/")
            shoot("recall-admin-view-as", f"/ui/recall?as={VIEW_AS}&q={QUERY}&top_k=5")
            shoot("drive-admin-view-as", f"/ui/drive?as={VIEW_AS}&folder=/rd/platform")
            shoot("runs", "/ui/runs")
            shoot("trend", "/ui/runs/trend?metric=hit_rate@10")
            shoot("compare", "/ui/runs/compare?a=latest&b=latest~1")
            shoot("run-report", "/ui/runs/latest/report")
            shoot("faults", "/ui/faults")
        finally:
            browser.close()
            server.stop()
    for path in written:
        print(path)
    print(f"{len(written)} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
