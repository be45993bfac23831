"""Regressions: the permission bugs other systems shipped, each pinned by a small hand-built drive.

Every check goes through ``enforce``, the fast path and recall, and where it matters the effective
permissions explanation; the reference oracle (``ref_may``) is asserted alongside.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from casbin.rbac.default_role_manager.role_manager import RoleManager

from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.effective import effective_permissions
from drivebench.formats.corpus import Project, ProjectMember
from tests.support.perm_org import TIMES, US, build_drive, build_sim, org_from, ref_may

T1, T2, T3 = TIMES[1], TIMES[2], TIMES[3]


def _visible(sim, principal, at=None) -> set[str]:
    """Recall's documents as the permissions in force at ``at`` allow: an ``as_of`` in the past is replayed
    with an evaluated-as principal (a principal acting as itself also needs the right now); a future
    instant (an ``as_of`` after the clock is a 400) by moving the clock there for the call."""
    now = sim.drive.clock.now()
    if at is not None and at > now:
        sim.drive.clock.set(at)
        try:
            return {h.doc_id for h in sim.recall(principal, "budget approval", 50).hits}
        finally:
            sim.drive.clock.set(now)
    who = replace(principal, evaluated_as=True) if at is not None else principal
    return {h.doc_id for h in sim.recall(who, "budget approval", 50, as_of=at).hits}


def _check_everywhere(sim, user_id: str, doc_id: str, expected: bool, at=None) -> None:
    """enforce, fast path, oracle and recall all give ``expected`` for previewing ``doc_id`` at ``at``."""
    drive, engine = sim.drive, sim.engine
    at = at or drive.clock.now()
    p = engine.user_principal(user_id)
    level = drive.documents[doc_id].secret_level
    assert engine.enforce(p, doc_obj(doc_id), "preview", at, level) is expected
    assert bool(engine.allowed_mask(p, "preview", at)[engine.doc_index[doc_id]]) is expected
    assert ref_may(drive, p, "doc", doc_id, "preview", at) is expected
    assert (doc_id in _visible(sim, p, at)) is expected


# ---------------------------------------------------------------------------- deny beats allow
def test_user_level_deny_beats_group_allow() -> None:
    """elastic/connectors #2875: a user-level deny overridden by a group allow."""
    org = org_from(
        departments=[("d0", None), ("d1", "d0")],
        users=[("u0", "d1", ["eng"], "secret"), ("u1", "d1", ["eng"], "secret")],
        folders=["/a", "/a/sub"],
        docs=[("x1", "/a/sub", "internal"), ("x2", "/a", "internal")],
        grants=[
            {"path": "/a", "subject": {"kind": "department", "id": "d0"}, "actions": ["edit"]},  # parent dept
            {"path": "/a", "subject": {"kind": "role", "id": "eng"}, "actions": ["manage"]},
            {"path": "/a", "subject": {"kind": "everyone"}, "actions": ["preview"]},
            {
                "grant_id": "deny-u0",
                "doc_id": "x1",
                "subject": {"kind": "user", "id": "u0"},
                "actions": ["preview"],
                "effect": "deny",
            },
        ],
    )
    sim = build_sim(org)
    _check_everywhere(sim, "u0", "x1", False)  # denied despite department, role and everyone allows
    _check_everywhere(sim, "u0", "x2", True)  # the deny is on x1 only
    _check_everywhere(sim, "u1", "x1", True)
    eff = effective_permissions(sim.engine, sim.engine.user_principal("u0"), doc_obj("x1"), sim.drive.clock.now(), 1)
    preview = eff.decision("preview")
    assert preview.reason == "denied" and preview.sources[0].grant_id == "deny-u0"
    assert {s.grant_id for s in preview.sources if s.effect == "allow"} == {"g00", "g01", "g02"}
    assert all(s.inherited for s in preview.sources if s.effect == "allow")
    assert eff.decision("list").allowed  # a deny of preview leaves list (the weaker action) alone


def test_inherited_deny_beats_direct_allow_and_list_deny_hides() -> None:
    org = org_from(
        users=[("u0", "d0", [], "secret")],
        folders=["/a", "/a/b"],
        docs=[("x1", "/a/b", "public")],
        grants=[
            {"doc_id": "x1", "subject": {"kind": "user", "id": "u0"}, "actions": ["manage"]},
            {"path": "/a", "subject": {"kind": "user", "id": "u0"}, "actions": ["list"], "effect": "deny"},
        ],
    )
    sim = build_sim(org)
    _check_everywhere(sim, "u0", "x1", False)
    eff = effective_permissions(sim.engine, sim.engine.user_principal("u0"), doc_obj("x1"), sim.drive.clock.now(), 0)
    assert eff.allowed == []  # deny of list = invisible: every action goes


# ---------------------------------------------------------------------------- prefix traps
def test_folder_grant_does_not_open_a_sibling_sharing_its_prefix() -> None:
    """``keyMatch('/finance*')`` matches ``/finance-secret/x``: the model uses ids, not path patterns."""
    org = org_from(
        users=[("u0", "d0", [], "secret")],
        folders=["/finance", "/finance/q1", "/finance-secret", "/finance-secret/q1", "/financex"],
        docs=[
            ("ok1", "/finance", "public"),
            ("ok2", "/finance/q1", "public"),
            ("bad1", "/finance-secret", "public"),
            ("bad2", "/finance-secret/q1", "public"),
            ("bad3", "/financex", "public"),
        ],
        grants=[{"path": "/finance", "subject": {"kind": "everyone"}, "actions": ["preview"]}],
    )
    sim = build_sim(org)
    for doc_id, expected in (("ok1", True), ("ok2", True), ("bad1", False), ("bad2", False), ("bad3", False)):
        _check_everywhere(sim, "u0", doc_id, expected)
    secret = sim.drive.folder_by_path("/finance-secret").folder_id
    assert sim.engine.object_ancestors(folder_obj(secret)) == {folder_obj(secret), folder_obj("fld-0")}


# ---------------------------------------------------------------------------- time boundaries
def test_expiry_at_the_boundary_to_the_microsecond() -> None:
    """valid_from inclusive, valid_until exclusive, judged at the request's time (as_of or the clock)."""
    org = org_from(
        users=[("u0", "d0", [], "internal")],
        folders=["/a"],
        docs=[("x1", "/a", "internal")],
        grants=[
            {
                "path": "/a",
                "subject": {"kind": "user", "id": "u0"},
                "actions": ["preview"],
                "valid_from": T1,
                "valid_until": T3,
            }
        ],
        now=T1 - US,
    )
    sim = build_sim(org)
    for at, expected in ((T1 - US, False), (T1, True), (T1 + US, True), (T3 - US, True), (T3, False), (T3 + US, False)):
        _check_everywhere(sim, "u0", "x1", expected, at=at)
    # the simulated clock, not the wall clock: advancing it flips the answer on the very next request
    p = sim.engine.user_principal("u0")
    assert _visible(sim, p) == set()
    sim.drive.clock.advance(US)
    assert _visible(sim, p) == {"x1"}
    sim.drive.clock.set(T3 - US)
    assert _visible(sim, p) == {"x1"}
    sim.drive.clock.advance(US)
    assert _visible(sim, p) == set()
    eff = effective_permissions(sim.engine, p, doc_obj("x1"), T3 - US, 1)
    assert eff.decision("preview").allowed and eff.decision("preview").sources[0].valid_until == T3


def test_project_membership_validity_and_grant_window_intersect() -> None:
    project = Project(
        id="p1",
        name="p1",
        members=[ProjectMember(user_id="u0", valid_from=T1, valid_until=T3), ProjectMember(user_id="u1")],
    )
    org = org_from(
        users=[("u0", "d0", [], "internal"), ("u1", "d0", [], "internal"), ("u2", "d0", [], "internal")],
        folders=["/p"],
        docs=[("x1", "/p", "internal")],
        projects=[project],
        grants=[{"path": "/p", "subject": {"kind": "project", "id": "p1"}, "actions": ["preview"], "valid_from": T2}],
    )
    sim = build_sim(org)
    for at, u0, u1 in (
        (T1, False, False),
        (T2 - US, False, False),
        (T2, True, True),
        (T3 - US, True, True),
        (T3, False, True),
        (TIMES[4], False, True),
    ):
        _check_everywhere(sim, "u0", "x1", u0, at=at)
        _check_everywhere(sim, "u1", "x1", u1, at=at)
        _check_everywhere(sim, "u2", "x1", False, at=at)


# ---------------------------------------------------------------------------- moves
def test_moved_folder_is_re_evaluated_on_the_next_request() -> None:
    org = org_from(
        departments=[("d0", None), ("d1", None)],
        users=[("u0", "d0", [], "internal"), ("u1", "d1", [], "internal")],
        folders=["/a", "/a/x", "/a/x/y", "/b"],
        breaks={"/a/x/y"},
        docs=[("x1", "/a/x", "internal"), ("x2", "/a/x/y", "internal")],
        grants=[
            {"path": "/a", "subject": {"kind": "department", "id": "d0"}, "actions": ["preview"]},
            {"path": "/b", "subject": {"kind": "department", "id": "d1"}, "actions": ["preview"]},
        ],
    )
    sim = build_sim(org)
    _check_everywhere(sim, "u0", "x1", True)
    _check_everywhere(sim, "u1", "x1", False)
    _check_everywhere(sim, "u0", "x2", False)  # /a/x/y breaks inheritance
    d = sim.drive
    d.move_folder(d.folder_by_path("/a/x").folder_id, d.folder_by_path("/b").folder_id)
    _check_everywhere(sim, "u0", "x1", False)
    _check_everywhere(sim, "u1", "x1", True)
    _check_everywhere(sim, "u1", "x2", False)  # still broken after the move
    d.move_document("x2", d.folder_by_path("/b").folder_id)
    _check_everywhere(sim, "u1", "x2", True)


# ---------------------------------------------------------------------------- depth
def test_deep_folder_tree_and_department_nesting_beyond_casbins_default_ten_levels() -> None:
    depth = 40
    folders = ["/" + "/".join(f"l{i}" for i in range(n + 1)) for n in range(depth)]
    departments = [("k0", None)] + [(f"k{i}", f"k{i - 1}") for i in range(1, 16)]
    org = org_from(
        departments=departments,
        users=[("u0", "k15", [], "internal"), ("u1", "k0", [], "internal")],
        folders=folders,
        docs=[("deep", folders[-1], "internal"), ("mid", folders[12], "internal")],
        grants=[{"path": "/l0", "subject": {"kind": "department", "id": "k0"}, "actions": ["preview"]}],
    )
    sim = build_sim(org)
    assert sim.engine.max_hierarchy_level > depth + 16
    for user in ("u0", "u1"):
        _check_everywhere(sim, user, "deep", True)
        _check_everywhere(sim, user, "mid", True)
    # why it matters: Casbin's default role manager gives up after 10 levels
    default = RoleManager(10)
    for a, b in sim.engine.compiled.g2:
        default.add_link(a, b)
    top = folder_obj(sim.drive.folder_by_path("/l0").folder_id)
    assert default.has_link(doc_obj("deep"), top) is False
    assert sim.engine.role_managers["g2"].has_link(doc_obj("deep"), top) is True


# ---------------------------------------------------------------------------- clearance
def test_clearance_vetoes_every_allow_and_a_raise_takes_effect_at_once() -> None:
    org = org_from(
        users=[("u0", "d0", [], "internal")],
        folders=["/s"],
        docs=[("top", "/s", "secret"), ("low", "/s", "public")],
        grants=[{"path": "/s", "subject": {"kind": "user", "id": "u0"}, "actions": ["manage"]}],
    )
    sim = build_sim(org)
    _check_everywhere(sim, "u0", "top", False)
    _check_everywhere(sim, "u0", "low", True)
    eff = effective_permissions(sim.engine, sim.engine.user_principal("u0"), doc_obj("top"), sim.drive.clock.now(), 3)
    assert eff.allowed == [] and {a.reason for a in eff.actions} == {"clearance"}
    assert all(s.vetoed_by_clearance for a in eff.actions for s in a.sources)
    sim.drive.set_clearance("u0", 3)
    _check_everywhere(sim, "u0", "top", True)


# ---------------------------------------------------------------------------- role principals
def test_role_principal_sees_role_and_department_grants_only_within_lowest_clearance() -> None:
    org = org_from(
        departments=[("d0", None), ("d1", "d0"), ("d2", None)],
        users=[("u0", "d1", ["eng"], "secret"), ("u1", "d2", ["eng"], "internal")],
        folders=["/r", "/u", "/d", "/e"],
        docs=[
            ("byrole", "/r", "internal"),
            ("byuser", "/u", "internal"),
            ("bydept", "/d", "internal"),
            ("secret", "/r", "secret"),
            ("public", "/e", "public"),
        ],
        grants=[
            {"path": "/r", "subject": {"kind": "role", "id": "eng"}, "actions": ["preview"]},
            {"path": "/u", "subject": {"kind": "user", "id": "u0"}, "actions": ["preview"]},
            {"path": "/d", "subject": {"kind": "department", "id": "d0"}, "actions": ["preview"]},
            {"path": "/e", "subject": {"kind": "everyone"}, "actions": ["preview"]},
        ],
    )
    sim = build_sim(org)
    engine, now = sim.engine, sim.drive.clock.now()
    role = engine.role_principal("eng")
    assert role.clearance == 1  # the lowest clearance among eng holders
    assert _visible(sim, role) == {"byrole", "public"}
    in_d1 = engine.role_principal("eng", "d1")
    assert in_d1.clearance == 3
    assert _visible(sim, in_d1) == {"byrole", "bydept", "public", "secret"}  # d1 is under d0
    assert _visible(sim, engine.role_principal("eng", "d2")) == {"byrole", "public"}
    for p in (role, in_d1):
        mask = engine.allowed_mask(p, "preview", now)
        for i, doc_id in enumerate(engine.doc_ids):
            level = sim.drive.documents[doc_id].secret_level
            assert bool(mask[i]) == engine.enforce(p, doc_obj(doc_id), "preview", now, level)
            assert bool(mask[i]) == ref_may(sim.drive, p, "doc", doc_id, "preview", now)


# ---------------------------------------------------------------------------- fast path, larger random drive
def test_fast_path_equals_enforce_on_a_synthetic_thousand_document_drive() -> None:
    from benchmarks.bench_permissions import make_drive

    drive = make_drive(1000, seed=7)
    engine = PermissionEngine(drive)
    now = drive.clock.now()
    users = sorted(drive.users)[::5]
    for t in (now, now - timedelta(days=100), now + timedelta(days=200)):
        for u in users:
            p = engine.user_principal(u)
            mask = engine.allowed_mask(p, "preview", t)
            for i in range(0, len(engine.doc_ids), 7):
                doc_id = engine.doc_ids[i]
                level = drive.documents[doc_id].secret_level
                assert bool(mask[i]) == engine.enforce(p, doc_obj(doc_id), "preview", t, level), (u, doc_id, t)


@pytest.mark.parametrize("act", ["list", "download", "manage"])
def test_fast_path_for_other_actions_equals_enforce(act: str) -> None:
    org = org_from(
        users=[("u0", "d0", ["r"], "secret")],
        folders=["/a", "/a/b"],
        docs=[("x1", "/a", "public"), ("x2", "/a/b", "secret")],
        grants=[
            {"path": "/a", "subject": {"kind": "role", "id": "r"}, "actions": ["edit"]},
            {"doc_id": "x2", "subject": {"kind": "user", "id": "u0"}, "actions": ["download"], "effect": "deny"},
        ],
    )
    drive = build_drive(org)
    engine = PermissionEngine(drive)
    p, now = engine.user_principal("u0"), drive.clock.now()
    mask = engine.allowed_mask(p, act, now)
    for i, doc_id in enumerate(engine.doc_ids):
        expected = ref_may(drive, p, "doc", doc_id, act, now)
        assert (
            bool(mask[i])
            == engine.enforce(p, doc_obj(doc_id), act, now, drive.documents[doc_id].secret_level)
            == expected
        )
