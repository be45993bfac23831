"""The ``hierarchical`` pipeline: document first, then passages inside the top documents, fused.

Follows dense hierarchical retrieval (DHR; Liu, Hao, Wang, Tur, Shen, Wang and Wan, 2021, "Dense
Hierarchical Retrieval for Open-Domain Question Answering", Findings of EMNLP): a document-level retriever
picks the relevant files on file-level evidence, a passage-level retriever ranks passages, and the two
rankings are combined. LLM-free and without training, the two levels here are:

* **file level**: three document rankings fused by weighted reciprocal rank (``pipelines.rrf``):
  the **title** (BM25 over each chunk's header line, ``title · file name``: a second ``LexicalIndex`` kept
  in step with the store), the **body** (each document's top ``AGG_CHUNKS`` BM25 chunk scores summed with
  weights ``AGG_DECAY ** i``: a file whose several passages match beats one lucky passage) and the same
  aggregation over the dense chunk similarities;
* **passage level**: the hybrid pipeline's ranking (``pipelines.fuse``), taken to the hybrid depth.

The final ranking is ``rrf([(passages, W_PASSAGE), (files, W_FILE)])``: a document at the top of both
levels wins; the shown chunk is the passage level's best chunk.

Exactness: every score is computed over the allowed chunks only (BM25 statistics of both indexes over the
allowed set, as ``Retriever.bm25``; dense over the masked search), so nothing outside the mask is ranked or
changes a score; the passage level is hybrid's full ranking, so the result is never shorter than hybrid's.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from drivebench.search.index.chunk_store import fit_mask
from drivebench.search.index.lexical import LexicalIndex
from drivebench.search.retrieval.pipelines import _QUERY_POOL, DocHit, fuse, rrf

if TYPE_CHECKING:
    from drivebench.search.retrieval.pipelines import Retriever

AGG_CHUNKS = 3  # a document's best chunks counted at file level
AGG_DECAY = 0.5  # weight of the i-th best chunk: AGG_DECAY ** i
W_TITLE = 1.0
W_BODY = 1.0
W_DENSE = 1.0
W_FILE = 1.0  # the file level against the passage level in the final fusion
W_PASSAGE = 1.0


def aggregate(doc_ids: list[str], chunks: list[tuple[int, float]], limit: int) -> list[DocHit]:
    """Documents ranked by the decayed sum of their best ``AGG_CHUNKS`` chunk scores (chunks by descending
    score); the shown chunk is each document's best. Ties by doc id."""
    best: dict[str, int] = {}
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for cid, score in chunks:
        doc = doc_ids[cid]
        i = count.get(doc, 0)
        if i >= AGG_CHUNKS:
            continue
        best.setdefault(doc, cid)
        total[doc] = total.get(doc, 0.0) + score * AGG_DECAY**i
        count[doc] = i + 1
    order = sorted(total, key=lambda d: (-total[d], d))[:limit]
    return [DocHit(d, best[d], total[d]) for d in order]


class Hierarchical:
    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self._titles = LexicalIndex()  # row i: chunk i's header line
        self._lock = threading.Lock()

    def titles(self) -> LexicalIndex:
        """The title index, first extended with the headers of chunks added since (rows only grow)."""
        with self._lock:
            texts = self.retriever.store.texts
            n = len(texts)
            done = len(self._titles)
            if n > done:
                self._titles.add([t.split("\n", 1)[0] for t in texts[done:n]])
        return self._titles

    def file_ranking(
        self, query: str, allowed: np.ndarray, qvec: np.ndarray, mask: np.ndarray, depth: int
    ) -> list[DocHit]:
        store = self.retriever.store
        n = len(allowed)
        doc_ids = store.doc_ids
        rankings: list[tuple[list[DocHit], float]] = []
        for scores, weight in (
            (self.titles().scores(query, n, allowed), W_TITLE),
            (store.lexical.scores(query, n, allowed), W_BODY),
        ):
            ids = np.flatnonzero(allowed & (scores > 0))
            order = ids[np.lexsort((ids, -scores[ids]))]
            rankings.append((aggregate(doc_ids, [(int(i), float(scores[i])) for i in order], depth), weight))
        n_allowed = int(allowed.sum())
        k = min(max(depth * 4, 16), n_allowed)
        if k:
            hits = store.dense_search(qvec, mask, k)
            rankings.append((aggregate(doc_ids, [(h.chunk_id, h.score) for h in hits], depth), W_DENSE))
        return rrf(rankings, depth)

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        r = self.retriever
        depth = r.fusion.depth_for(top_k)
        pending = _QUERY_POOL.submit(r._query_vector, query)
        alive = r.store.alive
        allowed = fit_mask(mask, len(alive)) & alive
        lexical = r.bm25(query, mask, depth)
        qvec = pending.result()
        passages = fuse(r.dense(query, mask, depth, qvec), lexical, depth, r.fusion)
        files = self.file_ranking(query, allowed, qvec, allowed, depth)
        return rrf([(passages, W_PASSAGE), (files, W_FILE)], top_k)
