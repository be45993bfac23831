"""``drivebench probe`` against a real uvicorn server on the seed corpus, through a profile whose tokens_file
holds every user's own token: ``--leak-budget`` sizes every class and gates on the bound (exit 1 with no leak
seen when too few pairs were probed), and ``role-from-body`` is exit 1 by the body-identity class alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator

pytestmark = [pytest.mark.e2e]


@pytest.fixture(scope="module")
def profile(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("profile")
    tokens = {u: module_sim.tokens.for_subject(u).token for u in module_sim.drive.users}
    (folder / "tokens.json").write_text(json.dumps(tokens), encoding="utf-8")
    with start_in_thread(module_sim) as server:
        path = folder / "sim.toml"
        path.write_text(f'[request]\nurl = "{server.url}/api/mcp/recall"\n[auth]\ntokens_file = "tokens.json"\n')
        yield path


def probe(tmp_path: Path, sim: Simulator, profile: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "probe"
    cli = ["probe", "--target-profile", str(profile), "--corpus", str(sim.corpus_dir), "--out", str(out)]
    res = CliRunner().invoke(app, [*cli, "--queries-per-pair", "1", *args])
    assert (out / "probe.json").is_file(), res.output
    return res.exit_code, json.loads((out / "probe.json").read_text(encoding="utf-8")), res.output


def test_leak_budget_sizes_every_class_and_gates_on_the_bound(
    tmp_path: Path, module_sim: Simulator, profile: Path
) -> None:
    code, r, said = probe(tmp_path / "met", module_sim, profile, "--leak-budget", "30%")
    gate = r["leak_budget"]
    assert code == 0 and gate["met"] and gate["trials_needed"] == 9  # 0 of 9: <= 28.3 %
    assert [s["measured"] for s in r["classes"].values()] == [9, 9, 9]
    assert "0 of 9 pairs: <= 28.4 % (95 %)" in said and "leak budget 30.0 % (95 %), 9 trials per class: met" in said
    code, r, said = probe(tmp_path / "short", module_sim, profile, "--leak-budget", "30%", "--budget", "4")
    assert code == 1 and all(s["leaked"] == 0 for s in r["classes"].values())  # no leak seen, and still exit 1
    assert r["leak_budget"]["failing"] == ["results"] and r["classes"]["results"]["measured"] == 4
    html = (tmp_path / "short" / "probe" / "probe.html").read_text(encoding="utf-8")
    assert "NOT met" in html and "0 of 4 pairs: &lt;= 52.8 % (95 %) ABOVE the budget" in html
    res = CliRunner().invoke(
        app, ["probe", "--target-profile", str(profile), "--corpus", "seed", "--leak-budget", "1%", "--pairs", "5"]
    )
    assert res.exit_code == 2 and "not with --leak-budget" in res.output


def test_role_from_body_is_exit_1_by_the_body_identity_class(
    tmp_path: Path, module_sim: Simulator, profile: Path
) -> None:
    module_sim.faults.enable("role-from-body")
    try:
        code, r, said = probe(tmp_path, module_sim, profile, "--pairs", "6", "--class-trials", "6")
    finally:
        module_sim.faults.clear()
    assert code == 1 and r["counts"]["leaks"] == 0 and r["status"]["state"] == "ok"
    assert {n: s["leaked"] for n, s in r["classes"].items()} == {"results": 0, "body-identity": 6, "shared-cache": 0}
    assert "the target trusts the request body: 6 of 6 trials" in said
    html = (tmp_path / "probe" / "probe.html").read_text(encoding="utf-8")
    assert "Leaks beyond the result list" in html and "claimed " in html
