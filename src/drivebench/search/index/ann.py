"""Approximate nearest-neighbour search for large stores: FAISS IVF with an ID selector, never under-filled.

Why IVF and not HNSW: HNSW cannot remove ids (a removed version must leave the index at once) and,
with a 10% permission filter, needs efSearch >= 256 to reach 0.99 recall; filtered HNSW also has an
upstream bug where the selector is silently ignored (faiss #5504, ``bounded_queue=False``): a leak.
``IndexIVFFlat`` supports ``remove_ids``, ``add_with_ids`` with our chunk ids, and applies an
``IDSelectorBitmap`` inside each probed list (we never use ``IndexShardsIVF``: faiss #5584).

The number of lists probed (``nprobe``) starts at ``DEFAULT_NPROBE`` times the inverse of the permitted
share (capped at ``MAX_FILTER_BOOST``x), so a narrow filter scans about as many permitted vectors as no
filter does. Filtered IVF can still under-fill: when the probed lists hold fewer than ``k`` allowed vectors, FAISS returns
id -1 for the missing slots. ``search`` then probes 4x more lists, until ``k`` hits come back or
every list was probed (that last pass is an exact search over the allowed set), so a principal always
gets ``min(k, allowed)`` results.

When the ANN is used (``ChunkStore.search``): only when the store holds at least ``min_chunks`` live
chunks *and* the principal may see at least ``min_allowed`` of them. Below that, exact flat search
inside the permission bitmap is faster or as fast (its cost is ~proportional to the allowed chunks):
see ``benchmarks/bench_ann.py`` (its report in ``benchmarks/results/``) and docs/vector-stores.md for the switch point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import faiss
import numpy as np

# Measured switch point (benchmarks/bench_ann.py, one search thread as in the server, 2 shared cores):
# exact flat + bitmap passes 5 ms p50 between 10k and 20k chunks with everything allowed (17 ms at 50k),
# while IVF stays near 1-2 ms with recall@10 >= 0.99. Under a narrow filter flat + bitmap stays fast
# (0.7 ms at 50k chunks, 1% allowed) and beats IVF, hence the second threshold.
ANN_MIN_CHUNKS = 20_000
ANN_MIN_ALLOWED = 2_000
DEFAULT_NPROBE = 32  # lists probed at 100% allowed; scaled by 1/share under a filter (at most 16x)
MAX_FILTER_BOOST = 16
TRAIN_SAMPLE = 100_000


@dataclass
class AnnStats:
    trained_on: int
    nlist: int
    searches: int = 0
    widened: int = 0  # searches that had to probe more lists to fill k


class IVFIndex:
    """An IVF-flat inner-product index over (a copy of) a store's live vectors, keyed by chunk id."""

    def __init__(self, dim: int, vectors: np.ndarray, ids: np.ndarray, *, nprobe: int = DEFAULT_NPROBE) -> None:
        n = len(ids)
        self.nlist = max(1, min(int(4 * math.sqrt(max(n, 1))), n // 39 if n >= 39 else 1))
        quantizer = faiss.IndexFlatIP(dim)
        self.index = faiss.IndexIVFFlat(quantizer, dim, self.nlist, faiss.METRIC_INNER_PRODUCT)
        sample = vectors
        if n > TRAIN_SAMPLE:
            pick = np.random.default_rng(0).choice(n, TRAIN_SAMPLE, replace=False)
            sample = vectors[np.sort(pick)]
        self.index.train(np.ascontiguousarray(sample, dtype=np.float32))
        if n:
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
        self.nprobe = min(nprobe, self.nlist)
        self.stats = AnnStats(trained_on=n, nlist=self.nlist)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def add(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))

    def remove(self, ids: np.ndarray) -> None:
        self.index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))  # type: ignore[arg-type]  # faiss's stubs type the SWIG signature; its Python wrapper takes the numpy ids

    def search(self, query: np.ndarray, allowed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` (scores, ids) among ids where ``allowed`` is True; ``min(k, allowed.sum())`` results."""
        n_allowed = int(allowed.sum())
        want = min(k, n_allowed)
        if want <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        bits = np.packbits(allowed, bitorder="little")
        selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits))
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        # under a filter, probe more lists so about as many *permitted* vectors are scanned as without one
        boost = min(float(MAX_FILTER_BOOST), len(allowed) / max(n_allowed, 1))
        nprobe = min(self.nlist, max(1, math.ceil(self.nprobe * boost)))
        self.stats.searches += 1
        while True:
            params = faiss.SearchParametersIVF()
            params.sel, params.nprobe = selector, nprobe
            scores, ids = self.index.search(q, want, params=params)
            keep = ids[0] >= 0  # unfilled slots come back as -1
            if int(keep.sum()) >= want or nprobe >= self.nlist:
                return scores[0][keep], ids[0][keep]
            nprobe = min(self.nlist, nprobe * 4)
            self.stats.widened += 1
