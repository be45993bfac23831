"""`make demo` installs the runtime only (no torch): the default path (the CLI, the server, loading the
default corpus with the default embedder, pipeline and reranker, a recall) must not import torch or
sentence-transformers, or a demo-only install would fail at the first query."""

from __future__ import annotations

import subprocess
import sys

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
