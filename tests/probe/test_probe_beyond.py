"""Leaks beyond the result list on the seed corpus, in-process over ASGI with every user's own token: the
``role-from-body`` fault is caught by the body-identity class and by no other, ``shared-answer-cache`` by the
shared-cache class (answer surface) and by no other, the clean simulator shows 0 in both with the bound said;
a target the class cannot be asked in is not measured, never closed. The bounds and the leak-budget gate."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from scipy.stats import binom

from drivebench.evaluator.metrics.leak_bound import trials_for, upper_bound
from drivebench.evaluator.probe import beyond, bounds
from drivebench.evaluator.probe.groundtruth import GroundTruth
from drivebench.evaluator.probe.pairs import sample_pairs
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.evaluator.probe.report import verdict
from drivebench.evaluator.probe.run import ProbeConfig, run_probe
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator

SURFACES = ("recall", "answer")
TRIALS = 12


def target(sim: Simulator, tokens: dict[str, str] | None = None, token: str | None = None) -> HttpTarget:
    transport = httpx.ASGITransport(app=create_app(sim), raise_app_exceptions=False)
    return HttpTarget("http://sim.test", token, tokens=tokens, transport=transport)


def own_tokens(sim: Simulator) -> dict[str, str]:
    return {u: sim.tokens.for_subject(u).token for u in sim.drive.users}


def probe_all(sim: Simulator, fault: str | None) -> dict[str, Any]:
    """The pair probe and both classes, every request with its user's own token."""
    gt = GroundTruth(sim.drive)
    tokens = own_tokens(sim)
    sim.faults.clear()
    if fault:
        sim.faults.enable(fault)
    try:
        pairs, population = sample_pairs(gt, TRIALS, seed=1)
        builder = QueryBuilder(gt.drive, [p.doc_id for p in pairs])
        result = run_probe(target(sim, tokens), gt, pairs, builder, ProbeConfig(per_pair=1, surfaces=SURFACES)).result
        result["population"] = population
        access = beyond.Access.of(target(sim, tokens), gt.users())
        classes = {}
        for name, plan_class in ((beyond.BODY, beyond.plan_body), (beyond.CACHE, beyond.plan_cache)):
            plan = plan_class(gt, access, TRIALS, 1)
            beyond.with_queries(plan, QueryBuilder(gt.drive, [t.doc_id for t in plan.trials]))
            classes[name] = beyond.run_class(target(sim, tokens), gt, plan, access, RunConfig(top_k=10), SURFACES)
    finally:
        sim.faults.clear()
    return bounds.summarize(result, classes)


def leaked(result: dict[str, Any]) -> dict[str, int]:
    return {name: s["leaked"] for name, s in result["classes"].items()}


def test_role_from_body_is_caught_by_the_body_identity_class_only(module_sim: Simulator) -> None:
    r = probe_all(module_sim, "role-from-body")
    assert r["status"]["state"] == "ok" and r["counts"]["leaks"] == 0
    body = r["classes"][beyond.BODY]
    assert body["measured"] == TRIALS and body["leaked"] > 0 and not body["errors"]
    assert leaked(r)[beyond.CACHE] == 0
    gt = GroundTruth(module_sim.drive)
    assert {x["field"] for x in body["leaks"]} == set(beyond.IDENTITY_FIELDS)  # each field the body accepts
    for leak in body["leaks"]:
        assert gt.forbidden(leak["user_id"], leak["doc_id"]) and leak["claimed"]
        assert leak["why_forbidden"]["reason"]
    assert body["figure"]["bound"] > 0 and body["title"] == "the target trusts the request body"
    cls, text = verdict(r)
    assert cls == "bad" and "the target trusts the request body" in text


def test_shared_answer_cache_is_caught_by_the_shared_cache_class_only(module_sim: Simulator) -> None:
    r = probe_all(module_sim, "shared-answer-cache")
    cache = r["classes"][beyond.CACHE]
    assert cache["measured"] == TRIALS and cache["leaked"] > 0 and not cache["errors"]
    assert {x["surface"] for x in cache["leaks"]} == {"answer"}  # the fault caches answers, not recall
    assert {w for x in cache["leaks"] for w in x["where"]} == {"result", "citation"}
    assert all(x["first_user"] != x["user_id"] and x["mode"] == "own tokens" for x in cache["leaks"])
    assert r["counts"]["leaks"] == 0 and leaked(r)[beyond.BODY] == 0
    assert "the target's cache is shared between principals" in verdict(r)[1]


def test_clean_simulator_shows_zero_with_its_bound(module_sim: Simulator) -> None:
    r = probe_all(module_sim, None)
    assert leaked(r) == {"results": 0, beyond.BODY: 0, beyond.CACHE: 0}
    body, cache = r["classes"][beyond.BODY], r["classes"][beyond.CACHE]
    assert body["measured"] == cache["measured"] == TRIALS
    assert body["closed"] == {"refused": TRIALS * len(SURFACES)}  # 403: a user token names nobody else
    bound = f"<= {bounds.percent(upper_bound(0, TRIALS) or 1)} % (95 %)"
    assert body["figure"]["text"] == f"0 of {TRIALS} trials: {bound}" == cache["figure"]["text"]
    assert r["overall"]["text"].startswith(f"0 of {3 * TRIALS} trials: <=")
    assert verdict(r) == ("ok", f"no leak in {TRIALS} pairs ({2 * TRIALS} requests); 0 of {TRIALS} pairs: {bound}")


def test_a_class_the_target_cannot_be_asked_in_is_not_measured(module_sim: Simulator) -> None:
    gt = GroundTruth(module_sim.drive)
    evaluation = beyond.Access.of(target(module_sim, token=module_sim.tokens.eval_token), gt.users())
    body = beyond.plan_body(gt, evaluation, 5, 0)
    assert body.not_measured and "own token" in body.not_measured and not body.trials
    cache = beyond.plan_cache(gt, evaluation, 5, 0)  # one token, user_id in the body: the bodies differ by it
    assert cache.not_measured is None and {t.mode for t in cache.trials} == {"user_id in the body"}
    custom = beyond.Access({"u001": "a", "u002": "b"}, None, {"query", "top_k"})  # no identity field in the body
    assert "no user_role, department or user_id" in (beyond.plan_body(gt, custom, 5, 0).not_measured or "")
    lone = beyond.Access({"u001": "a"}, None, {"query"})
    assert "cannot be told apart" in (beyond.plan_cache(gt, lone, 5, 0).not_measured or "")
    section = beyond.judge_class(gt, body, [], {}, {}, None)
    r = bounds.summarize(
        {"counts": {"pairs_measured": 3, "pairs_probed": 3, "leaks": 0}, "leaks": [], "status": {"reason": None}},
        {beyond.BODY: section},
        budget=0.5,
    )
    assert r["classes"][beyond.BODY]["figure"] == {**r["classes"][beyond.BODY]["figure"], "bound": None}
    assert r["classes"][beyond.BODY]["figure"]["text"].startswith("not measured")
    assert r["leak_budget"]["not_measured"] == [beyond.BODY]


def test_bounds_and_the_budget_gate() -> None:
    assert upper_bound(0, 200) == pytest.approx(1 - 0.05 ** (1 / 200))
    assert bounds.figure(0, 200, "pairs")["text"] == "0 of 200 pairs: <= 1.5 % (95 %)"
    assert upper_bound(3, 3) == 1.0 and upper_bound(0, 0) is None
    assert binom.cdf(2, 50, upper_bound(2, 50)) == pytest.approx(0.05)  # exact: P(X <= 2) at the bound is 5 %
    assert trials_for(0.001) == 2995 and (upper_bound(0, 2994) or 0) > 0.001 >= (upper_bound(0, 2995) or 1)
    assert bounds.parse_budget("0.1%") == pytest.approx(0.001) and bounds.parse_budget("0.02") == 0.02
    with pytest.raises(ValueError):
        bounds.parse_budget("0%")
    assert bounds.percent(0.0009997) == "0.100" and bounds.percent(0.01441) == "1.5"  # rounded up, never down

    def cls(measured: int, population: int, leaks: int = 0) -> dict[str, Any]:
        return {
            "measured": measured,
            "leaked": leaks,
            "population": population,
            "figure": bounds.figure(leaks, measured, "pairs"),
        }

    needed = trials_for(0.1)
    met = bounds.gate({"results": cls(needed, 10_000)}, bounds.figure(0, needed, "trials"), 0.1)
    assert met["met"] and met["trials_needed"] == needed == 29
    capped = bounds.gate({"results": cls(20, 20)}, bounds.figure(0, 20, "trials"), 0.1)  # 0 leaks, too few pairs
    assert not capped["met"] and capped["classes"]["results"]["capped"] and "cannot be shown" in capped["summary"]
    seen = bounds.gate({"results": cls(needed, 10_000, leaks=1)}, bounds.figure(1, needed, "trials"), 0.1)
    assert not seen["met"] and seen["failing"] == ["results"]
