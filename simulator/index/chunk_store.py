"""Chunks of every indexed document version, their vectors in FAISS, and their metadata in numpy.

External FAISS ids are chunk ids: positions in this store, never reused. A chunk belongs to one
(document, version). Removing a version removes its vectors (``IndexIDMap2.remove_ids``) and marks
its chunks dead. Search takes a boolean mask over chunk ids and runs inside it through an
``IDSelectorBitmap`` (pre-filtering: no post-filter, no under-fill).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import faiss
import numpy as np

from drivebench.simulator.index.lexical import LexicalIndex


def fit_mask(mask: np.ndarray, n: int) -> np.ndarray:
    """``mask`` as a bool array of exactly ``n`` entries. A mask computed before a concurrent index sync
    added chunks is shorter than the store: the chunks it does not cover are not allowed."""
    out = np.zeros(n, dtype=bool)
    m = min(n, len(mask))
    out[:m] = np.asarray(mask[:m], dtype=bool)
    return out


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: int
    score: float


class ChunkStore:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self.texts: list[str] = []
        self.parts: list[str] = []
        self.doc_ids: list[str] = []
        self.version_ids: list[str] = []
        self.ordinals: list[int] = []
        self.alive = np.zeros(0, dtype=bool)
        self.by_version: dict[str, list[int]] = {}
        self.lexical = LexicalIndex()  # positional: lexical row i is chunk id i
        self.lock = threading.RLock()

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_alive(self) -> int:
        return int(self.alive.sum())

    def add(self, doc_id: str, version_id: str, chunks: list[tuple[str, str]], vectors: np.ndarray) -> list[int]:
        """Add one version's chunks (text, part label) with their vectors; returns the new chunk ids."""
        if len(chunks) != len(vectors):
            raise ValueError("one vector per chunk")
        with self.lock:
            if version_id in self.by_version:
                self.remove_version(version_id)
            start = len(self.texts)
            ids = np.arange(start, start + len(chunks), dtype=np.int64)
            if len(chunks):
                self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids)
            for ordinal, (text, part) in enumerate(chunks):
                self.texts.append(text)
                self.parts.append(part)
                self.doc_ids.append(doc_id)
                self.version_ids.append(version_id)
                self.ordinals.append(ordinal)
            self.lexical.add([text for text, _ in chunks])
            self.alive = np.concatenate([self.alive, np.ones(len(chunks), dtype=bool)])
            self.by_version[version_id] = ids.tolist()
            return ids.tolist()

    def remove_version(self, version_id: str) -> int:
        with self.lock:
            ids = self.by_version.pop(version_id, [])
            if ids:
                self.index.remove_ids(np.array(ids, dtype=np.int64))
                self.alive[ids] = False
            return len(ids)

    def remove_document(self, doc_id: str) -> int:
        with self.lock:
            versions = [v for v, ids in self.by_version.items() if ids and self.doc_ids[ids[0]] == doc_id]
            return sum(self.remove_version(v) for v in versions)

    def search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]:
        """Top-``k`` chunks by inner product among chunk ids where ``mask`` (and alive) is True."""
        with self.lock:
            n = len(self.texts)
            if n == 0 or k <= 0:
                return []
            allowed = fit_mask(mask, n) & self.alive
            n_allowed = int(allowed.sum())
            if n_allowed == 0:
                return []
            bits = np.packbits(allowed, bitorder="little")
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
            params = faiss.SearchParameters(sel=selector)
            q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
            scores, ids = self.index.search(q, min(k, n_allowed), params=params)
        return [ChunkHit(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
