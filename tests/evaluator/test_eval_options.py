"""``api.evaluate(target, evalset, EvalOptions)``: the options object and the keyword arguments of the former
signature give the same run; the keywords warn; a mix of both, or an unknown keyword, is a TypeError."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from drivebench.api import EvalHooks, EvalOptions, EvalSet, evaluate
from drivebench.evaluator.report.sample import sample_inputs

QUERIES, RUN, _ = sample_inputs(seed=5, n_queries=12)
ANSWERS = {r.query_id: [h.doc_id for h in r.results] for r in RUN}


def recall(query: str, principal: dict[str, Any], top_k: int, as_of: Any) -> list[str]:
    return next(ANSWERS[q.query_id] for q in QUERIES if q.query == query)[:top_k]


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result["metrics"].items() if not k.startswith("latency")}


def test_options_and_the_former_keywords_give_the_same_run() -> None:
    seen: list[int] = []
    options = EvalOptions(
        ks=(1, 10), preflight=False, label="same", fail_on=["hit_rate@10<0.2"], allow_no_oracle=True,
        hooks=EvalHooks(on_run_start=seen.append),
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new form warns of nothing
        new = evaluate(recall, QUERIES, options)
    with pytest.warns(DeprecationWarning, match="EvalOptions"):
        old = evaluate(
            recall, QUERIES, ks=(1, 10), preflight=False, label="same", fail_on=["hit_rate@10<0.2"],
            allow_no_oracle=True, on_run_start=seen.append,
        )  # fmt: skip
    strip = {"started_at", "finished_at"}
    assert {k: v for k, v in new.result["run_info"].items() if k not in strip} == {
        k: v for k, v in old.result["run_info"].items() if k not in strip
    }
    assert _figures(new.result) == _figures(old.result) and new.result["counts"] == old.result["counts"]
    assert new.verdict == old.verdict and new.gates == old.gates and seen == [len(QUERIES)] * 2
    assert new.result["run_info"]["label"] == "same" and [g.expr for g in new.gates][-1] == "hit_rate@10<0.2"


def test_an_eval_set_given_as_an_evalset_is_not_parsed_again(tmp_path: Any) -> None:
    from drivebench.formats.evalset import write_jsonl

    path = write_jsonl(tmp_path / "evalset.jsonl", QUERIES)
    loaded = EvalSet.load(path)
    assert EvalSet.load(loaded) is loaded and loaded.path == path and len(loaded.queries) == len(QUERIES)
    run = evaluate(recall, loaded, EvalOptions(ks=(1, 10), preflight=False, allow_no_oracle=True))
    assert run.result["run_info"]["evalset"] == str(path) and run.result["run_info"]["evalset_hash"].startswith(
        "sha256:"
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: evaluate(recall, QUERIES, EvalOptions(), ks=(1,)), "not both"),
        (lambda: evaluate(recall, QUERIES, top_k=3), "unexpected keyword argument 'top_k'"),
        (lambda: evaluate(recall, [], EvalOptions()), None),
    ],
)
def test_a_call_that_cannot_be_meant_is_refused_before_anything_runs(call: Any, message: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TypeError if message else ValueError, match=message or "no queries"):
            call()
