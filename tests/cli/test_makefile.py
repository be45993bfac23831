"""The Makefile: `make` installs and ends with how to put .venv/bin on PATH; `make test` without Chromium and
without root stops at once naming the packages; as root, Chromium present, `make browser` does nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.clirun import NOBODY, REPO


def as_nobody() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def make(
    *args: str,
    cwd: Path = REPO,
    unprivileged: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        preexec_fn=as_nobody if unprivileged and os.getuid() == 0 else None,
    )


def venv_without_pip(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``python3`` is the real one creating venvs without pip: make's own ``python3 -m venv``
    runs as written, minus the 10-15 s of ensurepip (pip itself is faked in these tests)."""
    real = shutil.which("python3")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m venv" ]; then exec {real} "$@" --without-pip; fi\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_make_alone_installs_and_ends_with_the_path_hint() -> None:
    done = make()
    assert done.returncode == 0, done.stderr
    tail = done.stdout.strip().splitlines()[-3:]
    assert tail[0] == f"drivebench is installed in {REPO}/.venv/bin. To run it by name in this shell:"
    assert tail[1].strip().startswith(f'export PATH="{REPO}/.venv/bin:$PATH"')
    assert "drivebench info" in tail[2]


def copy_of_the_makefile(tmp_path: Path) -> Path:
    """A world-readable copy (the checkout may sit under a directory other users cannot enter)."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    shutil.copy(REPO / "Makefile", folder / "Makefile")
    shutil.copy(REPO / "pyproject.toml", folder / "pyproject.toml")
    for path in (tmp_path, folder):
        path.chmod(0o777)
    return folder


def test_make_test_without_chromium_and_without_root_stops_at_once(tmp_path: Path) -> None:
    folder = copy_of_the_makefile(tmp_path)
    done = make("test", "CHROMIUM=no-such-chromium", cwd=folder, unprivileged=True)
    assert done.returncode != 0
    assert "not installed: no-such-chromium\n" in done.stderr
    assert "Install the Debian packages chromium chromium-driver as root" in done.stderr
    assert "sudo apt-get install -y chromium chromium-driver" in done.stderr
    assert not (folder / ".venv").exists() and "installing drivebench" not in done.stdout  # stopped before pip


def test_make_test_without_chromedriver_names_it(tmp_path: Path) -> None:
    folder = copy_of_the_makefile(tmp_path)
    done = make("test", "CHROMEDRIVER=no-such-driver", cwd=folder, unprivileged=True)
    assert done.returncode != 0
    assert "not installed: no-such-driver\n" in done.stderr
    assert "sudo apt-get install -y chromium chromium-driver" in done.stderr
    assert not (folder / ".venv").exists()


def test_as_root_a_missing_chromium_is_installed_with_apt() -> None:
    assert os.getuid() == 0  # the suite runs as root here and in CI
    planned = make("-n", "browser", "CHROMIUM=no-such-chromium").stdout
    assert "apt-get install -y -qq chromium chromium-driver" in planned and 'id -u)" -eq 0' in planned
    done = make("browser")  # installed: nothing to do, nothing printed
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


@pytest.mark.slow
def test_the_install_step_is_never_silent_and_a_failed_pip_leaves_no_stamp(tmp_path: Path) -> None:
    folder = copy_of_the_makefile(tmp_path)
    env = venv_without_pip(tmp_path)
    done = make("install", "PIP_INSTALL=sleep 3.5; echo fake-pip", "PIP_TICK=2", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "creating .venv with python3" and (folder / ".venv" / "bin" / "python").exists()
    # bash's SECONDS counts whole seconds: the tick after 2 s of sleep reads 2 or 3 s
    ticks = [line for line in lines if re.fullmatch(r"  \.\.\. pip is still installing \([23] s\)", line)]
    assert ticks and "fake-pip -e .[all]" in lines, lines
    assert (folder / ".venv" / ".installed").is_file()
    (folder / ".venv" / ".installed").unlink()
    failed = make("install", "PIP_INSTALL=false", cwd=folder, env=env)
    assert failed.returncode != 0 and not (folder / ".venv" / ".installed").exists()


@pytest.mark.slow
def test_make_in_a_pipe_ends_with_pip_not_with_the_tickers_sleep(tmp_path: Path) -> None:
    """The "still installing" ticker's sleep must die with it: an orphan holds the pipe open (a CI log, a
    ``make | tee``) and make's output ends only when the sleep does, here 10 minutes later."""
    folder = copy_of_the_makefile(tmp_path)
    done = make(
        ".venv/.installed-core",
        "PIP_INSTALL=true",
        "PIP_TICK=600",
        cwd=folder,
        env=venv_without_pip(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0 and (folder / ".venv" / ".installed-core").is_file(), done.stderr


def test_make_demo_installs_the_runtime_only_and_a_current_full_install_serves(tmp_path: Path) -> None:
    folder = copy_of_the_makefile(tmp_path)
    planned = make("-n", "demo", cwd=folder).stdout
    assert "-e '.'" in planned and "[all]" not in planned and "/drivebench demo" in planned
    env = venv_without_pip(tmp_path)
    done = make(".venv/.installed-core", "PIP_INSTALL=echo fake-pip", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    assert "fake-pip -e ." in done.stdout.splitlines() and "[all]" not in done.stdout  # no torch, no test tools
    assert (folder / ".venv" / ".installed-core").is_file() and not (folder / ".venv" / ".installed").exists()
    assert "pip" not in make("-n", "demo", cwd=folder).stdout  # installed: the demo runs at once
    # after a full install (make, make test) make demo installs nothing more
    (folder / ".venv" / ".installed-core").unlink()
    (folder / ".venv" / ".installed").touch()
    again = make(".venv/.installed-core", "PIP_INSTALL=echo fake-pip", cwd=folder, env=env)
    assert again.returncode == 0 and "fake-pip" not in again.stdout and "installing" not in again.stdout, again.stdout
    assert (folder / ".venv" / ".installed-core").is_file()


@pytest.mark.parametrize("target", ["report-screenshot", "ui-screenshots"])
def test_the_screenshots_need_the_runtime_install_only(tmp_path: Path, target: str) -> None:
    """No torch, test tools or Milvus for a screenshot: the scripts' imports are checked by
    tests/cli/test_runtime_without_torch.py."""
    planned = make("-n", target, cwd=copy_of_the_makefile(tmp_path)).stdout
    assert "-e '.'" in planned and "[all]" not in planned, planned
    assert f"scripts/{target.replace('-', '_')}.py" in planned and "fc-list :lang=zh" in planned
