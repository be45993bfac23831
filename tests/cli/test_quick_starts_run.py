"""The quick starts run as written: README.md's Quick start and its five-minute tour, one shell session from a
fresh checkout, and the first steps of the Installation page. Every ``bash`` block of these sections runs in
``bash -e`` unless a ``<!-- not-tested: REASON -->`` comment stands right before it, so a skipped block is
visible (and reviewed) in the page itself.

The one change to the text: the documented port 8000 becomes a free port (``DRIVEBENCH_SERVE_PORT`` for
``drivebench serve``, the host:port in the URLs), since other tests and servers share the machine. A block's
background jobs (``drivebench serve ... &``) are stopped when the session ends; ``set -x`` with a timestamp
prefix gives each step's time, printed when a step fails."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from drivebench.server.process import free_port
from tests.support.clirun import clean_env
from tests.support.docs import marked_code_blocks, section

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DOCUMENTED_HOST_PORT = "127.0.0.1:8000"
# Each walkthrough is read top to bottom in one shell, as a reader would run it.
WALKTHROUGHS = {
    "readme": [("README.md", "Quick start"), ("README.md", "A five-minute tour")],
    "installation": [("installation.md", "Running `drivebench` by name")],
}
# Before each step, bash prints `+ <epoch seconds> <command>` (nested commands get more `+`).
PROLOGUE = """trap 'set +e; kill $(jobs -p) 2>/dev/null; wait' EXIT
PS4='+ $EPOCHREALTIME '
set -x
"""
STEP = re.compile(r"^\+ (?P<at>\d+\.\d+) (?P<command>.*)$")


@dataclass
class Session:
    returncode: int
    stdout: str
    stderr: str
    checkout: Path
    home: Path

    def steps(self) -> list[tuple[float, str]]:
        """Each top-level command but the last, with the seconds until the next one began."""
        marks = [(float(m["at"]), m["command"]) for m in map(STEP.match, self.stderr.splitlines()) if m]
        return [(round(nxt[0] - at, 1), command) for (at, command), nxt in itertools.pairwise(marks)]

    def failure(self) -> str:
        timings = "\n".join(f"{seconds:6.1f} s  {command[:140]}" for seconds, command in self.steps())
        return f"exit {self.returncode}; steps:\n{timings}\nstderr:\n{self.stderr[-3000:]}"


def runnable_blocks(walkthrough: str) -> list[str]:
    blocks = [block for page, heading in WALKTHROUGHS[walkthrough] for block, _ in marked(page, heading) if block]
    assert blocks, walkthrough
    return blocks


def marked(page: str, heading: str) -> list[tuple[str | None, str | None]]:
    """(block, None) for a block that runs, (None, reason) for one marked not-tested."""
    return [(None, reason) if reason else (block, None) for block, reason in marked_code_blocks(page, heading, "bash")]


def run_walkthrough(walkthrough: str, tmp_path: Path, epilogue: str = "") -> Session:
    """The walkthrough's runnable blocks in one ``bash -e`` from a fresh checkout: a directory whose ``.venv`` is
    this interpreter's environment, with nothing but ``/usr/bin:/bin`` on PATH (the quick start puts
    ``.venv/bin`` there) and an empty HOME."""
    checkout, home = tmp_path / "checkout", tmp_path / "home"
    checkout.mkdir()
    home.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    port = free_port()
    script = "\n".join(runnable_blocks(walkthrough)).replace(DOCUMENTED_HOST_PORT, f"127.0.0.1:{port}")
    assert "8000" not in script, "a reference to the documented port that the port substitution misses"
    env = clean_env(HOME=str(home), SHELL="/bin/bash", DRIVEBENCH_SERVE_PORT=str(port))
    env["PATH"] = "/usr/bin:/bin"
    env.pop("DRIVEBENCH_HISTORY")  # the documented default: reports/history.sqlite3 under the current directory
    process = subprocess.Popen(
        ["bash", "-e", "-c", PROLOGUE + script + epilogue],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # on a timeout the whole group goes, the background server with it
    )
    try:
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None or process.returncode != 0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    return Session(process.returncode, stdout, stderr, checkout, home)


def reports_named_in(page: str, heading: str) -> list[str]:
    """The report files the section's prose names (``reports/tour/report.html``)."""
    prose = re.sub(r"```.*?```", "", section(page, heading), flags=re.S)
    return re.findall(r"`(reports/[\w./-]+\.html)`", prose)


def test_every_block_of_the_quick_starts_runs_or_says_why_not() -> None:
    skipped = {
        (page, heading): [reason for _, reason in marked(page, heading) if reason]
        for sections in WALKTHROUGHS.values()
        for page, heading in sections
    }
    assert skipped == {
        ("README.md", "Quick start"): [
            "make test is the suite itself; tests/cli/test_makefile.py checks what make demo installs"
        ],
        ("README.md", "A five-minute tour"): [],
        ("installation.md", "Running `drivebench` by name"): [],
    }
    assert reports_named_in("README.md", "A five-minute tour") == [
        "reports/tour/report.html",
        "reports/tour-probe/probe.html",
    ]


def test_the_readme_quick_start_and_tour_run_as_written_from_a_fresh_checkout(tmp_path: Path) -> None:
    # after the verbatim steps: which token the tour exported, and the evaluation token, to compare
    epilogue = '\nprintf "%s" "$DRIVEBENCH_TOKEN" > token.txt\ndrivebench tokens --corpus seed --json > tokens.json\n'
    session = run_walkthrough("readme", tmp_path, epilogue)
    assert session.returncode == 0, session.failure()
    assert re.search(r"^drivebench \d+\.\d+", session.stdout, flags=re.M)  # drivebench --version
    assert "token secret" in session.stdout and "Usage: drivebench" in session.stdout  # info, python -m --help
    assert (session.home / ".bash_completions" / "drivebench.sh").is_file()
    assert re.search(r"^\W*documents\W+29\W*$", session.stdout, flags=re.M)  # corpus stats seed
    for report in reports_named_in("README.md", "A five-minute tour"):
        assert (session.checkout / report).is_file(), report
    assert "reports/tour" in session.stdout  # eval history lists the run
    tokens = json.loads((session.checkout / "tokens.json").read_text())
    evaluator = next(t["token"] for t in tokens if t["user_id"] == "svc:evaluator")
    assert "evaluate-as" in next(t["scopes"] for t in tokens if t["user_id"] == "svc:evaluator")
    assert (session.checkout / "token.txt").read_text() == evaluator


def test_the_installation_page_first_steps_run_as_written(tmp_path: Path) -> None:
    session = run_walkthrough("installation", tmp_path)
    assert session.returncode == 0, session.failure()
    assert re.search(r"^drivebench \d+\.\d+", session.stdout, flags=re.M)
    assert "Usage: drivebench" in session.stdout
    assert (session.home / ".bash_completions" / "drivebench.sh").is_file()
