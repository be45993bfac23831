"""At 80 columns (every CI log) nothing a user copies or reads is cut with "…": tokens print whole, and the
metrics table wraps its headers instead of truncating them."""

from __future__ import annotations

import json
import subprocess

from rich.console import Console

from drivebench.evaluator.report.headline import headline_table
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.report.terminal import hit_rate_table
from tests.support.clirun import DRIVEBENCH, run_on_pty
from tests.support.terminal import ESCAPES, terminal_env


def test_tokens_print_whole_on_an_80_column_terminal() -> None:
    env = {**terminal_env(), "COLUMNS": "80"}
    listed = subprocess.run(
        [DRIVEBENCH, "tokens", "--corpus", "seed", "--json"], capture_output=True, text=True, timeout=120, env=env
    )
    assert listed.returncode == 0, listed.stderr
    tokens = [row["token"] for row in json.loads(listed.stdout)]
    code, raw = run_on_pty([DRIVEBENCH, "tokens", "--corpus", "seed"], env)
    screen = ESCAPES.sub("", raw)
    assert code == 0, screen[-1000:]
    assert "…" not in screen and all(t in screen for t in tokens), screen[:1500]
    assert max(len(line) for line in screen.splitlines()) <= 80


def test_the_metrics_tables_wrap_instead_of_cutting_at_80_columns() -> None:
    result = sample_result(resamples=50)
    console = Console(width=80, record=True, force_terminal=False)
    console.print(hit_rate_table(result))
    console.print(headline_table(result))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
