"""PNG screenshot of a run's HTML report, taken by headless Chromium (``make report-screenshot``).

    python scripts/report_screenshot.py [RUN_DIR] [--out reports/report-screenshot.png]

Without RUN_DIR the demo runs first (``drivebench demo --out reports/screenshot-demo --history none``).
The report is re-rendered from RUN_DIR/metrics.json, loaded from a file:// URL with the network
features off, captured at 1280 px wide and a tall window, and the empty page background below the
content is cropped away (with Pillow, when installed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.chromium import CHROMIUM_FLAGS  # noqa: E402 (after the path insert)

FLAGS = CHROMIUM_FLAGS


def crop_background(png: Path, margin: int = 24) -> None:
    try:
        from PIL import Image, ImageChops
    except ImportError:
        return
    with Image.open(png) as im:
        rgb = im.convert("RGB")
    background = Image.new("RGB", rgb.size, rgb.getpixel((rgb.width - 1, rgb.height - 1)))
    box = ImageChops.difference(rgb, background).getbbox()
    if box:
        rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + margin))).save(png)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", nargs="?", type=Path, help="A run directory with metrics.json.")
    ap.add_argument("--out", type=Path, default=Path("reports/report-screenshot.png"))
    ap.add_argument("--corpus", default="seed", help="Corpus for the demo run (without RUN_DIR).")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=9000, help="Window height before cropping.")
    args = ap.parse_args(argv)

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("chromium is not installed: run `make browser`", file=sys.stderr)
        return 2
    run_dir = args.run_dir
    if run_dir is None:
        run_dir = Path("reports/screenshot-demo")
        cmd = [sys.executable, "-m", "drivebench.cli", "demo", "--corpus", args.corpus, "--out", str(run_dir)]
        subprocess.run([*cmd, "--history", "none"], check=True)

    from drivebench.evaluator.report.outputs import load_metrics, write_reports

    _, html = write_reports(load_metrics(run_dir), run_dir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                chromium,
                *FLAGS,
                f"--user-data-dir={tmp}",
                f"--window-size={args.width},{args.height}",
                f"--screenshot={args.out.resolve()}",
                html.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=180,
            env={**os.environ, "HOME": tmp},
        )
    crop_background(args.out)
    print(f"wrote {args.out} (report {html})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
