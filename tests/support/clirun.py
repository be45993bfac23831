"""Run the real ``drivebench`` console script (or ``python -m drivebench``) in a subprocess, optionally as an
unprivileged user or on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DRIVEBENCH = str(BIN / "drivebench")
NOBODY = 65534
# Root reads any file; without these two capabilities it obeys permission bits like any user (and can still
# run the interpreter, which lives under /root on some machines).
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def clean_env(**extra: str) -> dict[str, str]:
    """The test environment without config-file or per-option variables a developer may have set."""
    env = {k: v for k, v in os.environ.items() if not (k.startswith("DRIVEBENCH_") and k != "DRIVEBENCH_CACHE")}
    env.update({"DRIVEBENCH_CONFIG": "none", "DRIVEBENCH_HISTORY": "none", "COLUMNS": "200", "NO_COLOR": "1"})
    env.update(extra)
    return env


def run(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    unprivileged: bool = False,
) -> subprocess.CompletedProcess[str]:
    prefix = NO_DAC if unprivileged and os.getuid() == 0 else []
    return subprocess.run(
        [*prefix, DRIVEBENCH, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env if env is not None else clean_env(),
        cwd=cwd,
    )


def run_on_pty(argv: list[str], env: dict[str, str], timeout: float = 300) -> tuple[int, str]:
    """Run ``argv`` with stdin/stdout/stderr on a pseudo-terminal; returns (exit code, everything it wrote)."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


def invoke(argv: list[str], cwd: Path, monkeypatch: object, **env: str | None) -> tuple[int, str, str]:
    """Run the CLI in-process (typer's CliRunner) in ``cwd``; ``env`` is applied on top of ``clean_env``'s
    removals (``None`` unsets). Returns (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from drivebench.cli.main import app

    unset: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith("DRIVEBENCH_") and k != "DRIVEBENCH_CACHE"
    }
    monkeypatch.chdir(cwd)  # type: ignore[attr-defined]
    result = CliRunner().invoke(app, argv, env={**unset, "COLUMNS": "200", **env})
    return result.exit_code, result.stdout, result.stderr


def run_in_process(*args: str) -> tuple[int, str, str]:
    """``drivebench ARGS`` in this process, as ``run`` would run it (its environment: ``clean_env``): the CLI's own
    entry point, exit code and streams, without the second of interpreter start-up a subprocess costs. For tests
    whose point is not the process itself. Returns (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from drivebench.cli.main import app

    wanted = clean_env()
    env: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
    env.update({k: v for k, v in wanted.items() if os.environ.get(k) != v})
    done = CliRunner().invoke(app, list(args), env=env)
    crash = f"\n{done.exception!r}" if done.exit_code == 70 else ""  # an unexpected exception: say which
    return done.exit_code, done.stdout, done.stderr + crash
