"""Every example of docs/evaluating.md (the target profiles, the export for a real drive) and docs/ci.md (the CI
commands) runs, verbatim, against a real simulator server and the vendor-style test server (only the host:port
in the URLs is replaced)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.targets.profile import load_profile
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.testing import ServedSimulator
from tests.support.docs import code_blocks, section
from tests.support.vendor_server import API_KEY

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SIM_URL, VENDOR_URL = "http://127.0.0.1:8000", "http://127.0.0.1:9000/v1/search"
PROFILES = ("evaluating.md", "Target profiles")
EXPORT = ("evaluating.md", "Loading the synthetic enterprise into a real drive")


def profiles() -> list[str]:
    return code_blocks(*PROFILES, "toml")


@pytest.fixture
def workdir(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    drivebench_server: ServedSimulator,
    vendor_url: str,
) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    assert drivebench_server.sim.corpus_dir is not None
    shutil.copy(Path(drivebench_server.sim.corpus_dir) / EVALSET_NAME, tmp_path / "evalset.jsonl")
    for block in profiles():
        name = block.splitlines()[0].removeprefix("# ").strip()
        text = block.replace(SIM_URL, drivebench_server.url).replace(VENDOR_URL, f"{vendor_url}/v1/same/search")
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("DRIVEBENCH_TOKEN", drivebench_server.sim.tokens.eval_token)
    monkeypatch.setenv("VENDOR_API_KEY", API_KEY)
    monkeypatch.delenv("DRIVEBENCH_HISTORY", raising=False)  # cwd is tmp_path: the documented default history
    yield tmp_path


def test_docs_have_the_two_worked_profiles() -> None:
    names = [b.splitlines()[0] for b in profiles()]
    assert names == ["# simulator.toml", "# vendor.toml"]
    vendor = profiles()[1]
    for key in ('results = "data.items"', 'doc_id = "fileId"', 'version_id = "versionId"', "ok_when", 'match = "path"'):
        assert key in vendor


def test_docs_examples_run(workdir: Path, drivebench_server: ServedSimulator) -> None:
    assert load_profile(workdir / "simulator.toml").request.url == f"{drivebench_server.url}/api/mcp/recall"
    commands = []
    for block in code_blocks("ci.md", "CI", "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("drivebench "):
                commands.append(line)
    commands += re.findall(r"`(drivebench corpus export-drive [^`]+)`", section(*EXPORT))
    assert len(commands) >= 7
    outputs = {}
    for line in commands:
        args = shlex.split(line.replace(SIM_URL, drivebench_server.url))[1:]
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, f"{line}\n{done.output[-3000:]}"
        outputs[line] = done
    sim = json.loads((workdir / "reports/sim/metrics.json").read_text())
    via_profile = json.loads((workdir / "reports/sim-profile/metrics.json").read_text())
    vendor = json.loads((workdir / "reports/vendor/metrics.json").read_text())
    for k in (1, 3, 5, 10):  # the simulator written out as a profile, and the vendor by paths: the same figures
        assert (
            sim["metrics"][f"hit_rate@{k}"]
            == via_profile["metrics"][f"hit_rate@{k}"]
            == vendor["metrics"][f"hit_rate@{k}"]
        )
    assert vendor["unmapped"]["results"] == 0 and vendor["oracles"]["leak"]["measured"] is True
    ci = json.loads((workdir / "reports/vendor/ci.json").read_text())
    assert ci["exit_code"] == 0 and [g["expr"] for g in ci["gates"]] == ["leak_rate@10>0", "hit_rate@10<0.50"]
    assert (workdir / "reports/vendor/junit.xml").read_text().count("<testcase") >= 2
    trend = json.loads(next(v.stdout for k, v in outputs.items() if "eval trend" in k))
    assert len(trend["points"]) == 3 and trend["failed_runs_left_out"] == 0
    assert (workdir / "drive-export/grants.csv").exists() and (workdir / "drive-export/drive").is_dir()
