"""The ``prf`` pipeline: pseudo-relevance feedback, RM3 on BM25 and Rocchio on dense, fused like hybrid.

* **RM3** (relevance model 1, Lavrenko and Croft, 2001, "Relevance-Based Language Models", SIGIR; interpolated
  with the original query as RM3, Abdul-Jaleel et al., 2004, "UMass at TREC 2004: Novelty and HARD"): the
  top ``FB_CHUNKS`` BM25 chunks are taken as relevant; each term ``t`` gets
  ``P(t|R) = sum over feedback chunks D of P(t|D) * P(D|Q)`` with ``P(t|D)`` the term's share of D's tokens
  and ``P(D|Q)`` D's BM25 score normalised over the feedback set; the best ``FB_TERMS`` terms (one character
  and punctuation tokens left out) form the expansion, weights normalised to 1. The expanded score is
  ``LAMBDA * bm25(q, d) / |q| + (1 - LAMBDA) * sum_t P(t|R) * bm25(t, d)``, every BM25 term over the allowed
  chunks' statistics (``LexicalIndex.scores``), as Anserini's RM3 re-weights the query.
* **Rocchio** (Rocchio, 1971, "Relevance Feedback in Information Retrieval"): the query vector moved towards
  the centroid of the top ``FB_CHUNKS`` dense chunks, ``q' = ALPHA * q + BETA * mean(v_D)``, re-normalised.

The two expanded rankings are fused with the hybrid pipeline's reciprocal-rank fusion (``pipelines.fuse``).
Feedback comes only from chunks the mask allows (both first-round searches are masked), so an expansion term
is never taken from text the principal may not see; the dense ranking fills ``top_k`` as ``dense`` does.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import numpy as np

from drivebench.search.index.chunk_store import fit_mask
from drivebench.search.index.tokenize import tokenize
from drivebench.search.retrieval.pipelines import _QUERY_POOL, DocHit, _best_per_doc, fuse

if TYPE_CHECKING:
    from drivebench.search.retrieval.pipelines import Retriever

FB_CHUNKS = 5
FB_TERMS = 10
LAMBDA = 0.9  # weight of the original query in RM3 (acme-zh@3: 0.6-0.8 drift further from the question)
ALPHA = 1.0  # Rocchio: the query
BETA = 0.2  # Rocchio: the feedback centroid (acme-zh@3: 0.5 drifts)


def useful(term: str) -> bool:
    """An expansion term: two characters or more, at least one a letter, digit or CJK character."""
    return len(term) >= 2 and any(ch.isalnum() for ch in term)


def rm3_terms(texts: list[str], weights: list[float], query_terms: set[str]) -> dict[str, float]:
    """``P(t|R)`` over the feedback texts (weights: their ``P(D|Q)``), the best ``FB_TERMS`` expansion terms
    (query terms are kept by the interpolation, not here), normalised to sum 1; ties by term."""
    total_w = sum(weights)
    rel: defaultdict[str, float] = defaultdict(float)
    if total_w <= 0:
        return {}
    for text, w in zip(texts, weights, strict=True):
        tokens = tokenize(text)
        if not tokens:
            continue
        for term, c in Counter(tokens).items():
            if useful(term) and term not in query_terms:
                rel[term] += (w / total_w) * c / len(tokens)
    best = sorted(rel.items(), key=lambda kv: (-kv[1], kv[0]))[:FB_TERMS]
    norm = sum(v for _, v in best)
    return {t: v / norm for t, v in best} if norm > 0 else {}


class PseudoRelevanceFeedback:
    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    def expansion(self, query: str, allowed: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        """The original BM25 scores and the RM3 expansion terms with their weights."""
        store = self.retriever.store
        n = len(allowed)
        scores = store.lexical.scores(query, n, allowed)
        ids = np.flatnonzero(allowed & (scores > 0))
        if ids.size == 0:
            return scores, {}
        top = ids[np.lexsort((ids, -scores[ids]))][:FB_CHUNKS]
        terms = rm3_terms([store.texts[int(i)] for i in top], [float(scores[i]) for i in top], set(tokenize(query)))
        return scores, terms

    def rm3(self, query: str, allowed: np.ndarray, depth: int) -> list[DocHit]:
        store = self.retriever.store
        n = len(allowed)
        base, terms = self.expansion(query, allowed)
        q_len = max(1, len(tokenize(query)))
        scores = np.float32(LAMBDA) * base / np.float32(q_len)
        for term, w in terms.items():
            scores += np.float32((1 - LAMBDA) * w) * store.lexical.scores(term, n, allowed)
        ids = np.flatnonzero(allowed & (scores > 0))
        order = ids[np.lexsort((ids, -scores[ids]))]
        return _best_per_doc(store, [(int(i), float(scores[i])) for i in order], depth)

    def rocchio(self, qvec: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        store = self.retriever.store
        k = min(FB_CHUNKS, int(allowed.sum()))
        if k == 0:
            return qvec
        hits = store.dense_search(qvec, allowed, k)
        found = []
        with store.lock:
            for h in hits:
                try:
                    found.append(store.index.reconstruct(int(h.chunk_id)))
                except RuntimeError:  # removed by a concurrent sync since the search: not feedback any more
                    continue
        if not found:
            return qvec
        vectors = np.stack(found)
        moved = ALPHA * np.asarray(qvec, dtype=np.float32).reshape(-1) + BETA * vectors.mean(axis=0)
        norm = float(np.linalg.norm(moved))
        return (moved / norm if norm > 0 else moved).astype(np.float32).reshape(np.shape(qvec))

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        r = self.retriever
        depth = r.fusion.depth_for(top_k)
        pending = _QUERY_POOL.submit(r._query_vector, query)
        alive = r.store.alive
        allowed = fit_mask(mask, len(alive)) & alive
        lexical = self.rm3(query, allowed, depth)
        qvec = self.rocchio(pending.result(), allowed)
        return fuse(r.dense(query, allowed, depth, qvec), lexical, top_k, r.fusion)
