"""The passages the simulator embeds when it loads a built-in corpus, and the questions of its eval set: what
``make vector-packs`` (``scripts/build_vector_packs.py``) encodes into ``drivebench.corpora.vectors`` and what
the pack test checks."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from drivebench.search.index.embedders import Embedder
from drivebench.search.index.embedding_cache import EmbeddingCache


class _RecordingCache(EmbeddingCache):
    """Collects the passage texts ingestion asks for, in order, and encodes nothing."""

    def __init__(self) -> None:
        super().__init__(None)
        self.texts: list[str] = []

    def encode(
        self, embedder: Embedder, texts: list[str], on_encoded: Callable[[int], None] | None = None
    ) -> np.ndarray:
        self.texts.extend(texts)
        if on_encoded is not None:
            on_encoded(len(texts))
        return np.zeros((len(texts), embedder.dim), dtype=np.float32)


def corpus_passages(corpus: str) -> list[str]:
    """Every passage text the simulator embeds when it loads ``corpus`` (extraction and chunking run for
    real; the hash embedder stands in only to size the zero vectors, which are thrown away)."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.drive.state import Drive
    from drivebench.search.index.embedders import HashEmbedder
    from drivebench.simulator.backend import SimConfig, Simulator

    sim = Simulator(Drive.from_corpus(resolve_corpus(corpus)), SimConfig(pipeline="bm25"), embedder=HashEmbedder())
    recorder = _RecordingCache()
    sim.cache = recorder
    sim.ingest_all()
    return list(dict.fromkeys(recorder.texts))


def corpus_queries(corpus: str) -> list[str]:
    """Every distinct question of ``corpus``'s eval set, in order (what ``demo`` and ``corpus audit`` encode)."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.formats.corpus import EVALSET_NAME
    from drivebench.formats.evalset import load_evalset

    return list(dict.fromkeys(q.query for q in load_evalset(resolve_corpus(corpus) / EVALSET_NAME)))
