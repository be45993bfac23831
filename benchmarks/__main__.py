"""Run every ``benchmarks/bench_*.py``, each in its own process: ``python -m benchmarks [NAME ...]``.

``make bench`` runs them all; ``BENCH_QUICK=1 make bench`` asks each for its quick variant. Names
(``permissions``, ``bench_filtered_search``, ...) select a subset. Each benchmark prints its own table
and writes ``benchmarks/results/<name>.json`` and ``<name>.md`` (``benchmarks/report.py``); this runner
prints how long each took and whether it met its targets (its exit code), and exits non-zero when any did not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover(selected: list[str]) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if not selected:
        return found
    wanted = {s.removesuffix(".py").removeprefix("bench_") for s in selected}
    unknown = wanted - {p.stem.removeprefix("bench_") for p in found}
    if unknown:
        raise SystemExit(
            f"unknown benchmark(s): {', '.join(sorted(unknown))}; known: {', '.join(p.stem for p in found)}"
        )
    return [p for p in found if p.stem.removeprefix("bench_") in wanted]


def main(argv: list[str]) -> int:
    scripts = discover(argv)
    env = dict(os.environ)
    root = str(HERE.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    quick = env.get("BENCH_QUICK") == "1"
    print(
        f"running {len(scripts)} benchmark(s){' (BENCH_QUICK=1)' if quick else ''}: {', '.join(p.stem for p in scripts)}"
    )
    summary = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        t0 = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=root, env=env)
        summary.append((script.stem, code, time.perf_counter() - t0))
    print("\n=== summary ===")
    for name, code, seconds in summary:
        verdict = "ok" if code == 0 else f"targets missed or failed (exit {code})"
        print(f"  {name:<28} {seconds:8.1f} s  {verdict}")
    return 0 if all(code == 0 for _, code, _ in summary) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
