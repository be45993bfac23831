"""``RunResult``: metrics.json as a type. Read and written by one module, byte for byte what the dict wrote; the
sections the reports read are typed; older files and keys a later version adds load; a file that is not a
metrics.json is a ValueError naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drivebench.api import EvalOptions, evaluate
from drivebench.evaluator.evaluate import write_metrics
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.outputs import load_metrics
from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.result import RunResult
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.simulator.backend import Simulator


def _key_paths(value: Any, at: str = "") -> list[str]:
    """Every key, in order, with where it sits: two dicts with the same list have the same key order."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in (f"{at}/{k}", *_key_paths(v, f"{at}/{k}"))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _key_paths(v, f"{at}[{i}]")]
    return []


@pytest.mark.parametrize("seed", [0, 1])
def test_a_result_comes_back_as_given_keys_order_and_number_types(seed: int) -> None:
    result = sample_result(seed=seed, n_queries=24, resamples=50)
    again = RunResult.from_dict(result).to_dict()
    assert again == result and _key_paths(again) == _key_paths(result)
    assert json.dumps(again) == json.dumps(result)  # 3 stays 3, never 3.0


def test_a_real_run_reads_typed_and_writes_the_same_bytes(drivebench_simulator: Simulator, tmp_path: Path) -> None:
    sim = drivebench_simulator
    assert sim.corpus_dir is not None
    gate = "hit_rate@10<0.01"
    options = EvalOptions(
        ks=(1, 10), answers=True, preflight=False, label="typed", fail_on=[gate], out=tmp_path / "run"
    )
    evaluation = evaluate(sim, sim.corpus_dir / EVALSET_NAME, options)
    written = (tmp_path / "run" / "metrics.json").read_bytes()
    run = RunResult.read(tmp_path / "run")  # the run directory or the file
    run.write(tmp_path / "again" / "metrics.json")
    assert (tmp_path / "again" / "metrics.json").read_bytes() == written
    assert evaluation.run_result.to_dict() == evaluation.result
    assert run.counts is not None and run.counts.queries == len(run.per_query or []) > 0
    assert isinstance(run.counts.queries, int) and run.errors is not None and run.errors.answered == run.counts.queries
    assert run.oracles is not None and run.oracles["leak"].measured is True
    assert run.run_info is not None and run.run_info.label == "typed" and run.run_info.corpus == str(sim.corpus_dir)
    assert run.metrics is not None and isinstance(run.metrics["hit_rate@10"], float)
    assert run.gates is not None and [(g.expr, g.failed) for g in run.gates] == [(gate, False)]
    assert run.leaks is not None and run.leaks.queries_judged == run.counts.queries
    assert run.status is not None and run.state == run.status.state == "ok"


def test_a_file_from_before_format_and_gates_loads_and_renders(tmp_path: Path) -> None:
    result = sample_result(seed=2, n_queries=12, resamples=50)
    for later in ("format", "verdict", "gates", "status", "metrics_scope", "oracles", "preflight", "unmapped"):
        result.pop(later, None)  # the keys a metrics.json from before their version did not have
    result["counts"]["added_by_a_later_version"] = 7
    path = tmp_path / "metrics.json"
    write_metrics(result, path)
    run = RunResult.read(path)
    assert run.format is None and run.gates is None and run.status is None
    assert run.counts is not None and run.counts.model_extra == {"added_by_a_later_version": 7}
    run.write(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert render_markdown(run) == render_markdown(result)  # the reports take the type


@pytest.mark.parametrize(
    ("text", "why"),
    [("[1, 2]", "not a JSON object"), ("{nope", "Expecting"), ('{"metrics": {}, "counts": "many"}', "counts")],
)
def test_a_file_that_is_not_a_metrics_json_is_a_value_error_naming_it(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=why):
        RunResult.read(path)
    with pytest.raises(ValueError, match=r"metrics\.json"):
        load_metrics(tmp_path)
