"""`make demo` installs the runtime only (no torch): the default path (the CLI, the server, loading the
default corpus with the default embedder, pipeline and reranker, a recall) must not import torch or
sentence-transformers, or a demo-only install would fail at the first query."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.clirun import REPO

SCRIPT = """
import sys
import drivebench.cli.main, drivebench.cli.demo, drivebench.server.process
from drivebench.api import load_simulator
sim = load_simulator("acme-zh@2")
principal = sim.engine.user_principal(sorted(sim.drive.users)[0])
outcome = sim.recall(principal, "采购订单的付款条件", top_k=5)
default = (sim.config.embedder, sim.config.pipeline, sim.reranker)
assert default == ("e5", "deep", "ltr-first-round"), default
assert outcome.hits, "no hits"
print(sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
"""


def test_the_default_path_never_imports_torch() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


# The screenshot scripts run after `make`'s runtime install only (`make report-screenshot`, `make ui-screenshots`):
# every module they import, at the top or inside a function, must import without the extras' packages.
BLOCK_EXTRAS = """
import ast, importlib, importlib.abc, importlib.metadata, re, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
def dist(requirement): return re.split(r"[<>=!~;\\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
runtime = {dist(r) for r in project["dependencies"]}
extras = {dist(r) for group in project["optional-dependencies"].values() for r in group} - runtime - {"drivebench"}
blocked = {m for m, dists in importlib.metadata.packages_distributions().items()
           if {d.lower().replace("_", "-") for d in dists} & extras}
assert {"pytest", "torch", "hypothesis"} <= blocked, sorted(blocked)
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"{name} is only in an extra, not in the runtime install")
sys.meta_path.insert(0, Block())
script = sys.argv[1]
for node in ast.walk(ast.parse(open(script).read())):
    if isinstance(node, ast.Import):
        for alias in node.names:
            importlib.import_module(alias.name)
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        importlib.import_module(node.module)
print("imported", script)
"""


@pytest.mark.parametrize("script", ["scripts/report_screenshot.py", "scripts/ui_screenshots.py"])
def test_the_screenshot_scripts_need_only_the_runtime_install(script: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_EXTRAS, script], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"imported {script}"
