"""Property tests over random organisations, trees, grants (deny, breaks, expiry, clearance) and queries.

(a) every recall result is previewable per plain ``enforce`` at that time (and per the oracle);
(b) recall equals the brute-force top-k over the previewable set (no under-fill);
(c) grant, revoke, move, trash and clearance changes take effect on the very next request;
plus: the fast path (``allowed_mask``; ``lookup`` for documents and folders) == per-document ``enforce`` ==
the reference oracle == the compiled decision recall re-checks every hit with (``PermissionEngine.decide``), the
per-action enforcers == one enforcer holding every line, the point-in-time fast path
(``pointintime.allowed_mask``) == the point-in-time ``pointintime.enforce`` over random histories, and
effective permissions == ``enforce`` with exactly the grants the oracle says apply.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivebench.drive.errors import DriveError, InvalidRequest
from drivebench.drive.model import GrantRec
from drivebench.drive.permissions import PermissionEngine, Principal, pointintime
from drivebench.drive.permissions.compiler import compile_drive, doc_obj, folder_obj
from drivebench.drive.permissions.effective import effective_permissions
from drivebench.drive.state import Drive
from tests.support.perm_org import (
    ACTIONS,
    IMPLIES,
    QUERY_TIMES,
    TIMES,
    US,
    WORDS,
    _reaches,
    _subject_matches,
    _valid,
    brute_force_topk,
    build_drive,
    build_sim,
    examples,
    orgs,
    principals,
    ref_may,
    ref_visible_docs,
)
from tests.support.pit import history

EPS = 1e-5


def _pick(data: st.DataObject, items: list, n: int) -> list:
    return data.draw(st.lists(st.sampled_from(items), min_size=1, max_size=n, unique_by=id)) if items else []


# ---------------------------------------------------------------------------- fast path == enforce == oracle
@examples(400)
@given(org=orgs(), data=st.data())
def test_fast_path_equals_enforce_equals_oracle(org, data: st.DataObject) -> None:
    drive = build_drive(org)
    engine = PermissionEngine(drive)
    times = data.draw(st.lists(st.sampled_from(QUERY_TIMES), min_size=1, max_size=3, unique=True))
    for p in _pick(data, principals(drive, engine), 4):
        for t in times:
            for act in ("preview", data.draw(st.sampled_from(ACTIONS))):
                mask = engine.allowed_mask(p, act, t)
                look = engine.lookup(p, act, t)  # what every lookup by id or path asks first
                assert not look(doc_obj("no-such-doc")) and not look(folder_obj("no-such-folder"))
                for i, doc_id in enumerate(engine.doc_ids):
                    level = drive.documents[doc_id].secret_level
                    decided = engine.enforce(p, doc_obj(doc_id), act, t, level)
                    expected = ref_may(drive, p, "doc", doc_id, act, t)
                    compiled = engine.decide(p, doc_obj(doc_id), act, t, level)
                    by_id = engine.decide_doc(p, doc_id, act, t, level)  # recall's per-hit re-check
                    assert bool(mask[i]) == decided == expected == compiled == by_id, (p.subject, doc_id, act, t)
                    assert look(doc_obj(doc_id)) == decided, (p.subject, doc_id, act, t)
                    # the re-check reads the level it is given: above clearance it refuses whatever the lines
                    assert not engine.decide(p, doc_obj(doc_id), act, t, p.clearance + 1)
                    assert not engine.decide_doc(p, doc_id, act, t, p.clearance + 1)
            folder_id = data.draw(st.sampled_from(sorted(drive.folders)))
            act = data.draw(st.sampled_from(ACTIONS))
            decided = engine.enforce(p, folder_obj(folder_id), act, t)
            assert decided == ref_may(drive, p, "fld", folder_id, act, t)
            assert engine.decide(p, folder_obj(folder_id), act, t) == decided
            look = engine.lookup(p, act, t)  # its folder mask, over every folder
            for f in sorted(drive.folders):
                assert look(folder_obj(f)) == engine.enforce(p, folder_obj(f), act, t), (p.subject, f, act, t)
    # the per-action enforcers decide as one enforcer holding every line
    for _ in range(4):
        p = data.draw(st.sampled_from(principals(drive, engine)))
        doc_id = data.draw(st.sampled_from(engine.doc_ids))
        act, t = data.draw(st.sampled_from(ACTIONS)), data.draw(st.sampled_from(QUERY_TIMES))
        level = drive.documents[doc_id].secret_level
        assert engine.enforce(p, doc_obj(doc_id), act, t, level) == engine.enforce_full(
            p, doc_obj(doc_id), act, t, level
        )


@examples(120)
@given(org=orgs(), data=st.data())
def test_point_in_time_fast_path_equals_enforce(org, data: st.DataObject) -> None:
    """After a random history (grants, expiries, revocations, folder and document moves, trash), at a random
    ``as_of``: the point-in-time mask equals the point-in-time ``enforce`` on every document, for a user acting
    as itself (at ``as_of`` and now) and for the evaluation token naming it (at ``as_of`` only)."""
    sim = build_sim(org)
    drive, policies = sim.drive, sim.policies
    instants = history(drive, data)
    now = drive.clock.now()
    at = data.draw(st.sampled_from(sorted({t + d for t in instants for d in (-US, timedelta(0)) if t + d <= now})))
    engine = policies.engine_at(at)
    for user in _pick(data, sorted(drive.users), 3):
        me = policies.engine.user_principal(user)
        for p in (me, replace(me, evaluated_as=True)):
            for act in ("preview", data.draw(st.sampled_from(ACTIONS))):
                mask = pointintime.allowed_mask(policies, p, act, at, now)
                decided = [pointintime.enforce(policies, p, doc_obj(d), act, at, now) for d in engine.doc_ids]
                assert mask.tolist() == decided, (p.subject, p.evaluated_as, act, at)


# ---------------------------------------------------------------------------- (a) and (b): recall
def _check_recall(sim, p: Principal, query: str, top_k: int, at: datetime | None) -> None:
    drive, engine = sim.drive, sim.engine
    now = drive.clock.now()
    if at is not None and at > now:  # the future is not known: 400
        with pytest.raises(InvalidRequest):
            sim.recall(p, query, top_k, as_of=at)
        return
    out = sim.recall(p, query, top_k, as_of=at)
    t = out.at
    for hit in out.hits:  # (a) no leak, judged by plain enforce and by the oracle, at t and (acting as itself) now
        doc = drive.documents[hit.doc_id]
        assert engine.enforce(p, doc_obj(doc.doc_id), "preview", t, doc.secret_level), (p.subject, hit.doc_id, t)
        assert ref_may(drive, p, "doc", doc.doc_id, "preview", t), (p.subject, hit.doc_id, t)
        assert ref_may(drive, p, "doc", doc.doc_id, "preview", now), (p.subject, hit.doc_id, now)
        assert doc.trashed_at is None or t < doc.trashed_at
        assert doc.version_at(t) is not None and hit.version_id == doc.version_at(t).version_id
    visible = {d for d in ref_visible_docs(drive, p, t) if ref_may(drive, p, "doc", d, "preview", now)}
    everything = brute_force_topk(sim, query, visible, t, len(visible))
    expected = everything[:top_k]
    got = [(h.doc_id, h.score) for h in out.hits]
    # (b) no under-fill, and exactly the brute-force top-k (ties may swap places)
    assert len(got) == len(expected) == min(top_k, len(visible)), (len(got), len(expected), len(visible))
    assert len({d for d, _ in got}) == len(got)
    true_score = dict(everything)
    for (doc_id, score), (_, best) in zip(got, expected, strict=True):
        assert doc_id in true_score
        assert abs(score - true_score[doc_id]) <= EPS
        assert abs(score - best) <= EPS


@examples(350)
@given(org=orgs(), data=st.data())
def test_recall_never_leaks_and_equals_brute_force(org, data: st.DataObject) -> None:
    sim = build_sim(org)
    for p in _pick(data, principals(sim.drive, sim.engine), 3):
        query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
        top_k = data.draw(st.integers(1, 12))
        at = data.draw(st.one_of(st.none(), st.sampled_from(QUERY_TIMES)))
        _check_recall(sim, p, query, top_k, at)


# ---------------------------------------------------------------------------- (c): changes take effect at once
def _apply_random_change(drive: Drive, data: st.DataObject) -> str:
    op = data.draw(
        st.sampled_from(
            ("grant", "grant", "revoke", "move_folder", "move_doc", "trash", "untrash", "clearance", "clock")
        )
    )
    folders, docs, users = sorted(drive.folders), sorted(drive.documents), sorted(drive.users)
    if op == "grant":
        kind = data.draw(st.sampled_from(("user", "role", "dept", "everyone")))
        subject = {
            "user": lambda: "user:" + data.draw(st.sampled_from(users)),
            "role": lambda: "role:" + data.draw(st.sampled_from(("r0", "r1", "r2"))),
            "dept": lambda: "dept:" + data.draw(st.sampled_from(sorted(drive.departments))),
            "everyone": lambda: "everyone",
        }[kind]()
        on_doc = data.draw(st.booleans())
        lo = data.draw(st.one_of(st.none(), st.sampled_from(TIMES[:3])))
        hi = data.draw(st.one_of(st.none(), st.sampled_from(TIMES[3:])))
        drive.add_grant(
            GrantRec(
                grant_id=drive.next_grant_id(),
                subject=subject,
                actions=[data.draw(st.sampled_from(ACTIONS))],
                effect=data.draw(st.sampled_from(("allow", "allow", "deny"))),
                folder_id=None if on_doc else data.draw(st.sampled_from(folders)),
                doc_id=data.draw(st.sampled_from(docs)) if on_doc else None,
                valid_from=lo,
                valid_until=hi,
            )
        )
    elif op == "revoke" and drive.grants:
        drive.remove_grant(data.draw(st.sampled_from(sorted(drive.grants))))
    elif op == "move_folder":
        drive.move_folder(data.draw(st.sampled_from(folders)), data.draw(st.sampled_from(folders)))
    elif op == "move_doc":
        drive.move_document(data.draw(st.sampled_from(docs)), data.draw(st.sampled_from(folders)))
    elif op == "trash":
        drive.trash(data.draw(st.sampled_from(docs)))
    elif op == "untrash":
        drive.untrash(data.draw(st.sampled_from(docs)))
    elif op == "clearance":
        drive.set_clearance(data.draw(st.sampled_from(users)), data.draw(st.integers(0, 3)))
    elif op == "clock":  # time only moves forward (the control plane refuses to go back)
        drive.clock.advance(
            data.draw(
                st.sampled_from((US, timedelta(minutes=59, seconds=59, microseconds=999_999), timedelta(hours=1)))
            )
        )
    return op


@examples(325)
@given(org=orgs(max_docs=8), data=st.data())
def test_changes_take_effect_on_the_next_request(org, data: st.DataObject) -> None:
    sim = build_sim(org)
    drive = sim.drive
    for _ in range(data.draw(st.integers(1, 5))):
        try:
            _apply_random_change(drive, data)
        except DriveError:
            continue  # a refused change (cycle, name clash, already trashed) changes nothing
        engine = sim.engine
        assert engine.policy_version == drive.policy_version
        full = compile_drive(drive)  # a grant change derives the engine: it equals a full compile
        assert (engine.compiled.p, engine.compiled.g, engine.compiled.g2) == (full.p, full.g, full.g2)
        assert engine.compiled.grants == full.grants
        now = drive.clock.now()
        for p in _pick(data, principals(drive, engine), 3):
            out = sim.recall(p, data.draw(st.sampled_from(WORDS)), 50)
            assert out.at == now
            assert {h.doc_id for h in out.hits} == ref_visible_docs(drive, p, now), p.subject
            mask = engine.allowed_mask(p, "preview", now)
            assert {engine.doc_ids[i] for i, m in enumerate(mask) if m} == {
                d for d in drive.documents if ref_may(drive, p, "doc", d, "preview", now)
            }


# ---------------------------------------------------------------------------- effective permissions
@examples(325)
@given(org=orgs(), data=st.data())
def test_effective_permissions_explain_enforce(org, data: st.DataObject) -> None:
    drive = build_drive(org)
    engine = PermissionEngine(drive)
    objects = [("fld", f) for f in sorted(drive.folders)] + [("doc", d) for d in sorted(drive.documents)]
    for p in _pick(data, principals(drive, engine), 3):
        for kind, ident in _pick(data, objects, 3):
            t = data.draw(st.sampled_from(QUERY_TIMES))
            obj = doc_obj(ident) if kind == "doc" else folder_obj(ident)
            level = drive.documents[ident].secret_level if kind == "doc" else 0
            eff = effective_permissions(engine, p, obj, t, level, verify=False)
            assert [d.action for d in eff.actions] == list(ACTIONS)
            for d in eff.actions:
                assert (
                    d.allowed
                    == engine.enforce(p, obj, d.action, t, level)
                    == ref_may(drive, p, kind, ident, d.action, t)
                )
                expected = {
                    g.grant_id
                    for g in drive.grants.values()
                    if _valid(g.valid_from, g.valid_until, t)
                    and _reaches(drive, g.folder_id, g.doc_id, kind, ident)
                    and _subject_matches(drive, p, g.subject, t)
                    and (
                        (g.effect == "allow" and any(d.action in IMPLIES[a] for a in g.actions))
                        or (g.effect == "deny" and any(a in IMPLIES[d.action] for a in g.actions))
                    )
                }
                assert {s.grant_id for s in d.sources} == expected, (d.action, p.subject, obj)
                for s in d.sources:
                    g = drive.grants[s.grant_id]
                    target = doc_obj(g.doc_id) if g.doc_id else folder_obj(g.folder_id or "")
                    assert s.inherited == (target != obj)
                    assert s.vetoed_by_clearance == (s.effect == "allow" and p.clearance < level)
                if d.allowed:
                    assert d.reason == "allowed"
                elif any(s.effect == "deny" for s in d.sources):
                    assert d.reason == "denied"
            effective_permissions(engine, p, obj, t, level, verify=True)  # and the built-in check agrees
