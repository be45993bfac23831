"""Packaged passage vectors of the built-in corpora (``*.npz``, format in ``simulator/index/vector_packs.py``).

``make vector-packs`` (``scripts/build_vector_packs.py``) writes one pack per corpus in ``PACKED_CORPORA``
for the default embedder, at the corpus's default seed and scale: the passages ``drivebench demo`` and
``serve`` ingest first. ``tests/corpora/test_vector_packs_current.py`` fails when a pack no longer covers its
corpus (a generator, extractor or chunking change) and names the command that rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from drivebench.resources import package_dir
from drivebench.search.index.embedders import Embedder
from drivebench.search.index.embedding_cache import EmbeddingCache

PACKED_CORPORA = ("acme-zh@2", "acme-en@2")
PACK_DIR = package_dir("drivebench.corpora.vectors")


def pack_path(corpus: str, embedder_name: str) -> Path:
    return PACK_DIR / f"{corpus.replace('@', '-v')}.{embedder_name}.npz"


class _RecordingCache(EmbeddingCache):
    """Collects the passage texts ingestion asks for, in order, and encodes nothing."""

    def __init__(self) -> None:
        super().__init__(None)
        self.texts: list[str] = []

    def encode(self, embedder: Embedder, texts: list[str], on_encoded=None) -> np.ndarray:  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        if on_encoded is not None:
            on_encoded(len(texts))
        return np.zeros((len(texts), embedder.dim), dtype=np.float32)


def corpus_passages(corpus: str) -> list[str]:
    """Every passage text the simulator embeds when it loads ``corpus`` (extraction and chunking run for
    real; the hash embedder stands in only to size the zero vectors, which are thrown away)."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.simulator.backend import SimConfig, Simulator
    from drivebench.drive.state import Drive
    from drivebench.search.index.embedders import HashEmbedder

    sim = Simulator(Drive.from_corpus(resolve_corpus(corpus)), SimConfig(pipeline="bm25"), embedder=HashEmbedder())
    recorder = _RecordingCache()
    sim.cache = recorder
    sim.ingest_all()
    return list(dict.fromkeys(recorder.texts))
