"""Progress on `eval run` and `eval score`: the requests bar and the scoring step's bar (queries
judged by the leak oracle) on a pseudo-terminal, both ending full ("scoring N queries ... N/N"); a pipe and
--quiet get no bar frames."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from drivebench.testing import ServedSimulator
from tests.support.clirun import DRIVEBENCH, run_on_pty
from tests.support.terminal import ANSI, BAR, ESCAPES, terminal_env

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _frames(raw: str) -> list[str]:
    return [f for f in re.split(r"[\r\n]", ESCAPES.sub("", raw)) if f.strip()]


def _args(server: ServedSimulator, tmp_path: Path, out: str) -> list[str]:
    sim = server.sim
    assert sim.corpus_dir is not None
    evalset = tmp_path / "evalset.jsonl"
    if not evalset.exists():
        lines = (sim.corpus_dir / "evalset.jsonl").read_text(encoding="utf-8").splitlines()[:12]
        evalset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [
        "eval", "run", "--target", server.url, "--token", sim.tokens.eval_token, "--evalset", str(evalset),
        "--k", "1,3", "--history", "none", "--corpus", "seed", "--out", str(tmp_path / out),
    ]  # fmt: skip


def test_eval_run_shows_the_scoring_step_on_a_terminal_only(drivebench_server: ServedSimulator, tmp_path: Path) -> None:
    code, raw = run_on_pty([DRIVEBENCH, *_args(drivebench_server, tmp_path, "tty")], terminal_env())
    frames = _frames(raw)
    assert code in (0, 1), frames[-10:]  # 1: a gate (none here) or a leak; never a failed run
    requests = [m for f in frames if (m := re.search(r"recall × 12 .*" + BAR + r".* (\d+)/12 .*eta", f))]
    assert requests and requests[-1][1] == "12", frames[-10:]
    scoring = [f for f in frames if "scoring 12 queries" in f]
    final = re.search(r"scoring 12 queries .*" + BAR + r".* (\d+)/(\d+)", scoring[-1]) if scoring else None
    assert final and final[1] == final[2] == "12", frames[-10:]  # the scoring row ends full
    # the row appears once the last request came back, never before
    first_scoring = next(i for i, f in enumerate(frames) if "scoring 12 queries" in f)
    assert any(re.search(r"recall × 12 .* 12/12", f) for f in frames[: first_scoring + 1]), frames[:first_scoring]

    piped = subprocess.run(
        [DRIVEBENCH, *_args(drivebench_server, tmp_path, "pipe")],
        capture_output=True,
        text=True,
        timeout=300,
        env=terminal_env(),
    )
    assert piped.returncode == code, piped.stderr
    assert "scoring 12" not in piped.stderr and BAR not in piped.stderr and "eta" not in piped.stderr
    for stream in (piped.stdout, piped.stderr):
        assert "\r" not in stream and not ANSI.search(stream)
    assert "wrote" in piped.stderr  # the one-line summaries stay

    code, raw = run_on_pty([DRIVEBENCH, "--quiet", *_args(drivebench_server, tmp_path, "quiet")], terminal_env())
    # (the result tables draw with the bar's glyph too: look for the rows themselves)
    assert code in (0, 1) and not [f for f in _frames(raw) if "scoring 12" in f or "recall ×" in f or "eta" in f]
    # the same scores either way
    tty, pipe = (json.loads((tmp_path / d / "metrics.json").read_text())["metrics"] for d in ("tty", "pipe"))
    assert {k: v for k, v in tty.items() if "latency" not in k} == {k: v for k, v in pipe.items() if "latency" not in k}

    # eval score: the same scoring bar on a terminal, none in a pipe; the same numbers as eval run's
    evalset = str(tmp_path / "evalset.jsonl")
    score = ["eval", "score", "--evalset", evalset, "--run", str(tmp_path / "pipe"), "--corpus", "seed", "--k", "1,3"]
    code, raw = run_on_pty([DRIVEBENCH, *score, "--json", str(tmp_path / "score.json")], terminal_env())
    frames = _frames(raw)
    final = [m for f in frames if (m := re.search(r"scoring 12 queries .*" + BAR + r".* (\d+)/(\d+) .*eta", f))]
    assert code in (0, 1) and final and final[-1][1] == final[-1][2] == "12", frames[-10:]
    piped = subprocess.run([DRIVEBENCH, *score], capture_output=True, text=True, timeout=300, env=terminal_env())
    assert piped.returncode == code and "scoring 12" not in piped.stderr and "\r" not in piped.stderr
    scored = json.loads((tmp_path / "score.json").read_text())["metrics"]
    assert scored["leak_rate@3"] == pipe["leak_rate@3"] and scored["hit_rate@3"] == pipe["hit_rate@3"]

    # eval compare: a counted bar over run x metric comparisons on a terminal, none in a pipe
    compare = ["eval", "compare", str(tmp_path / "tty"), str(tmp_path / "pipe"), str(tmp_path / "quiet")]
    code, raw = run_on_pty([DRIVEBENCH, *compare], terminal_env())
    frames = _frames(raw)
    pattern = r"comparing 2 run\(s\) with the baseline .*" + BAR + r".* (\d+)/(\d+) .*eta"
    bars = [m for f in frames if (m := re.search(pattern, f))]
    assert code == 0 and bars and bars[-1][1] == bars[-1][2] and int(bars[-1][1]) >= 2 * 10, frames[-10:]
    piped = subprocess.run([DRIVEBENCH, *compare], capture_output=True, text=True, timeout=300, env=terminal_env())
    assert piped.returncode == 0 and "comparing 2 run" not in piped.stderr and "\r" not in piped.stderr
