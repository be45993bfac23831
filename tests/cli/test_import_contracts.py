"""The layer contracts of pyproject.toml hold, and `make lint`'s contract check fails when one is broken: a copy of
the package with one forbidden import (the corpus format importing the server) is refused, naming the contract."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.clirun import REPO

LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def copy_of_the_package(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(
        REPO / "src" / "drivebench", root / "src" / "drivebench", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_make_lint_runs_the_contracts() -> None:
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    assert recipe is not None and "$(BIN)/lint-imports --no-cache" in recipe.group(1)


def test_the_checkout_keeps_every_contract(tmp_path: Path) -> None:
    done = lint_imports(copy_of_the_package(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: (\d+) kept, 0 broken", done.stdout)


def test_a_forbidden_import_breaks_lint_and_names_the_layers(tmp_path: Path) -> None:
    root = copy_of_the_package(tmp_path)
    corpus = root / "src" / "drivebench" / "formats" / "corpus.py"
    corpus.write_text(corpus.read_text(encoding="utf-8") + "\nimport drivebench.server.api  # noqa\n", encoding="utf-8")
    done = lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Layers: each part imports only the parts below it BROKEN" in done.stdout
    assert "drivebench.formats is not allowed to import drivebench.server" in done.stdout


def test_the_evaluator_may_not_import_the_simulator(tmp_path: Path) -> None:
    root = copy_of_the_package(tmp_path)
    runner = root / "src" / "drivebench" / "evaluator" / "runner.py"
    runner.write_text(
        runner.read_text(encoding="utf-8") + "\nimport drivebench.search.index  # noqa\n", encoding="utf-8"
    )
    done = lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "drivebench.evaluator is not allowed to import drivebench.search" in done.stdout
