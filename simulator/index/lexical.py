"""BM25 over chunk texts with bm25s (pre-tokenised with ``tokenize``: bm25s's own tokenizer does not
split Chinese). bm25s indexes are static, so the index is rebuilt lazily on the first search after
a change; scores for dead or masked chunks are never returned."""

from __future__ import annotations

import threading

import bm25s
import numpy as np

from drivebench.simulator.index.tokenize import tokenize


class LexicalIndex:
    def __init__(self) -> None:
        self._tokens: list[list[str]] = []
        self._retriever: bm25s.BM25 | None = None
        self._built_for = -1
        self._lock = threading.Lock()

    def add(self, texts: list[str]) -> None:
        with self._lock:
            self._tokens.extend(tokenize(t) for t in texts)

    def _ensure(self) -> bm25s.BM25 | None:
        if self._built_for == len(self._tokens):
            return self._retriever
        corpus = [t if t else ["\u2205"] for t in self._tokens]
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        self._retriever, self._built_for = retriever, len(self._tokens)
        return retriever

    def scores(self, query: str, n: int) -> np.ndarray:
        """BM25 score of every chunk id below ``n`` (0 where no query term occurs)."""
        q = tokenize(query)
        with self._lock:
            retriever = self._ensure() if self._tokens else None
            if retriever is None or not q:
                return np.zeros(n, dtype=np.float32)
            vocab = retriever.vocab_dict
            known = [t for t in q if t in vocab]
            if not known:
                return np.zeros(n, dtype=np.float32)
            s = retriever.get_scores(known)
        out = np.zeros(n, dtype=np.float32)
        out[: min(n, len(s))] = s[:n]
        return out
