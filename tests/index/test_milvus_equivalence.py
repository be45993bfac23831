"""Milvus (milvus-lite) answers exactly what the FAISS bitmap search answers, with the filter inside Milvus.

* every eval query of the seed corpus: the dense recall of a Milvus-backed simulator equals the FAISS-backed
  one (documents and scores), and the full chunk ranking inside the visible set equals FAISS's, through the
  pushed-down expression (``doc_no in [...]`` plus the validity terms), never the id-list fallback;
* random grant histories (hypothesis): grants added, expiring, revoked, folders and documents moved, trash and
  restore, new versions; at a random ``as_of`` for every user the Milvus search equals FAISS and brute force.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivebench.drive.errors import DriveError
from drivebench.drive.permissions import Principal
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.index import vector_store
from drivebench.search.index.milvus_store import MilvusVectors
from drivebench.search.index.vector_store import parse_index_spec
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.milvus import pairs, same_ranking
from tests.support.perm_org import US, WORDS, build_sim, examples, orgs
from tests.support.pit import history


def _principal(sim: Simulator, q) -> Principal:  # type: ignore[no-untyped-def]
    if q.user_id is not None:
        return sim.engine.user_principal(q.user_id)
    return sim.engine.role_principal(q.user_role, q.department)


@pytest.fixture(scope="module")
def pair() -> tuple[Simulator, Simulator]:
    from drivebench.api import load_simulator

    faiss_sim = load_simulator("seed", config=SimConfig(embedder="hash", pipeline="dense"))
    milvus_sim = load_simulator("seed", config=SimConfig(embedder="hash", pipeline="dense", vector_store="milvus"))
    return faiss_sim, milvus_sim


def test_every_eval_query_gives_the_faiss_answer(pair: tuple[Simulator, Simulator]) -> None:
    faiss_sim, milvus_sim = pair
    backend = milvus_sim.store.vector_backend
    assert isinstance(backend, MilvusVectors) and faiss_sim.store.vector_backend is None
    queries = load_evalset(milvus_sim.corpus_dir / EVALSET_NAME)
    assert len(queries) >= 10
    before = dict(backend.counters)
    nonempty = 0
    for q in queries:
        a = faiss_sim.recall(_principal(faiss_sim, q), q.query, 10, as_of=q.as_of)
        b = milvus_sim.recall(_principal(milvus_sim, q), q.query, 10, as_of=q.as_of)
        same_ranking([(h.doc_id, h.score) for h in a.hits], [(h.doc_id, h.score) for h in b.hits])
        assert a.snapshot == b.snapshot  # the backend does not change what recall runs against
        # the whole chunk ranking inside the visible set, FAISS on the same store vs Milvus
        p, at = _principal(milvus_sim, q), milvus_sim.resolve_as_of(q.as_of)
        mask = milvus_sim.visible_chunks(p, at)
        qvec = milvus_sim.embedder.encode([q.query], kind="query")[0]
        n = int(mask.sum())
        nonempty += n > 0
        same_ranking(pairs(milvus_sim.store.search(qvec, mask, n + 5)), pairs(backend.search(qvec, mask, n + 5)))
    assert nonempty >= len(queries) // 2
    # every search went through the structured expression, none through the id-list fallback
    assert backend.counters["searches"] - before["searches"] >= 2 * len(queries)
    assert backend.counters["id_list_searches"] == before["id_list_searches"]


def test_the_expression_names_documents_and_validity(pair: tuple[Simulator, Simulator]) -> None:
    _, sim = pair
    backend = sim.store.vector_backend
    mask = sim.visible_chunks(sim.engine.user_principal("u001"), sim.drive.clock.now())
    expr = backend.filter_for(np.asarray(mask), mask.at_us)
    assert expr.startswith(("doc_no in [", "doc_no not in [")) and f"valid_from <= {mask.at_us}" in expr
    assert "trashed_at >" in expr
    assert "id in" not in expr
    assert backend.filter_for(np.asarray(mask), None).startswith("id in [")

    # the shorter list: the permitted documents for a narrow principal, the denied ones for a wide one
    def n_docs(user: str) -> int:
        return int(sim.visible_chunks(sim.engine.user_principal(user), sim.drive.clock.now()).sum())

    for pick, form in ((min, "doc_no in ["), (max, ("doc_no not in [", "valid_from <="))):
        user = pick(sorted(sim.drive.users), key=n_docs)
        mask = sim.visible_chunks(sim.engine.user_principal(user), sim.drive.clock.now())
        assert backend.filter_for(np.asarray(mask), mask.at_us).startswith(form), user


def test_index_spec_parsing() -> None:
    assert str(parse_index_spec("faiss")) == "faiss"
    assert parse_index_spec("milvus").label == "milvus-lite"
    spec = parse_index_spec("milvus:http://localhost:19530")
    assert spec.uri == "http://localhost:19530" and spec.label == "milvus-server"
    for bad in ("annoy", "faiss:x", ""):
        with pytest.raises(vector_store.VectorStoreError):
            parse_index_spec(bad)


def _new_versions(sim: Simulator, data: st.DataObject) -> None:
    drive = sim.drive
    docs = sorted(drive.documents)
    for i in range(data.draw(st.integers(0, 3), label="new versions")):
        drive.clock.advance(timedelta(minutes=data.draw(st.integers(0, 120))))
        doc_id = data.draw(st.sampled_from(docs))
        words = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))
        with contextlib.suppress(DriveError):
            drive.add_version(doc_id, f"# {doc_id} v{i}\n\n{words}\n".encode(), author=sorted(drive.users)[0])


@examples(20)
@given(org=orgs(), data=st.data())
def test_random_grant_histories_milvus_equals_faiss_and_brute_force(org, data: st.DataObject) -> None:
    sim = build_sim(org)
    vector_store.attach(sim.store, "milvus")
    backend = sim.store.vector_backend
    try:
        instants = history(sim.drive, data)
        _new_versions(sim, data)
        sim.sync_index()
        now = sim.drive.clock.now()
        candidates = sorted({t + d for t in instants for d in (-US, timedelta(0)) if t + d <= now} | {now})
        at = data.draw(st.sampled_from(candidates), label="as_of")
        query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
        qvec = sim.embedder.encode([query], kind="query")[0]
        vectors = sim.store.index.reconstruct_batch(np.flatnonzero(sim.store.alive).astype(np.int64))
        by_id = dict(zip(np.flatnonzero(sim.store.alive).tolist(), vectors @ qvec, strict=True))
        for user in sorted(sim.drive.users):
            p = sim.principal_for(sim.tokens.for_subject("svc:evaluator"), user_id=user)
            mask = sim.visible_chunks(p, at)
            k = data.draw(st.integers(1, len(sim.store) + 1), label="k")
            got = pairs(backend.search(qvec, mask, k))
            same_ranking(pairs(sim.store.search(qvec, mask, k)), got)
            brute = sorted(((int(i), float(by_id[int(i)])) for i in np.flatnonzero(mask)), key=lambda x: -x[1])
            same_ranking(brute[:k], got)
            # and the recall through the dense pipeline (Milvus attached) is the brute-force document ranking
            hits = sim.recall(p, query, 5, as_of=at).hits
            assert all(mask[h.chunk_id] for h in hits)
        assert backend.counters["id_list_searches"] == 0
    finally:
        backend.drop()


def test_a_collection_that_disagrees_with_the_permissions_fails_closed(pair: tuple[Simulator, Simulator]) -> None:
    from drivebench.drive.errors import PermissionCheckFailed

    _, sim = pair
    backend = sim.store.vector_backend
    p = sim.engine.user_principal("u012")
    mask = sim.visible_chunks(p, sim.drive.clock.now())
    allowed, forbidden = np.flatnonzero(mask), np.flatnonzero(~np.asarray(mask) & sim.store.alive)
    assert allowed.size and forbidden.size
    victim = int(forbidden[0])
    # corrupt one row: a forbidden chunk now claims to belong to a permitted document
    row = {"id": victim, "vector": sim.store.index.reconstruct(victim).tolist(), "valid_from": 0}
    row |= {"doc_no": int(backend._doc_no[allowed[0]]), "valid_to": 2**62, "trashed_at": 2**62}
    backend.client.upsert(backend.collection, [row])
    try:
        qvec = sim.store.index.reconstruct(victim)  # the query the corrupted row answers best
        with pytest.raises(PermissionCheckFailed, match="outside the permitted set"):
            backend.search(qvec, mask, 5)
    finally:
        backend._valid[victim] = -1  # the next sync rewrites the row from the store
        sim.visible_chunks(p, sim.drive.clock.now())
    assert victim not in {h.chunk_id for h in backend.search(qvec, sim.visible_chunks(p, sim.drive.clock.now()), 5)}


def test_the_first_search_after_a_write_is_strong_then_session(
    pair: tuple[Simulator, Simulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session only: a loaded server once answered with a row's validity from before a trash; the first search
    after this process's own write waits for everything written (Strong), later ones are Session."""
    _, sim = pair
    backend = sim.store.vector_backend
    levels: list[str] = []
    search = backend.client.search

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        levels.append(kwargs["consistency_level"])
        return search(*args, **kwargs)

    monkeypatch.setattr(backend.client, "search", spy)
    p = sim.engine.user_principal("u003")
    sim.recall(p, "项目X 技术方案", top_k=5)  # whatever came before is written now
    levels.clear()
    sim.recall(p, "项目X 技术方案", top_k=5)
    assert levels == ["Session"]
    live = int(np.flatnonzero(backend._present)[0])
    backend._upsert(np.array([live]), backend._valid[[live]].copy())  # a real write: the row as it is
    levels.clear()
    sim.recall(p, "项目X 技术方案", top_k=5)
    sim.recall(p, "项目X 技术方案", top_k=5)
    assert levels[0] == "Strong" and levels[-1] == "Session", levels
