"""The fault matrix of the leaks beyond the result list: each reference fault is caught by exactly its own metric,
and the clean simulator shows 0 on every leak metric with its upper bound.

One seed simulator (hash embedder: retrieval quality is not under test) behind a real uvicorn server, measured by
the real tools once per profile: ``evaluate`` (answer mode, the eval token, the seed corpus given a fact) for the
result leaks, the answer leaks and the under-fill; ``drivebench probe --answers`` (a target profile holding every
user's own token) for the result-list pairs and the two classes beyond it. A cell is ``k`` of ``n`` with the bound
the tool reports; a cell a tool did not measure fails the test wherever it is.

"Caught" means the two-sided 95 % Clopper-Pearson interval of ``k / n`` excludes 0 (its lower end is above 0);
"clean" means ``k = 0`` with the one-sided 95 % upper bound the report carries (``upper_bound_95`` in metrics.json,
the class ``figure`` in probe.json). post-filter may lower hit rate: that is not a leak metric, so not a column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from drivebench.api import evaluate
from drivebench.cli.main import app
from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.options import EvalOptions
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator
from tests.support.facts import INTERN, REVENUE_QUESTIONS, seed_with_revenue_fact

pytestmark = [pytest.mark.e2e]

CLEAN = "clean"
CAUGHT_BY = {  # each reference fault and the one metric that must catch it
    "answer-unfiltered-context": "answer leaks",
    "role-from-body": "probe body-identity",
    "shared-answer-cache": "probe shared-cache",
    "post-filter": "under-fill",
}
PROFILES = [CLEAN, *CAUGHT_BY]
METRICS = ["result leaks", "probe results", "answer leaks", "probe body-identity", "probe shared-cache", "under-fill"]
TRIALS = 8  # probe pairs and trials per class: 0 of 8 is <= 31.3 %, enough for a leak every trial to exclude 0


@dataclass(frozen=True)
class Cell:
    """``leaked`` of ``trials`` and the 95 % upper bound the tool reported (None: not measured)."""

    leaked: int | None
    trials: int | None
    reported_bound: float | None

    @property
    def measured(self) -> bool:
        return self.leaked is not None and bool(self.trials) and self.reported_bound is not None

    def lower_95(self) -> float:
        """The lower end of the two-sided 95 % Clopper-Pearson interval."""
        assert self.leaked is not None and self.trials
        return float(binomtest(self.leaked, self.trials).proportion_ci(0.95, method="exact").low)

    def __str__(self) -> str:
        if not self.measured:
            return "not measured"
        return f"{self.leaked}/{self.trials} (CP95 low {self.lower_95():.3f}, up {self.reported_bound:.3f})"


def eval_cells(result: dict[str, Any]) -> dict[str, Cell]:
    """The eval run's leak figures: each section's count over the queries it judged, and its bound."""
    leaks = result.get("leaks") or {}
    answers = result.get("answer_leaks") or {}
    under = result.get("under_fill") or {}
    return {
        "result leaks": Cell(leaks.get("queries_with_leak"), leaks.get("queries_judged"), leaks.get("upper_bound_95")),
        "answer leaks": Cell(
            answers.get("queries_with_answer_leak"), answers.get("queries_judged"), answers.get("upper_bound_95")
        ),
        "under-fill": Cell(
            under.get("queries_under_filled") if under.get("measured") else None,
            under.get("queries_judged"),
            under.get("upper_bound_95"),
        ),
    }


def probe_cells(result: dict[str, Any]) -> dict[str, Cell]:
    """The probe's classes: leaked of measured trials, and the class figure's bound."""
    out = {}
    for name in ("results", "body-identity", "shared-cache"):
        s = result["classes"][name]
        measured = s["state"] == "measured"
        out[f"probe {name}"] = Cell(s["leaked"] if measured else None, s["measured"], s["figure"]["bound"])
    return out


@pytest.fixture(scope="module")
def served(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server's URL and a target profile for the probe holding every user's own token."""
    folder = tmp_path_factory.mktemp("profile")
    tokens = {u: module_sim.tokens.for_subject(u).token for u in module_sim.drive.users}
    (folder / "tokens.json").write_text(json.dumps(tokens), encoding="utf-8")
    with start_in_thread(module_sim) as server:
        profile = folder / "sim.toml"
        profile.write_text(f'[request]\nurl = "{server.url}/api/mcp/recall"\n[auth]\ntokens_file = "tokens.json"\n')
        yield server.url, profile


def measure(
    sim: Simulator, url: str, profile: Path, corpus: Path, queries: list[EvalQuery], out: Path
) -> dict[str, Cell]:
    """Every leak metric of the simulator as its faults stand."""
    run = evaluate(url, queries, EvalOptions(corpus=corpus, token=sim.tokens.eval_token, answers=True, preflight=False))
    assert run.result["counts"]["errors"] == 0, run.result["counts"]
    args = ["--target-profile", str(profile), "--corpus", str(corpus), "--out", str(out), "--answers"]
    sizes = ["--pairs", str(TRIALS), "--class-trials", str(TRIALS), "--queries-per-pair", "1", "--seed", "1"]
    done = CliRunner().invoke(app, ["probe", *args, *sizes])
    assert (out / "probe.json").is_file(), done.output
    probe = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert probe["status"]["state"] == "ok", probe["status"]
    return {**eval_cells(run.result), **probe_cells(probe)}


@pytest.fixture(scope="module")
def matrix(
    module_sim: Simulator, served: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Cell]]:
    """profile -> metric -> cell, each profile measured on its own (the faults cleared between: no cache lives on)."""
    url, profile = served
    folder = tmp_path_factory.mktemp("matrix")
    corpus = seed_with_revenue_fact(module_sim, folder)
    assert module_sim.corpus_dir is not None
    revenue = [EvalQuery(query_id=f"rev{i}", query=q, user_id=INTERN) for i, q in enumerate(REVENUE_QUESTIONS)]
    queries = [*load_evalset(module_sim.corpus_dir / "evalset.jsonl"), *revenue]
    out: dict[str, dict[str, Cell]] = {}
    for name in PROFILES:
        module_sim.faults.clear()
        if name != CLEAN:
            module_sim.faults.enable(name)
        try:
            out[name] = measure(module_sim, url, profile, corpus, queries, folder / name)
        finally:
            module_sim.faults.clear()
    print("\n" + "\n".join(f"{p:>26}  " + " | ".join(f"{m}: {row[m]}" for m in METRICS) for p, row in out.items()))
    return out


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("profile", PROFILES)
def test_each_profile_moves_exactly_its_own_leak_metric(
    matrix: dict[str, dict[str, Cell]], profile: str, metric: str
) -> None:
    cell = matrix[profile][metric]
    assert cell.measured, f"{profile}: {metric} was not measured"
    if CAUGHT_BY.get(profile) == metric:
        assert cell.leaked and cell.lower_95() > 0, f"{profile} is not caught by {metric}: {cell}"
    else:
        assert cell.leaked == 0, f"{profile} moves {metric}, which is not its metric: {cell}"
        assert cell.trials is not None
        assert cell.reported_bound == pytest.approx(upper_bound(0, cell.trials)), f"{profile}: {metric}: {cell}"
