"""The classes that follow a document past the result list: ``purged`` (permanent deletion) and
``answer-cache`` (the answer endpoint after a revocation), on the simulator in process. The clean simulator
reflects both at once; a target that keeps purged documents, and the simulator's ``shared-answer-cache`` and
``answer-unfiltered-context`` faults, leave the leak open until the deadline."""

from __future__ import annotations

from typing import Any

from drivebench.evaluator.sync.planner import answer_cache
from drivebench.evaluator.sync.queries import distinctive_sentence
from drivebench.evaluator.sync.scenario import Scenario
from drivebench.evaluator.sync.view import DriveView
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.evaluator.targets.profile import TargetProfile
from drivebench.formats.facts import CorpusFact, FactOwner
from drivebench.simulator.backend import Simulator
from tests.support.sync import HidingTarget, KeepsPurgedTarget, drive_client, run_in_process, simulator_target

DEADLINE = 0.6  # an open leak waits this long: short, the clean simulator reflects a change at the first probe


def _one(cls: str, count: int = 1) -> Scenario:
    return Scenario(cls, "", [(cls, count)])


def _class(result: dict[str, Any], cls: str) -> dict[str, Any]:
    return result["sync"]["classes"][cls]


def test_an_index_that_misses_purges_leaves_every_purge_open(fresh_sim: Simulator) -> None:
    """(The clean simulator reflects a purge at once: ``test_sync_on_simulator``'s revocations run.)"""
    kept = run_in_process(
        fresh_sim, _one("purged"), KeepsPurgedTarget(simulator_target(fresh_sim), fresh_sim), deadline=DEADLINE
    )
    s = _class(kept, "purged")
    assert kept["sync"]["changes"][0]["detail"].startswith("purge ")
    assert s["n"] >= 1 and s["not_converged"] == s["n"], s  # every user who saw it still gets it
    assert s["open_leak_bound"] == 1.0 and kept["verdict"]["exit_code"] == 1
    assert kept["sync"]["drive_restored"] is True  # the purged document is back after the run


def test_a_cached_answer_keeps_a_revoked_document_open_while_the_clean_simulator_converges(
    fresh_sim: Simulator,
) -> None:
    clean = run_in_process(fresh_sim, _one("answer-cache"), deadline=DEADLINE)
    s = _class(clean, "answer-cache")
    assert clean["status"]["state"] == "ok", clean["status"]
    assert s["n"] == 1 and s["not_converged"] == 0 and s["not_testable"] == 0, s
    assert {p["probe"] for p in clean["sync"]["pairs"]} == {"answer"}
    fresh_sim.faults.enable("shared-answer-cache")
    cached = run_in_process(fresh_sim, _one("answer-cache"), deadline=DEADLINE)
    s = _class(cached, "answer-cache")
    assert s["n"] == 1 and s["not_converged"] == 1, s
    assert cached["sync"]["overall"]["revocations_not_converged"] == 1 and cached["verdict"]["exit_code"] == 1
    assert cached["sync"]["pairs"][0]["leak_s"] == DEADLINE  # the whole deadline: still open when the run stopped


def test_an_answer_stating_a_revoked_documents_fact_is_open_although_its_citations_are_clean(
    fresh_sim: Simulator,
) -> None:
    """``answer-unfiltered-context`` cites only what recall returned, so after the deny the answer cites and
    returns nothing forbidden, yet still quotes the document: only its facts (here: its distinctive sentence,
    owned by it alone) show it."""
    drive = drive_client(fresh_sim)
    view = DriveView.read(drive)
    plan = answer_cache(view, set(), "r", 1)
    assert plan is not None
    doc = plan.docs[0]
    sentence = distinctive_sentence(drive.content(doc), view.files[doc]["name"])
    assert sentence
    version = fresh_sim.drive.documents[doc].head.version_id
    fact = CorpusFact(
        fact_id="f1", text=sentence, entity="e", attribute="a", owners=[FactOwner(doc_id=doc, version_ids=[version])]
    )
    fresh_sim.faults.enable("answer-unfiltered-context")
    blind = run_in_process(fresh_sim, _one("answer-cache"), deadline=DEADLINE)
    assert _class(blind, "answer-cache")["not_converged"] == 0  # citations and results alone: looks reflected
    judged = run_in_process(fresh_sim, _one("answer-cache"), deadline=DEADLINE, facts=[fact])
    s = _class(judged, "answer-cache")
    assert judged["sync"]["pairs"][0]["doc_id"] == doc
    assert s["n"] == 1 and s["not_converged"] == 1, s


def test_without_an_answer_endpoint_the_class_is_not_measured_with_the_reason_never_passed(
    fresh_sim: Simulator,
) -> None:
    recall_only = HidingTarget(simulator_target(fresh_sim))  # recall, no answer
    result = run_in_process(fresh_sim, _one("answer-cache"), recall_only, deadline=DEADLINE)
    s = _class(result, "answer-cache")
    assert s["n"] == 0 and s["not_planned"] == 1 and s["open_leak_bound"] is None
    assert s["not_planned_why"] == "the target has no answer endpoint"
    assert result["status"]["state"] == "failed" and result["verdict"]["exit_code"] == 3  # nothing measured
    assert result["sync"]["changes"] == [] and result["sync"]["overall"]["revocations_open_bound"] is None
    missing = HttpTarget(
        "http://testserver/api/mcp/recall",
        fresh_sim.tokens.eval_token,
        transport=simulator_target(fresh_sim)._client._transport,
        profile=TargetProfile.model_validate({"request": {"answer_url": "http://testserver/api/no-answer"}}),
    )
    mixed = Scenario("mixed", "", [("answer-cache", 1), ("trashed", 1)])
    result = run_in_process(fresh_sim, mixed, missing, deadline=DEADLINE)
    why = _class(result, "answer-cache")["not_planned_why"]
    assert "http://testserver/api/no-answer" in why and "404" in why, why
    assert result["sync"]["errors"]["failed"] == 0  # the endpoint check is not a failed probe
    assert result["status"]["state"] == "ok" and _class(result, "trashed")["n"] >= 1
