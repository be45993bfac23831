"""Policy changes cost what they touch: after grants are added or removed, the engine derived
from the previous one (only those grants recompiled; documents, role managers and folder tree reused)
decides exactly like an engine compiled from scratch: the same lines, the same masks, the same compiled
re-check, the same Casbin decisions. Anything else that changed the policy forces a full compile."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivebench.drive.model import GrantRec
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj
from tests.support.perm_org import ACTIONS, QUERY_TIMES, build_drive, examples, orgs, principals


@examples(80)
@given(org=orgs(), data=st.data())
def test_an_engine_derived_after_grant_changes_equals_a_full_compile(org, data: st.DataObject) -> None:
    drive = build_drive(org)
    engine = PermissionEngine(drive)
    for _ in range(data.draw(st.integers(1, 3))):
        live = sorted(d for d, doc in drive.documents.items() if doc.trashed_at is None)
        if live and data.draw(st.booleans()):  # a content-only change in between (a new version): still derived
            drive.add_version(data.draw(st.sampled_from(live)), b"new text", None)
        for _ in range(data.draw(st.integers(1, 2))):  # one or two grant changes between engines
            if drive.grants and data.draw(st.booleans()):
                drive.remove_grant(data.draw(st.sampled_from(sorted(drive.grants))))
            else:
                on_doc = data.draw(st.booleans())
                drive.add_grant(
                    GrantRec(
                        grant_id=drive.next_grant_id(),
                        subject=data.draw(st.sampled_from(["everyone", *(f"user:{u}" for u in sorted(drive.users))])),
                        actions=[data.draw(st.sampled_from(ACTIONS))],
                        effect=data.draw(st.sampled_from(("allow", "deny"))),
                        folder_id=None if on_doc else data.draw(st.sampled_from(sorted(drive.folders))),
                        doc_id=data.draw(st.sampled_from(sorted(drive.documents))) if on_doc else None,
                    )
                )
        derived = PermissionEngine.after_grant_changes(engine, drive)
        assert derived is not None and derived.role_managers is engine.role_managers  # reused, not rebuilt
        full = PermissionEngine(drive)
        assert derived.policy_version == full.policy_version == drive.policy_version
        assert derived.compiled.p == full.compiled.p and derived.compiled.grants == full.compiled.grants
        for p in principals(drive, full):
            for t in QUERY_TIMES[:3]:
                for act in ("preview", data.draw(st.sampled_from(ACTIONS))):
                    assert (derived.allowed_mask(p, act, t) == full.allowed_mask(p, act, t)).all()
            doc_id = data.draw(st.sampled_from(full.doc_ids))
            level = drive.documents[doc_id].secret_level
            t = data.draw(st.sampled_from(QUERY_TIMES))
            decided = full.enforce(p, doc_obj(doc_id), "preview", t, level)
            assert derived.enforce(p, doc_obj(doc_id), "preview", t, level) == decided
            assert derived.decide(p, doc_obj(doc_id), "preview", t, level) == decided
            assert derived.decide_doc(p, doc_id, "preview", t, level) == decided
        engine = derived


def test_other_policy_changes_force_a_full_compile() -> None:
    from tests.support.perm_org import org_from

    drive = build_drive(org_from())
    engine = PermissionEngine(drive)
    user = sorted(drive.users)[0]
    drive.set_clearance(user, 0)  # a user's clearance: not a grant change
    assert PermissionEngine.after_grant_changes(engine, drive) is None
    assert PermissionEngine.after_grant_changes(engine, build_drive(org_from())) is None  # another drive
    current = PermissionEngine(drive)
    drive.bump_policy()  # a policy change the feed does not name
    assert PermissionEngine.after_grant_changes(current, drive) is None
