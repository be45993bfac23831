"""Progress bars (with counts and an ETA) appear on a terminal, and never in a pipe or with --quiet."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.probe.bounds import percent
from tests.support.clirun import DRIVEBENCH, run_on_pty
from tests.support.terminal import ANSI, BAR, ESCAPES, terminal_env

pytestmark = pytest.mark.slow

DEMO = ["demo", "--corpus", "seed", "--embedder", "hash", "--k", "1,3", "--history", "none"]


def test_demo_shows_bars_with_counts_and_eta_on_a_terminal(tmp_path: Path) -> None:
    code, raw = run_on_pty([DRIVEBENCH, *DEMO, "--out", str(tmp_path / "run")], terminal_env())
    screen = ESCAPES.sub("", raw)
    assert code == 0, screen[-2000:]
    frames = [f for f in re.split(r"[\r\n]", screen) if "over HTTP" in f]
    assert frames, screen[-2000:]
    final = re.search(r"(?:recall|answer) × (\d+) over HTTP .*" + BAR + r".* (\d+)/(\d+) .*eta", frames[-1])
    assert final and final[1] == final[2] == final[3], frames[-1]  # the bar ends full, e.g. 23/23
    scoring = [f for f in re.split(r"[\r\n]", screen) if f"scoring {final[1]} queries" in f]
    done = re.search(r"scoring (\d+) queries .*" + BAR + r".* (\d+)/(\d+)", scoring[-1]) if scoring else None
    assert done and done[1] == done[2] == done[3], scoring[-3:]  # then the leak oracle's judging, counted to the end
    assert (tmp_path / "run" / "metrics.json").is_file()


def test_demo_in_a_pipe_has_no_bar_frames(tmp_path: Path) -> None:
    """On the seed corpus, whose documents own their facts: the demo measures its answer leaks and outcomes."""
    done = subprocess.run(
        [DRIVEBENCH, *DEMO, "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        env=terminal_env(),
    )
    assert done.returncode == 0, done.stderr
    assert BAR not in done.stderr and "eta" not in done.stderr  # bars go to stderr: none there
    for stream in (done.stdout, done.stderr):
        assert "\r" not in stream and not ANSI.search(stream)
    assert "loaded seed:" in done.stderr  # the one-line summaries stay
    assert "hit_rate" in done.stdout or "Hit" in done.stdout
    # the article's three metrics come first, and the demo asks for answers, so all three are measured
    first = done.stdout.index("The article's three metrics")
    assert first < done.stdout.index("Hit Rate@K") and "Source Recall Coverage" in done.stdout[first:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    assert metrics["source_coverage"] is not None and metrics["citation_precision"] is not None
    assert metrics["multi_hop_completeness"] and "not measured" not in done.stdout[first : first + 2000]
    # the answers are judged: no fact of a forbidden document stated, with the bound; every outcome counted
    result = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    answered, judged = result["answer_leaks"]["queries_judged"], result["answer_outcomes"]["queries_judged"]
    bound = f"<= {percent(upper_bound(0, answered) or 1)} %, 95 %"
    said = " ".join(done.stdout.split())  # rich wraps long lines at the pipe's width
    assert f"Answer leaks: 0 of {answered} answers stated a fact their asker may not know ({bound})" in said
    outcomes = result["answer_outcomes"]["outcomes"]
    assert judged > 0 and sum(outcomes[o]["count"] for o in outcomes if o != "right") == judged
    assert judged == answered and outcomes["leak"]["count"] == 0  # the permission questions too: none leaks
    assert "Answer outcomes" in done.stdout and f"{judged} answers judged" in said
    for outcome, row in outcomes.items():  # error and partial are listed when they happened
        shown = re.search(rf"│ {outcome} +│ +(\d+) │ +([\d.]+)% │", done.stdout)
        if outcome in ("error", "partial") and not row["count"]:
            assert shown is None, outcome
        else:
            assert shown and int(shown[1]) == row["count"], (outcome, done.stdout)
            assert float(shown[2]) == pytest.approx(100 * row["rate"], abs=0.05), outcome
    assert outcomes["leak"]["count"] == 0 and outcomes["right"]["count"] > 0


def test_quiet_on_a_terminal_shows_no_bars(tmp_path: Path) -> None:
    code, raw = run_on_pty([DRIVEBENCH, "--quiet", *DEMO, "--out", str(tmp_path / "run")], terminal_env())
    screen = ESCAPES.sub("", raw)
    assert code == 0, screen[-2000:]
    assert not [f for f in re.split(r"[\r\n]", screen) if "over HTTP" in f or "eta" in f]
    assert "loaded seed:" not in screen
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert os.path.getsize(tmp_path / "run" / "run.jsonl") > 0
