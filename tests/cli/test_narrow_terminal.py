"""At 80 columns (every CI log) nothing a user copies or reads is cut with "…": tokens print whole, the metrics
tables wrap their headers instead of truncating them, and every command that prints a table (eval run, eval
compare, eval history, eval trend, probe, audit oversharing, corpus audit, info, eval sync) prints it whole on an
80-column terminal: one run on a pseudo-terminal per command, against the small seed corpus."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from drivebench.evaluator.report.headline import headline_table
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.report.terminal import hit_rate_table
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.testing import ServedSimulator
from tests.support.clirun import DRIVEBENCH, run_on_pty
from tests.support.terminal import ESCAPES, terminal_env

ELLIPSIS = "…"  # what Rich writes where it cuts a cell


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


# --- every command that prints a table, on an 80-column pseudo-terminal -------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a history (the two eval runs record into it) and their run directories."""
    return tmp_path_factory.mktemp("narrow")


def _screen(argv: list[str]) -> tuple[int, str]:
    """Run ``drivebench ARGV`` on an 80x40 pseudo-terminal; (exit code, what it wrote without escapes)."""
    env = {**terminal_env(), "COLUMNS": "80", "DRIVEBENCH_QUIET": "1"}  # no spinners: their "…" is no cut
    code, raw = run_on_pty([DRIVEBENCH, *argv], env)
    return code, ESCAPES.sub("", raw).replace("\r", "")


BOX = set("│┃━─┏┓┗┛┡┩└┘┌┐╇┼")


def _whole(screen: str, *expected: str) -> None:
    """Nothing cut: no ellipsis, no table line past column 80 (a line of text may be longer: the terminal wraps it,
    and a path or a token stays whole to copy), and every ``expected`` text printed (a column Rich could not fit
    would be left out silently)."""
    assert ELLIPSIS not in screen, screen[:3000]
    table_lines = [line for line in screen.splitlines() if BOX & set(line)]
    assert max((len(line) for line in table_lines), default=0) <= 80, screen[:3000]
    missing = [e for e in expected if e not in screen]
    assert not missing, (missing, screen[:3000])
    reprs = [r for r in PYTHON_REPRS if r in screen]  # words for people, never a dict, list or object repr
    assert not reprs, (reprs, screen[:3000])


PYTHON_REPRS = ("{'", "['", "('", "PosixPath(", " object at 0x", "Traceback")


@pytest.fixture(scope="module")
def runs(drivebench_server: ServedSimulator, project: Path) -> Iterator[tuple[str, str, str]]:
    """Two eval runs of the served seed simulator recorded in ``project/history.sqlite3`` (the first also printed
    on the 80-column terminal: its summary tables are checked here); yields (history, run 1 dir, run 2 dir)."""
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    history = str(project / "history.sqlite3")
    base = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--corpus", "seed"]
    base += ["--evalset", str(sim.corpus_dir / EVALSET_NAME), "--k", "1,3,10", "--history", history]
    base += ["--allow-leaks", "--fail-on", "hit_rate@10<0.99"]  # a gate that fails: its row must print whole
    first = str(project / "run1")
    code, screen = _screen([*base, "--out", first, "--label", "a rather long label for the narrow terminal"])
    assert code == 1, screen[-2000:]  # the gate failed
    _whole(screen, "hit_rate@10<0.99", "Hit Rate@K", "nDCG@K")
    second = str(project / "run2")
    done = subprocess.run(
        [DRIVEBENCH, *base, "--out", second, "--label", "second"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**terminal_env(), "COLUMNS": "200"},
    )
    assert done.returncode == 1, done.stderr[-2000:]
    yield history, first, second


def test_eval_compare_prints_whole_at_80_columns(runs: tuple[str, str, str]) -> None:
    history, first, second = runs
    code, screen = _screen(["eval", "compare", first, second, "--history", history])
    assert code == 0, screen[-2000:]
    _whole(screen, "Retrieval: hit rate, recall, MRR, nDCG", "Safety: leaks, stale versions", "hit_rate@10", "Holm")


def test_eval_history_prints_whole_at_80_columns(runs: tuple[str, str, str]) -> None:
    history, first, second = runs
    code, screen = _screen(["eval", "history", "--history", history])
    assert code == 0, screen[-2000:]
    _whole(screen, "hit_rate@10<0.99", "a rather long label for the narrow terminal", first, second)


def test_eval_trend_prints_whole_at_80_columns(runs: tuple[str, str, str]) -> None:
    history, _, _ = runs
    code, screen = _screen(["eval", "trend", "--history", history, "--metric", "hit_rate@10"])
    assert code == 0, screen[-2000:]
    _whole(screen, "gate hit_rate@10<0.99", "✗ run 1 failed", "✗ run 2 failed", "a rather long label")


def test_probe_prints_whole_at_80_columns(drivebench_server: ServedSimulator, project: Path) -> None:
    sim = drivebench_server.sim
    argv = ["probe", "--fail-safe", "--target", drivebench_server.url, "--token", sim.tokens.eval_token]
    code, screen = _screen([*argv, "--drive-token", sim.tokens.admin_token, "--json", str(project / "fail-safe.json")])
    assert code == 0, screen[-2000:]
    cases = [c["case"] for c in json.loads((project / "fail-safe.json").read_text(encoding="utf-8"))["cases"]]
    assert len(cases) > 3
    _whole(screen, *cases)


def test_audit_oversharing_prints_whole_at_80_columns(project: Path) -> None:
    code, screen = _screen(["audit", "oversharing", "seed", "--out", str(project / "audit")])
    assert code in (0, 1), screen[-2000:]
    paths = [d["path"] for d in json.loads((project / "audit" / "oversharing.json").read_text("utf-8"))["documents"]]
    _whole(screen, *paths[:3])  # each path whole on one line, as a user copies it


def test_corpus_audit_prints_whole_at_80_columns() -> None:
    code, screen = _screen(["corpus", "audit", "seed", "--embedder", "hash", "--pipelines", "bm25"])
    assert code == 0, screen[-2000:]
    _whole(screen, "acceptance")


def test_info_prints_whole_at_80_columns() -> None:
    code, screen = _screen(["info"])
    assert code == 0, screen[-2000:]
    _whole(screen)


def test_eval_sync_prints_whole_at_80_columns(drivebench_server: ServedSimulator, project: Path) -> None:
    sim = drivebench_server.sim
    argv = ["eval", "sync", "--drive", drivebench_server.url, "--drive-token", sim.tokens.admin_token]
    argv += ["--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--scenario", "content"]
    try:
        code, screen = _screen([*argv, "--deadline", "5", "--poll", "0.1", "--out", str(project / "sync")])
    finally:
        drivebench_server.reset()
    assert code == 0, screen[-2000:]
    _whole(screen)
