"""Index choice by size: IVF with an ID selector for large stores, never under-filled, never outside the
mask, in step with adds and removals; ``auto`` stays exact below the switch point."""

from __future__ import annotations

import numpy as np
import pytest

from drivebench.search.index import ann
from drivebench.search.index.ann import IVFIndex
from drivebench.search.index.chunk_store import ChunkStore

DIM = 32


def _clustered(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, DIM))
    x = centres[rng.integers(0, 50, n)] + 0.3 * rng.normal(size=(n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _store(n: int, mode: str) -> ChunkStore:
    store = ChunkStore(DIM, index_mode=mode)
    vecs = _clustered(n)
    for start in range(0, n, 500):
        part = vecs[start : start + 500]
        chunks = [(f"chunk {i}", "body") for i in range(start, start + len(part))]
        store.add(f"doc{start // 500}", f"v{start // 500}", chunks, part)
    return store


@pytest.fixture(scope="module")
def stores() -> tuple[ChunkStore, ChunkStore]:
    return _store(6000, "flat"), _store(6000, "ivf")


@pytest.mark.parametrize("share", [1.0, 0.1, 0.005])
def test_ivf_is_never_underfilled_never_leaks_and_close_to_exact(
    stores: tuple[ChunkStore, ChunkStore], share: float
) -> None:
    flat, ivf = stores
    rng = np.random.default_rng(1)
    queries = _clustered(40, seed=7)
    overlap = []
    for q in queries:
        mask = rng.random(len(flat)) < share
        exact = flat.search(q, mask, 10)
        approx = ivf.search(q, mask, 10)
        assert len(approx) == len(exact) == min(10, int(mask.sum()))  # never under-filled
        assert all(mask[h.chunk_id] for h in approx)  # never outside the permission mask
        overlap.append(len({h.chunk_id for h in exact} & {h.chunk_id for h in approx}) / max(1, len(exact)))
    assert ivf.searching_with == "ivf" and flat.searching_with == "flat"
    assert float(np.mean(overlap)) >= 0.9


def test_a_mask_of_three_chunks_returns_exactly_those_three() -> None:
    ivf = _store(3000, "ivf")
    mask = np.zeros(len(ivf), dtype=bool)
    mask[[5, 1700, 2999]] = True
    hits = ivf.search(_clustered(1, seed=3)[0], mask, 10)
    assert sorted(h.chunk_id for h in hits) == [5, 1700, 2999]


def test_underfilled_probes_widen_until_filled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "MAX_FILTER_BOOST", 1)  # no head start: the first pass probes one list
    vecs = _clustered(4000)
    index = IVFIndex(DIM, vecs, np.arange(4000, dtype=np.int64), nprobe=1)
    mask = np.zeros(4000, dtype=bool)
    mask[np.random.default_rng(2).choice(4000, 40, replace=False)] = True
    scores, ids = index.search(vecs[0], mask, 10)
    assert len(ids) == 10 and all(mask[i] for i in ids) and list(scores) == sorted(scores, reverse=True)
    assert index.stats.widened >= 1


def test_removed_versions_leave_the_ann_and_new_ones_join_it() -> None:
    ivf = _store(3000, "ivf")
    q = _clustered(1, seed=5)[0]
    everything = np.ones(len(ivf), dtype=bool)
    ivf.search(q, everything, 10)  # builds the ANN
    ivf.remove_version("v0")
    everything = np.ones(len(ivf), dtype=bool)
    assert all(h.chunk_id >= 500 for h in ivf.search(q, everything, 200))
    new_ids = ivf.add("doc-new", "v-new", [("new", "body")], q.reshape(1, -1))
    everything = np.ones(len(ivf), dtype=bool)
    assert ivf.search(q, everything, 1)[0].chunk_id == new_ids[0]


def test_auto_stays_exact_below_the_switch_point_and_switches_above_it() -> None:
    store = _store(3000, "auto")
    assert store.searching_with == "flat"
    store.ann_min_chunks, store.ann_min_allowed = 2000, 100
    assert store.searching_with == "ivf"
    mask = np.zeros(len(store), dtype=bool)
    mask[:50] = True  # few allowed chunks: exact flat search inside the bitmap
    store.search(_clustered(1)[0], mask, 10)
    assert store.ann is None
    store.search(_clustered(1)[0], np.ones(len(store), dtype=bool), 10)
    assert store.ann is not None


def test_ivf_index_alone_handles_an_empty_mask() -> None:
    vecs = _clustered(500)
    index = IVFIndex(DIM, vecs, np.arange(500, dtype=np.int64))
    scores, ids = index.search(vecs[0], np.zeros(500, dtype=bool), 10)
    assert len(ids) == 0 and len(scores) == 0
