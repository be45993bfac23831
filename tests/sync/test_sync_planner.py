"""The planner finds a change of every revoking class on the corpora drivebench ships: on a company with one root
department (acme-zh, the default corpus) as well as on the seed; a class it cannot plan is reported with what the
drive lacks, never silently dropped."""

from __future__ import annotations

from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.evaluator.sync.planner import member_removed
from drivebench.evaluator.sync.scenario import change_classes
from drivebench.evaluator.sync.view import DriveView


def _one_root_company() -> DriveView:
    """acme's shape in miniature: every department under one root; u1 sees d1 only through dept ``a``."""
    departments = {"root": None, "a": "root", "b": "root", "a-sub": "a"}
    return DriveView(
        users={"u1": {"user_id": "u1", "department": "a", "roles": [], "projects": [], "clearance": "internal"}},
        departments={k: {"id": k, "parent": v} for k, v in departments.items()},
        folders={"/x": {"path": "/x", "break_inheritance": False}},
        grants=[
            {
                "grant_id": "g1",
                "subject": "dept:a",
                "actions": ["preview"],
                "effect": "allow",
                "valid_until": None,
                "doc_id": None,
                "path": "/x",
            }
        ],
        files={"d1": {"doc_id": "d1", "folder": "/x", "path": "/x/d1.md", "secret_level": "internal"}},
        access={"d1": {"u1"}},
        now="2026-11-01T00:00:00+00:00",
    )


def test_member_removed_moves_the_user_to_a_sibling_department_under_the_same_root() -> None:
    plan = member_removed(_one_root_company(), set(), "r", 1)
    assert plan is not None and plan.users == ["u1"] and plan.docs == ["d1"]
    assert plan.detail == "user u1 leaves department a for b"  # not a-sub (below the granted a), not root (above)


def test_every_revoking_class_is_planned_and_converges_on_the_default_corpus() -> None:
    from drivebench.api import load_simulator
    from drivebench.simulator.backend import SimConfig
    from tests.support.sync import run_in_process

    sim = load_simulator(DEFAULT_CORPUS, config=SimConfig(embedder="hash", pipeline="bm25"))
    result = run_in_process(sim, "revocations")
    sync = result["sync"]
    assert result["status"]["state"] == "ok", result["status"]
    assert sync["overall"]["not_planned"] == 0, {c: s.get("not_planned_why") for c, s in sync["classes"].items()}
    revoking = {c for c, v in change_classes().items() if v.kind == "revoke"}
    assert set(sync["classes"]) == revoking
    for cls, s in sync["classes"].items():
        assert s["n"] >= 1 and s["not_converged"] == 0 and s["not_testable"] == 0, (cls, s)


def test_every_class_says_what_the_drive_lacks_when_it_cannot_be_planned() -> None:
    for name, cls in change_classes().items():
        assert cls.none.startswith("no "), name
