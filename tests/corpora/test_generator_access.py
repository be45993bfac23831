"""The generator's access ground truth equals the simulator's Casbin decisions.

``manifest.access`` is written by the generator from its own rules (``generator.access``); here every
(user, document) pair of both default corpora is decided by the materialized fast path, and a sixth of them
(every pair with DRIVEBENCH_SOAK=1) by Casbin (``PermissionEngine.enforce``, one per pair), at ``clock.now``
and at past instants.
Manifests are assembled in memory (no files rendered): permissions do not depend on file bytes.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.assemble import assemble
from drivebench.corpora.generator.build import plan
from drivebench.drive import permissions
from drivebench.drive.history import PolicyView
from drivebench.drive.state import Drive
from drivebench.formats.corpus import Manifest
from tests.support.decisions import previewable_docs, user_may_preview

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["zh", "en"])
def manifest(request: pytest.FixtureRequest) -> Manifest:
    s, docs, _ = plan(request.param, 7, 300)
    m, _, _ = assemble(f"acme-{request.param}", s, docs, 7)
    return m


# Per-pair enforce is the slow reference (Casbin evaluates the matcher against every line of the action: ~5 ms
# a pair): a sixth of the pairs (every user and every document appears, in a different sixth for each language)
# by default, every pair with DRIVEBENCH_SOAK=1. The fast path below checks every pair, and the test after it
# runs the reference on every moved document for every user at seven other instants.
PAIR_STRIDE = 1 if os.environ.get("DRIVEBENCH_SOAK") == "1" else 6


def test_access_equals_casbin_enforce_for_every_pair(manifest: Manifest) -> None:
    engine = permissions.PermissionEngine.from_manifest(manifest)
    now = manifest.clock.now
    access = manifest.access or {}
    offset = 0 if manifest.name.endswith("zh") else 1
    pairs = [
        (u, d)
        for i, u in enumerate(manifest.users)
        for j, d in enumerate(manifest.documents)
        if (i + j + offset) % PAIR_STRIDE == 0
    ]
    mismatches = [
        (u.user_id, d.doc_id)
        for u, d in pairs
        if user_may_preview(engine, u.user_id, d.doc_id, now) != (d.doc_id in set(access[u.user_id]))
    ]
    assert mismatches == []
    assert len(pairs) >= len(manifest.users) * len(manifest.documents) // PAIR_STRIDE
    assert {u.user_id for u, _ in pairs} == {u.user_id for u in manifest.users}
    assert {d.doc_id for _, d in pairs} == {d.doc_id for d in manifest.documents}


def test_access_equals_casbin_fast_path(manifest: Manifest) -> None:
    engine = permissions.PermissionEngine.from_manifest(manifest)
    now = manifest.clock.now
    for u in manifest.users:
        assert sorted(previewable_docs(engine, u.user_id, now)) == (manifest.access or {})[u.user_id], u.user_id


@pytest.mark.parametrize("month", [2, 3, 4, 6, 8, 10, 12])
def test_rules_equal_casbin_in_the_past_and_future(manifest: Manifest, month: int) -> None:
    """Grant windows, project memberships and moves at other instants: the engine compiled from the drive's
    tree at that instant (what every ``as_of`` decision uses) against the generator's rules, moved documents
    included (each is judged in the folder it was in then)."""
    drive = Drive.from_manifest(manifest)
    at = datetime(2026, month, 15, 12, tzinfo=UTC)
    engine = permissions.PermissionEngine(PolicyView(drive, at))
    model = AccessModel.from_manifest(manifest)
    docs = {d.doc_id for d in manifest.documents}
    for u in manifest.users:
        mine = {d for d in docs if model.may_preview(u.user_id, d, at)}
        assert previewable_docs(engine, u.user_id, at) == mine, (u.user_id, at)
        for d in manifest.documents:
            if d.moves:  # the reference decision as well, not only the fast path
                assert user_may_preview(engine, u.user_id, d.doc_id, at) == (d.doc_id in mine), (u.user_id, d.doc_id)


def test_moves_change_who_may_preview_then(manifest: Manifest) -> None:
    """The corpus's moves matter: for some user and moved document, the verdict before the move differs from
    the verdict the document's final folder would give (else the test above proves nothing about moves)."""
    drive = Drive.from_manifest(manifest)
    model = AccessModel.from_manifest(manifest)
    differs = 0
    for d in (d for d in manifest.documents if d.moves):
        before = min(m.at for m in d.moves) - timedelta(hours=1)
        if d.versions[0].created_at > before:
            continue
        then = permissions.PermissionEngine(PolicyView(drive, before))
        for u in manifest.users:
            in_old = model.decide(u.user_id, d.doc_id, before)
            in_final = model.decide(u.user_id, d.doc_id, before, folder=d.folder)
            if in_old != in_final:
                differs += 1
                assert user_may_preview(then, u.user_id, d.doc_id, before) == in_old, (u.user_id, d.doc_id)
    assert differs >= 5, differs


def test_ground_truth_is_not_trivial(manifest: Manifest) -> None:
    """Every user sees something and nobody sees everything; secret documents stay with executives."""
    access = manifest.access or {}
    n = len(manifest.documents)
    assert all(0 < len(ids) < n for ids in access.values())
    secret = {d.doc_id for d in manifest.documents if d.secret_level == "secret"}
    cleared = {u.user_id for u in manifest.users if u.clearance == "secret"}
    assert all(not (set(ids) & secret) for uid, ids in access.items() if uid not in cleared)
