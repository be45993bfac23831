"""Permissions and versions over every vector-store backend: FAISS, milvus-lite, and the session's Milvus
server (tests/support/milvus.py). Dense pipeline (the vector store decides everything), hash
embedder, the seed corpus; the oracle is the Casbin enforcer itself (``engine.enforce``), never the fast path."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pytest

from drivebench.api import load_simulator
from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.decisions import enforce_doc
from tests.support.milvus import BACKENDS, index_spec

EVERYTHING = "project 项目 budget 预算 platform design 方案 handbook 手册 finance"


@pytest.fixture(scope="module", params=BACKENDS)
def vector_store_sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    """A seed simulator (hash embedder, dense pipeline) per vector-store backend of ``BACKENDS``."""
    spec = index_spec(request.param)
    s = load_simulator("seed", config=SimConfig(embedder="hash", pipeline="dense", vector_store=spec))
    assert s.index_metadata()["vector_store"]["spec"] == spec  # the backend asked for is the one searching
    yield s
    backend = s.store.vector_backend
    if backend is not None:
        assert backend.counters["id_list_searches"] == 0  # always the document/validity expression
        name = backend.collection
        assert name is not None and backend.client.has_collection(name)
        s.close()  # an in-memory simulator's collection goes with it (a shared server keeps only what is owned)
        assert not backend.client.has_collection(name)


def _recalled(sim: Simulator, user: str, **kw: object) -> set[str]:
    n = len(sim.drive.documents) + 1
    return {h.doc_id for h in sim.recall(sim.engine.user_principal(user), EVERYTHING, n, **kw).hits}  # type: ignore[arg-type]


def _oracle(sim: Simulator, user: str) -> set[str]:
    engine, now = sim.engine, sim.drive.clock.now()
    p = engine.user_principal(user)
    indexed = {sim.store.doc_ids[i] for i in np.flatnonzero(sim.store.alive)}
    return {
        d.doc_id
        for d in sim.drive.documents.values()
        if d.trashed_at is None and d.doc_id in indexed and enforce_doc(engine, p, d.doc_id, "preview", now)
    }


def test_every_user_gets_exactly_what_enforce_allows(vector_store_sim: Simulator) -> None:
    sizes = set()
    for user in sorted(vector_store_sim.drive.users):
        got, want = _recalled(vector_store_sim, user), _oracle(vector_store_sim, user)
        assert got == want, (user, sorted(got ^ want))
        sizes.add(len(want))
    assert len(sizes) > 2  # the users really differ


def test_grants_and_revocations_take_effect_at_the_next_recall(vector_store_sim: Simulator) -> None:
    user = min(vector_store_sim.drive.users, key=lambda u: len(_oracle(vector_store_sim, u)))
    hidden = sorted(set(vector_store_sim.drive.documents) - _oracle(vector_store_sim, user))
    target = next(
        d
        for d in hidden
        if vector_store_sim.drive.documents[d].secret_level <= vector_store_sim.drive.users[user].clearance
    )
    vector_store_sim.drive.clock.advance(timedelta(minutes=1))
    vector_store_sim.drive.add_grant(GrantRec("g-bk", f"user:{user}", ["preview"], "allow", doc_id=target))
    try:
        assert target in _recalled(vector_store_sim, user) and _recalled(vector_store_sim, user) == _oracle(
            vector_store_sim, user
        )
    finally:
        vector_store_sim.drive.clock.advance(timedelta(minutes=1))
        vector_store_sim.drive.remove_grant("g-bk")
    assert target not in _recalled(vector_store_sim, user) and _recalled(vector_store_sim, user) == _oracle(
        vector_store_sim, user
    )


def test_versions_trash_and_as_of(vector_store_sim: Simulator) -> None:
    drive = vector_store_sim.drive
    user = "u009"
    doc = sorted(d for d in _oracle(vector_store_sim, user) if drive.documents[d].file_type == "md")[0]
    old_head = drive.documents[doc].versions[-1].version_id
    before = drive.clock.now()
    drive.clock.advance(timedelta(minutes=5))
    drive.add_version(doc, f"# {doc} v-next\n\nbackend-marker project 项目 platform\n".encode(), author=user)
    assert not vector_store_sim.sync_index().rejected
    new_head = drive.documents[doc].versions[-1].version_id
    p = vector_store_sim.engine.user_principal(user)

    def version_of(**kw: object) -> str | None:
        hits = vector_store_sim.recall(p, "backend-marker project 项目 platform", 50, **kw).hits  # type: ignore[arg-type]
        return next((h.version_id for h in hits if h.doc_id == doc), None)

    assert version_of() == new_head
    assert version_of(as_of=before) == old_head  # the superseded version, only in the past
    drive.clock.advance(timedelta(minutes=5))
    drive.trash(doc)
    in_trash_from = drive.documents[doc].trashed_at
    assert version_of() is None and version_of(as_of=before) == old_head
    drive.clock.advance(timedelta(minutes=5))
    drive.untrash(doc)
    assert version_of() == new_head
    assert version_of(as_of=in_trash_from) is None  # inside the closed trash span
