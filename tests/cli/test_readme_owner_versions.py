"""The drive-API permission table of docs/drive-api.md: an owner uploads a new version of their document through
the documented API exactly when a grant gives them `edit`; the counts the page gives are the corpus's."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator
from tests.support.decisions import enforce_doc
from tests.support.docs import section
from tests.support.http import bearer

PAGE = section("drive-api.md", "Who may do what")


def _owner_split(sim: Simulator) -> tuple[list[str], list[str]]:
    engine, now = sim.engine, sim.drive.clock.now()
    can, cannot = [], []
    for doc in sim.drive.documents.values():
        if doc.owner in sim.drive.users and doc.trashed_at is None:
            ok = enforce_doc(engine, engine.user_principal(doc.owner), doc.doc_id, "edit", now)
            (can if ok else cannot).append(doc.doc_id)
    return can, cannot


def test_docs_state_the_permission_and_the_seed_counts(module_sim: Simulator) -> None:
    assert re.search(r"`POST /api/v1/files/\{id\}/versions` \(new version\) \| `edit` on the document", PAGE)
    can, _ = _owner_split(module_sim)
    m = re.search(r"the owner holds `edit` on (\d+) of `seed`'s (\d+) documents", PAGE)
    assert m and (int(m[1]), int(m[2])) == (len(can), len(module_sim.drive.documents))


def test_owner_with_edit_uploads_a_version_and_one_without_gets_403(module_sim: Simulator) -> None:
    can, cannot = _owner_split(module_sim)
    assert can and cannot
    with TestClient(create_app(module_sim)) as client:
        doc = module_sim.drive.documents[can[0]]
        before = len(doc.versions)
        token = module_sim.tokens.for_subject(str(doc.owner)).token
        files = {"file": (doc.name, b"new text of the owner's document\n", "text/plain")}
        r = client.post(f"/api/v1/files/{doc.doc_id}/versions", files=files, headers=bearer(token))
        assert r.status_code == 201, r.text
        assert len(module_sim.drive.documents[doc.doc_id].versions) == before + 1
        other = module_sim.drive.documents[cannot[0]]
        token = module_sim.tokens.for_subject(str(other.owner)).token
        r = client.post(f"/api/v1/files/{other.doc_id}/versions", files=files, headers=bearer(token))
        assert r.status_code in (403, 404), r.text  # 404 when the owner may not even list it
        assert len(module_sim.drive.documents[other.doc_id].versions) == len(other.versions)
