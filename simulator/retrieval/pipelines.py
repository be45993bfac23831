"""Document-level retrieval inside an allowed set of chunks.

Every pipeline returns at most ``top_k`` documents, one per document (its best chunk), by
descending score, searching only chunks whose mask bit is set (pre-filtering). Pipelines:

* ``dense``: sentence-transformers vectors in FAISS. Chunk search widens (x4) until ``top_k``
  distinct documents are found or the allowed chunks are exhausted, so the document ranking is
  exactly the brute-force ranking by best-chunk score and never under-fills.
* ``bm25``: bm25s over jieba/word tokens; a document matches when its best chunk scores > 0.
* ``hybrid``: reciprocal-rank fusion (k=60) of the dense and bm25 document rankings, each taken
  to depth ``max(50, 5 * top_k)``; ties broken by dense score, then doc id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from drivebench.simulator.index.chunk_store import ChunkStore, fit_mask
from drivebench.simulator.index.embedders import Embedder

PIPELINES = ("dense", "bm25", "hybrid")
# The default is the best measured pipeline (benchmarks/bench_pipelines.py, Hit@10 on the 252-query eval
# sets): acme-zh dense 0.674 / bm25 1.000 / hybrid 0.911; acme-en dense 0.906 / bm25 1.000 / hybrid 0.987.
# MiniLM is blind to most Chinese, and equal-weight fusion lets its misses dilute BM25's ranking.
DEFAULT_PIPELINE = "bm25"
RRF_K = 60


@dataclass(frozen=True)
class DocHit:
    doc_id: str
    chunk_id: int
    score: float


def _best_per_doc(store: ChunkStore, ranked_chunks: list[tuple[int, float]], limit: int) -> list[DocHit]:
    seen: dict[str, DocHit] = {}
    for cid, score in ranked_chunks:
        doc = store.doc_ids[cid]
        if doc not in seen:
            seen[doc] = DocHit(doc, cid, score)
            if len(seen) >= limit:
                break
    return list(seen.values())


class Retriever:
    def __init__(self, store: ChunkStore, embedder: Embedder, pipeline: str = "hybrid"):
        if pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {pipeline!r}; known: {', '.join(PIPELINES)}")
        self.store, self.embedder, self.pipeline = store, embedder, pipeline

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        if self.pipeline == "dense":
            return self.dense(query, mask, top_k)
        if self.pipeline == "bm25":
            return self.bm25(query, mask, top_k)
        return self.hybrid(query, mask, top_k)

    def dense(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        qvec = self.embedder.encode([query], kind="query")[0]
        alive = self.store.alive  # replaced last when a concurrent sync adds chunks: its length is safe
        n_allowed = int((fit_mask(mask, len(alive)) & alive).sum())
        k = min(max(top_k * 4, 16), n_allowed)
        while True:
            hits = self.store.search(qvec, mask, k)
            docs = _best_per_doc(self.store, [(h.chunk_id, h.score) for h in hits], top_k)
            if len(docs) >= top_k or k >= n_allowed:
                return docs
            k = min(k * 4, n_allowed)

    def bm25(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        alive = self.store.alive  # replaced last when a concurrent sync adds chunks: its length is safe
        n = len(alive)
        scores = self.store.lexical.scores(query, n)
        allowed = fit_mask(mask, n) & alive & (scores > 0)
        ids = np.flatnonzero(allowed)
        if ids.size == 0:
            return []
        order = ids[np.lexsort((ids, -scores[ids]))]
        return _best_per_doc(self.store, [(int(i), float(scores[i])) for i in order], top_k)

    def hybrid(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        depth = max(50, 5 * top_k)
        dense = self.dense(query, mask, depth)
        lexical = self.bm25(query, mask, depth)
        fused: dict[str, float] = {}
        for ranking in (dense, lexical):
            for rank, hit in enumerate(ranking, 1):
                fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + 1.0 / (RRF_K + rank)
        best_chunk = {h.doc_id: h for h in lexical}
        best_chunk.update({h.doc_id: h for h in dense})  # the dense best chunk wins as the shown snippet
        dense_score = {h.doc_id: h.score for h in dense}
        order = sorted(fused, key=lambda d: (-fused[d], -dense_score.get(d, -1.0), d))[:top_k]
        return [DocHit(d, best_chunk[d].chunk_id, round(fused[d], 6)) for d in order]
