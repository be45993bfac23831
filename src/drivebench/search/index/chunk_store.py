"""Chunks of every indexed document version, their vectors in FAISS, and their metadata in numpy.

External FAISS ids are chunk ids: positions in this store, never reused. A chunk belongs to one
(document, version). Removing a version removes its vectors (``IndexIDMap2.remove_ids``) and marks
its chunks dead. Search takes a boolean mask over chunk ids and runs inside it through an
``IDSelectorBitmap`` (pre-filtering: no post-filter, no under-fill). The masks the simulator builds are
``VisibleMask``: they carry the instant they were judged at, for a vector backend that filters by it.

Index choice by size (``index_mode``): ``flat`` is always exact; ``ivf`` always uses the IVF ANN
(``ann.IVFIndex``, built lazily from the flat index and kept in step with adds and removals);
``auto`` (default) searches exactly up to ``ann.ANN_MIN_CHUNKS`` live chunks, and beyond that uses the
ANN whenever the principal may see at least ``ann.ANN_MIN_ALLOWED`` chunks. The flat index stays the
source of truth (it is what ``persistence`` writes), the ANN is derived from it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import faiss
import numpy as np

from drivebench.search.index.ann import ANN_MIN_ALLOWED, ANN_MIN_CHUNKS, IVFIndex
from drivebench.search.index.lexical import LexicalIndex

INDEX_MODES = ("auto", "flat", "ivf")


def fit_mask(mask: np.ndarray, n: int) -> np.ndarray:
    """``mask`` as a bool array of exactly ``n`` entries. A mask computed before a concurrent index sync
    added chunks is shorter than the store: the chunks it does not cover are not allowed."""
    out = np.zeros(n, dtype=bool)
    m = min(n, len(mask))
    out[:m] = np.asarray(mask[:m], dtype=bool)
    return out


class VisibleMask(np.ndarray):
    """A boolean chunk mask plus the instant (µs since the epoch) it was judged at and the generation of the
    backend's stored validity it was judged against (None for FAISS)."""

    at_us: int | None
    generation: int | None

    def __array_finalize__(self, obj: Any) -> None:
        self.at_us = getattr(obj, "at_us", None)
        self.generation = getattr(obj, "generation", None)


def visible_mask(mask: np.ndarray, at_us: int, generation: int | None = None) -> VisibleMask:
    out = np.asarray(mask, dtype=bool).view(VisibleMask)
    out.at_us = int(at_us)
    out.generation = generation
    return out


def mask_instant(mask: np.ndarray) -> int | None:
    return getattr(mask, "at_us", None)


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: int
    score: float


class ChunkStore:
    def __init__(self, dim: int, index_mode: str = "auto") -> None:
        if index_mode not in INDEX_MODES:
            raise ValueError(f"unknown index {index_mode!r}; known: {', '.join(INDEX_MODES)}")
        self.dim = dim
        self.index_mode = index_mode
        self.ann: IVFIndex | None = None
        self.ann_min_chunks = ANN_MIN_CHUNKS
        self.ann_min_allowed = ANN_MIN_ALLOWED
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self.texts: list[str] = []
        self.parts: list[str] = []
        self.doc_ids: list[str] = []
        self.version_ids: list[str] = []
        self.ordinals: list[int] = []
        self.alive = np.zeros(0, dtype=bool)  # a view of _alive_buf's first len(self) entries, republished per add
        self._alive_buf = self.alive
        # a version's chunk ids, contiguous when added here: a range (48 bytes) instead of a list of ints (~36 per chunk)
        self.by_version: dict[str, Sequence[int]] = {}
        self.lexical = LexicalIndex()  # positional: lexical row i is chunk id i
        self.lock = threading.RLock()
        self.vector_backend: Any = None  # an external vector store (Milvus) mirroring adds/removals

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
                if self.ann is not None:
                    self.ann.add(vectors, ids)
            for ordinal, (text, part) in enumerate(chunks):
                self.texts.append(text)
                self.parts.append(sys.intern(part))  # a handful of labels (body, page 3, ...) shared
                self.doc_ids.append(doc_id)
                self.version_ids.append(version_id)
                self.ordinals.append(ordinal)
            self.lexical.add([text for text, _ in chunks])
            self._grow_alive(len(chunks))
            self.by_version[version_id] = range(start, start + len(chunks))
            if self.vector_backend is not None:  # vector_store.py's hook: queue the rows for Milvus
                self.vector_backend.added(ids.tolist())
            return ids.tolist()

    def _grow_alive(self, k: int) -> None:
        """Append ``k`` live entries: amortised O(k) (the buffer doubles), not a copy of the whole array per
        version (which made bulk loads quadratic). Readers hold the previous view, whose entries never change
        meaning; the new view is published last, after its entries are set."""
        current = self.alive
        n = len(current)
        buf = self._alive_buf
        if current.base is not buf or len(buf) < n + k:  # full, or replaced from outside (persistence)
            buf = np.zeros(max(n + k, 2 * n, 1024), dtype=bool)
            buf[:n] = current
            self._alive_buf = buf
        buf[n : n + k] = True
        self.alive = buf[: n + k]

    def compact(self) -> None:
        """After a bulk load: the BM25 postings merged into one segment, and the flat index rebuilt at its
        exact size. FAISS keeps its vectors in a std::vector that grew by doubling while versions were added
        one by one: up to half of it spare (6.6 MB beyond 18.5 MB of vectors at 10,000 documents). The copy
        holds the same vectors under the same ids (searches equal bit for bit); it is swapped in under the
        lock, so no search sees a half-built index."""
        self.lexical.compact()
        with self.lock:
            flat = faiss.downcast_index(self.index.index)
            n = int(flat.ntotal)
            vectors = flat.reconstruct_n(0, n) if n else np.zeros((0, self.dim), dtype=np.float32)
            ids = faiss.vector_to_array(self.index.id_map).astype(np.int64)
            fresh = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
            if n:
                fresh.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids)
            self.index = fresh

    def remove_version(self, version_id: str) -> int:
        with self.lock:
            ids = list(self.by_version.pop(version_id, []))
            if ids:
                self.index.remove_ids(np.array(ids, dtype=np.int64))  # type: ignore[arg-type]  # faiss's stubs type the SWIG signature; its Python wrapper takes the numpy ids
                if self.ann is not None:
                    self.ann.remove(np.array(ids, dtype=np.int64))
                self.alive[ids] = False
                if self.vector_backend is not None:  # vector_store.py's hook: delete from Milvus now
                    self.vector_backend.removed(ids)
            return len(ids)

    def remove_document(self, doc_id: str) -> int:
        with self.lock:
            versions = [v for v, ids in self.by_version.items() if ids and self.doc_ids[ids[0]] == doc_id]
            return sum(self.remove_version(v) for v in versions)

    def _wants_ann(self, n_allowed: int) -> bool:
        if self.index_mode == "flat":
            return False
        if self.index_mode == "ivf":
            return n_allowed > 0
        return self.n_alive >= self.ann_min_chunks and n_allowed >= self.ann_min_allowed

    def _ensure_ann(self) -> IVFIndex:
        """Build the IVF from the live vectors (once; rebuilt when the store has doubled since)."""
        if self.ann is None or self.n_alive > 2 * max(self.ann.stats.trained_on, 1):
            flat = faiss.downcast_index(self.index.index)  # the IDMap2's storage: live vectors only
            vectors = flat.reconstruct_n(0, flat.ntotal) if flat.ntotal else np.zeros((0, self.dim), np.float32)
            ids = faiss.vector_to_array(self.index.id_map).astype(np.int64)
            self.ann = IVFIndex(self.dim, np.asarray(vectors, dtype=np.float32), ids)
        return self.ann

    @property
    def searching_with(self) -> str:
        """What a search over every live chunk would use now: ``flat`` or ``ivf``."""
        return "ivf" if self._wants_ann(self.n_alive) else "flat"

    def dense_search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]:
        """``Retriever.dense``'s chunk search: the attached vector backend (Milvus, ``vector_store``) or ``search``."""
        backend = self.vector_backend
        if backend is None:
            return self.search(query, mask, k)
        return backend.search(query, mask, k)

    def search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]:
        """Top-``k`` chunks by inner product among chunk ids where ``mask`` (and alive) is True: exact
        (flat + bitmap) or, for large stores, IVF + bitmap; ``min(k, allowed)`` hits either way."""
        with self.lock:
            n = len(self.texts)
            if n == 0 or k <= 0:
                return []
            allowed = fit_mask(mask, n) & self.alive
            n_allowed = int(allowed.sum())
            if n_allowed == 0:
                return []
            if self._wants_ann(n_allowed):
                scores, found = self._ensure_ann().search(query, allowed, k)
                return [ChunkHit(int(i), float(s)) for s, i in zip(scores, found, strict=True)]
            q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
            if n_allowed == self.index.ntotal:  # every indexed (live) vector is allowed: no selector needed
                scores, ids = self.index.search(q, min(k, n_allowed))
            else:
                bits = np.packbits(allowed, bitorder="little")
                selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
                params = faiss.SearchParameters()
                params.sel = selector
                scores, ids = self.index.search(q, min(k, n_allowed), params=params)
        return [ChunkHit(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
