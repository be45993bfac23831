"""Document-level retrieval inside an allowed set of chunks.

Every pipeline returns at most ``top_k`` documents, one per document (its best chunk), by
descending score, searching only chunks whose mask bit is set (pre-filtering). Pipelines:

* ``dense``: the embedder's vectors in FAISS, or in Milvus with ``--index milvus`` (``index.vector_store``;
  the filter pushed into Milvus as an expression), the query encoded with the embedder's query prefix.
  Chunk search widens (x4) until ``top_k`` distinct documents are found or the allowed chunks are
  exhausted, so the document ranking is exactly the brute-force ranking by best-chunk score and never
  under-fills (with the ANN index of a large store: the ANN's ranking, still never under-filled).
* ``bm25``: bm25s over jieba/word tokens, its statistics (N, avgdl, df) over the allowed chunks only; a
  document matches when its best chunk scores > 0.
* ``hybrid`` (default): reciprocal-rank fusion of the dense and bm25 document rankings (with Milvus: its
  dense ranking fused with the in-process BM25 ranking, the same way):
  ``score(d) = W_DENSE / (RRF_K + rank_dense(d)) + W_BM25 / (RRF_K + rank_bm25(d))`` with ``RRF_K = 1``,
  ``W_DENSE = 1``, ``W_BM25 = 2``, each ranking taken to depth ``max(HYBRID_DEPTH, 5 * top_k)`` with
  ``HYBRID_DEPTH = 50`` (``Fusion``; ``fuse`` is the pure function); a document missing from one ranking
  gets nothing from it; ties broken by dense score, then doc id. The constants were tuned with a held-out
  language (``benchmarks/bench_fusion.py``: chosen on acme-zh@2, checked on acme-en@2 and the reverse;
  docs/embedders.md); Cormack et al. (2009)'s k = 60 with equal weights let the weaker
  dense ranking pull BM25's first hit down (held-out MRR@10 0.533 against 0.630).
* ``hierarchical``, ``deep``, ``prf``: retrieval levers built from the same masked bm25/dense calls
  (``hierarchical.py``: document-first, DHR; ``deep.py``: bridge-entity follow-up queries with a per-hop
  quota, GoldEn/Baleen-style; ``prf.py``: RM3 on BM25 and Rocchio on dense). Every candidate comes from a
  masked search and every fusion keeps hybrid's own candidates, so they are as exact and as full as hybrid.

Query vectors come from the process's ``QueryBatcher`` for the embedder (below, ``shared_batcher``): queries in
flight at the same time share encode calls, run on as many encoder threads as the embedder allows (``e5``:
one per core, each on its share of the thread budget), so dense throughput rises with concurrency. A retriever
given ``query_packs`` (the simulator's packaged vectors, ``index.vector_packs``) first looks a query up in the
query packs of the built-in eval sets: their questions (what ``corpus audit`` and ``demo`` ask) are not encoded.

The default (hybrid with the ``e5`` embedder) is the best measured by ``benchmarks/bench_pipelines.py``
on acme-zh and acme-en: see docs/embedders.md, and the benchmark's report for the figures.
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from drivebench.search.index.chunk_store import ChunkStore, fit_mask
from drivebench.search.index.embedders import Embedder, embed_threads
from drivebench.search.index.embedding_cache import fingerprint_of
from drivebench.search.index.vector_packs import VectorPacks

PIPELINES = ("dense", "bm25", "hybrid", "hierarchical", "deep", "prf")
# the levers of the article's improvement loop, one module each (their docstrings name the paper they follow)
LEVERS = ("hierarchical", "deep", "prf")
# The fused first round the levers build on, the candidates the reranker was trained on and the baseline the
# lever benchmarks compare against. Chosen by measurement (benchmarks/bench_pipelines.py on acme-*@2;
# docs/embedders.md): with e5 it has the best Hit@10 of the single rounds (0.872 zh / 0.893 en).
BASE_PIPELINE = "hybrid"
# The default: deep, with the reranker on its first round (rerank.DEFAULT_RERANK), chosen on the dev sets and
# checked on hand-written held-out sets without losing any metric to hybrid on any set or generated build
# (benchmarks/bench_handwritten.py, benchmarks/data/heldout/README.md, docs/embedders.md).
DEFAULT_PIPELINE = "deep"
# fusion: tuned on one language, checked on the other (benchmarks/bench_fusion.py; docs/embedders.md)
RRF_K = 1
HYBRID_DEPTH = 50
W_DENSE = 1.0
W_BM25 = 2.0
_QUERY_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embed")


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


@dataclass(frozen=True)
class Fusion:
    """The hybrid pipeline's reciprocal-rank fusion: ``k``, one weight per ranking, and the depth each
    ranking is taken to (at least ``5 * top_k``)."""

    k: float = RRF_K
    w_dense: float = W_DENSE
    w_bm25: float = W_BM25
    depth: int = HYBRID_DEPTH

    def depth_for(self, top_k: int) -> int:
        return max(self.depth, 5 * top_k)


DEFAULT_FUSION = Fusion()


def fuse(dense: list[DocHit], lexical: list[DocHit], top_k: int, fusion: Fusion = DEFAULT_FUSION) -> list[DocHit]:
    """Weighted reciprocal-rank fusion of two document rankings (each already cut to its depth): the
    ``top_k`` best, scored ``sum of w / (k + rank)``; the dense best chunk is the shown one."""
    fused: dict[str, float] = {}
    for ranking, weight in ((dense, fusion.w_dense), (lexical, fusion.w_bm25)):
        for rank, hit in enumerate(ranking, 1):
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + weight / (fusion.k + rank)
    best_chunk = {h.doc_id: h for h in lexical}
    best_chunk.update({h.doc_id: h for h in dense})  # the dense best chunk wins as the shown snippet
    dense_score = {h.doc_id: h.score for h in dense}
    order = sorted(fused, key=lambda d: (-fused[d], -dense_score.get(d, -1.0), d))[:top_k]
    return [DocHit(d, best_chunk[d].chunk_id, round(fused[d], 6)) for d in order]


class Lever(Protocol):
    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]: ...


def rrf(rankings: list[tuple[list[DocHit], float]], top_k: int, k: float = RRF_K) -> list[DocHit]:
    """Weighted reciprocal-rank fusion of any number of document rankings: ``sum of w / (k + rank)``; the
    shown chunk is the one of the first ranking that has the document; ties by doc id."""
    fused: dict[str, float] = {}
    shown: dict[str, int] = {}
    for ranking, weight in rankings:
        for rank, hit in enumerate(ranking, 1):
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + weight / (k + rank)
            shown.setdefault(hit.doc_id, hit.chunk_id)
    order = sorted(fused, key=lambda d: (-fused[d], d))[:top_k]
    return [DocHit(d, shown[d], round(fused[d], 6)) for d in order]


# ------------------------------------------------------------------ query vectors
MAX_BATCH = 32  # queries per encode call at most


@dataclass
class _Request:
    query: str
    done: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None
    error: BaseException | None = None


class QueryBatcher:
    """Micro-batching of concurrent query encodes over a small pool of encoder threads.

    A query embedding is one small model call; on a server several arrive at once. Encoding them one call per
    request thread makes the calls fight over the same cores: every calling thread becomes the master of its
    own OpenMP thread team, so four requests in flight on two cores run four full teams. ``QueryBatcher.encode``
    instead hands the query to the batcher's encoder threads:

    * ``workers`` encoder threads (the embedder's ``concurrent_calls``: 1 unless it can size a call's thread
      team, e.g. ``e5`` on as many threads as it may use), started on first use, daemons, each the master of
      its own reused OpenMP team;
    * a worker takes its share of what waits (the queue split evenly over the idle workers, at most
      ``max_batch``) and encodes it in one ``encode_queries`` call, so a lone query is encoded alone (no
      waiting for company) and a burst shares calls;
    * the thread budget (``embed_threads()``) is divided among the calls running at that moment: a lone call
      gets every thread, two concurrent calls one half each (``use_threads``, the calling thread's team size).
      Measured on 2 cores with ``e5`` and acme-zh's queries: one call on a 2-thread team 24-25 queries/s (the
      team keeps ~1.75 of 2 cores busy), two concurrent 1-thread calls 25-28, four 29-32 (~1.9 busy);
    * every caller gets its own query's row (encoders embed each text independently, so a batched vector
      equals the single one up to float rounding: tested);
    * an exception in the encode is re-raised in every caller of that batch (recall fails; never a wrong
      vector), and the worker carries on with the next batch;
    * ``prime(texts)`` encodes a known list of queries ahead, in full batches (about twice the queries per
      second of one-by-one calls with ``e5``), and ``encode`` answers those from memory until the next
      ``prime``. Only callers that know their queries in advance prime (the corpus audit); a server, the
      benchmarks and everything else encode every query as it comes.

    One batcher per embedder and process (``shared_batcher``): every retriever over the same model shares its
    workers, so the thread budget holds process-wide.
    """

    def __init__(
        self, embedder: Embedder, max_batch: int = MAX_BATCH, workers: int | None = None, threads: int | None = None
    ) -> None:
        self.embedder = embedder
        self.max_batch = max_batch
        self.workers = max(1, workers if workers is not None else int(getattr(embedder, "concurrent_calls", 1)))
        self.threads = max(self.workers, threads or embed_threads())  # the budget the running calls share
        self._ready = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._pool: list[threading.Thread] = []
        self._busy = 0  # workers inside an encode call
        self.batches = 0  # encode calls made (for tests and benchmarks)
        self.encoded = 0  # queries encoded
        self.most_concurrent = 0  # the most encode calls seen running at once
        self._primed: dict[str, np.ndarray] = {}

    def prime(self, queries: list[str], packs: VectorPacks | None = None) -> None:
        """Encode ``queries`` now, ``max_batch`` at a time, and answer them from memory from then on
        (replacing what an earlier ``prime`` held). Those a query pack of ``packs`` holds are not encoded."""
        todo = list(dict.fromkeys(queries))
        primed = packed_queries(packs, self.embedder, todo)
        todo = [q for q in todo if q not in primed]
        for i in range(0, len(todo), self.max_batch):
            texts = todo[i : i + self.max_batch]
            vectors = np.asarray(self._encode(texts))
            if len(vectors) != len(texts):
                raise RuntimeError(f"the embedder returned {len(vectors)} vectors for {len(texts)} queries")
            primed.update(zip(texts, vectors, strict=True))
        self._primed = primed

    def encode(self, query: str) -> np.ndarray:
        primed = self._primed.get(query)
        if primed is not None:
            return primed
        req = _Request(query)
        with self._ready:
            self._pool = [t for t in self._pool if t.is_alive()]
            while len(self._pool) < self.workers:
                worker = threading.Thread(target=self._run, name=f"query-encoder-{len(self._pool)}", daemon=True)
                worker.start()
                self._pool.append(worker)
            self._queue.append(req)
            self._ready.notify()
        req.done.wait()
        if req.error is not None:
            raise req.error
        if req.vector is None:
            raise RuntimeError("the query encoder returned no vector")
        return req.vector

    def _encode(self, texts: list[str]) -> np.ndarray:
        if hasattr(self.embedder, "encode_queries"):
            return self.embedder.encode_queries(texts)
        return self.embedder.encode(texts, kind="query")

    def _take(self) -> tuple[list[_Request], int]:
        """Wait for queries; take this worker's share and the team size it may use (under the lock)."""
        while not self._queue:
            self._ready.wait()
        idle = self.workers - self._busy
        share = min(self.max_batch, -(-len(self._queue) // idle))
        batch = [self._queue.popleft() for _ in range(share)]
        self._busy += 1
        self.most_concurrent = max(self.most_concurrent, self._busy)
        if self._queue:
            self._ready.notify()  # what is left is another idle worker's share
        return batch, max(1, self.threads // self._busy)

    def _run(self) -> None:
        use_threads = getattr(self.embedder, "use_threads", None)
        team = 0
        while True:
            with self._ready:
                batch, size = self._take()
            try:
                if use_threads is not None and size != team:
                    use_threads(size)
                    team = size
                vectors = np.asarray(self._encode([r.query for r in batch]))
                if len(vectors) != len(batch):
                    raise RuntimeError(f"the embedder returned {len(vectors)} vectors for {len(batch)} queries")
                for r, v in zip(batch, vectors, strict=True):
                    r.vector = v
            except BaseException as exc:  # every caller of this batch fails with it; the worker carries on
                for r in batch:
                    r.error = exc
            with self._ready:
                self._busy -= 1
                self.batches += 1
                self.encoded += len(batch)
            for r in batch:
                r.done.set()


def packed_queries(packs: VectorPacks | None, embedder: Embedder, queries: list[str]) -> dict[str, np.ndarray]:
    """The query vectors of ``queries`` that a query pack of ``packs`` holds for ``embedder`` (verified against
    the embedder's own query encoder before the pack first serves, like a passage pack)."""
    if packs is None or not queries:
        return {}
    return packs.lookup(
        fingerprint_of(embedder), queries, lambda sample: embedder.encode(sample, kind="query"), kind="query"
    )


_shared: dict[Embedder, QueryBatcher] = {}  # like the shared embedders (get_embedder): live for the process
_shared_lock = threading.Lock()


def shared_batcher(embedder: Embedder) -> QueryBatcher:
    """The process's one batcher for ``embedder`` (its workers and thread budget serve every retriever)."""
    with _shared_lock:
        batcher = _shared.get(embedder)
        if batcher is None:
            batcher = _shared[embedder] = QueryBatcher(embedder)
        return batcher


class Retriever:
    def __init__(
        self,
        store: ChunkStore,
        embedder: Embedder,
        pipeline: str = "hybrid",
        fusion: Fusion = DEFAULT_FUSION,
        query_packs: VectorPacks | None = None,
    ):
        if pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {pipeline!r}; known: {', '.join(PIPELINES)}")
        self.store, self.embedder, self.pipeline, self.fusion = store, embedder, pipeline, fusion
        self.query_batcher = shared_batcher(embedder)  # concurrent queries share its encoder threads
        self.query_packs = query_packs  # packaged query vectors, consulted before the batcher
        self._lever: Lever | None = None
        self._lever_lock = threading.Lock()

    def lever(self) -> Lever:
        """The lever object of a lever pipeline (made once; imported here: the levers build on this module)."""
        with self._lever_lock:  # one per retriever: the deep pipeline's cost counters and the title index
            return self._lever or self._make_lever()

    def _make_lever(self) -> Lever:
        if self._lever is None:
            if self.pipeline == "hierarchical":
                from drivebench.search.retrieval.hierarchical import Hierarchical

                self._lever = Hierarchical(self)
            elif self.pipeline == "deep":
                from drivebench.search.retrieval.deep import Deep

                self._lever = Deep(self)
            elif self.pipeline == "prf":
                from drivebench.search.retrieval.prf import PseudoRelevanceFeedback

                self._lever = PseudoRelevanceFeedback(self)
            else:
                raise ValueError(f"{self.pipeline!r} is not a lever pipeline")
        return self._lever

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        if self.pipeline in LEVERS:
            return self.lever().search(query, mask, top_k)
        if self.pipeline == "dense":
            return self.dense(query, mask, top_k)
        if self.pipeline == "bm25":
            return self.bm25(query, mask, top_k)
        return self.hybrid(query, mask, top_k)

    def _query_vector(self, query: str) -> np.ndarray:
        packed = packed_queries(self.query_packs, self.embedder, [query])
        return packed[query] if packed else self.query_batcher.encode(query)

    def dense(self, query: str, mask: np.ndarray, top_k: int, qvec: np.ndarray | None = None) -> list[DocHit]:
        if qvec is None:
            qvec = self._query_vector(query)
        alive = self.store.alive  # replaced last when a concurrent sync adds chunks: its length is safe
        n_allowed = int((fit_mask(mask, len(alive)) & alive).sum())
        k = min(max(top_k * 4, 16), n_allowed)
        while True:
            hits = self.store.dense_search(qvec, mask, k)  # FAISS, or Milvus when attached
            docs = _best_per_doc(self.store, [(h.chunk_id, h.score) for h in hits], top_k)
            if len(docs) >= top_k or k >= n_allowed:
                return docs
            k = min(k * 4, n_allowed)

    def bm25(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        alive = self.store.alive  # replaced last when a concurrent sync adds chunks: its length is safe
        n = len(alive)
        allowed = fit_mask(mask, n) & alive
        # statistics over the allowed chunks only: a score must not depend on what the caller may not see
        scores = self.store.lexical.scores(query, n, allowed)
        ids = np.flatnonzero(allowed & (scores > 0))
        if ids.size == 0:
            return []
        order = ids[np.lexsort((ids, -scores[ids]))]
        return _best_per_doc(self.store, [(int(i), float(scores[i])) for i in order], top_k)

    def hybrid(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        depth = self.fusion.depth_for(top_k)
        # the query embedding (C/torch code, GIL released) runs while BM25 scores in this thread
        pending = _QUERY_POOL.submit(self._query_vector, query)
        lexical = self.bm25(query, mask, depth)
        dense = self.dense(query, mask, depth, pending.result())
        return fuse(dense, lexical, top_k, self.fusion)
