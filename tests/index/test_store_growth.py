"""Bulk growth of the chunk store and the BM25 postings: amortised appends and trimmed
capacity change no answer."""

from __future__ import annotations

import numpy as np

from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.index.lexical import LexicalIndex

TEXTS = ["预算 审批 流程 budget", "合同 模板 contract", "budget review 预算", "季度 报告 report", "contract 合同 审批"]


def _vectors(n: int, dim: int = 8) -> np.ndarray:
    rng = np.random.default_rng(n)
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_alive_grows_in_place_and_old_views_keep_their_meaning() -> None:
    store = ChunkStore(8, "flat")
    views = []
    for i in range(300):  # past several doublings of the buffer
        store.add(f"d{i}", f"d{i}-v1", [(TEXTS[i % 5], "p"), (TEXTS[(i + 1) % 5], "p")], _vectors(2))
        views.append(store.alive)
    assert len(store.alive) == 600 and store.alive.all()
    assert store.alive.base is store._alive_buf  # a view of the buffer, not a fresh copy per add
    store.remove_version("d7-v1")
    assert not store.alive[14:16].any() and store.alive.sum() == 598
    assert [len(v) for v in views[:3]] == [2, 4, 6]  # what a reader held still covers the same chunks
    # replaced from outside (persistence assigns a loaded array): the next add adopts it
    store.alive = store.alive.copy()
    store.add("dx", "dx-v1", [("x", "p")], _vectors(1))
    assert len(store.alive) == 601 and store.alive[-1] and not store.alive[14]


def test_compact_trims_capacity_and_changes_no_score() -> None:
    index = LexicalIndex()
    index.add(TEXTS * 40)
    before = {q: index.scores(q, len(index)) for q in ("预算 budget", "合同", "report 报告 审批")}
    spare = sum(len(p.ids) - p.n for p in index._postings.values())
    postings = sum(p.n for p in index._postings.values())
    vocabulary = index.vocabulary_size
    index.compact()  # everything merged into one segment: two flat arrays, no per-term arrays left
    segment = index._segment
    assert spare > 0 and index._postings == {} and index.vocabulary_size == vocabulary == len(segment.rows)
    assert len(segment.ids) == len(segment.tf) == postings == segment.off[-1]
    for q, want in before.items():
        np.testing.assert_array_equal(index.scores(q, len(index)), want)
    index.add(["预算 预算 budget"])  # appends after a compact grow again, as live postings
    assert index.scores("预算", len(index))[-1] > 0 and set(index._postings) == {"预算", "budget"}
    index.compact()  # a second segment merges the first with what came since
    assert index._postings == {} and index.scores("预算", len(index))[-1] > 0


def test_store_compact_rebuilds_the_flat_index_with_the_same_answers() -> None:
    store = ChunkStore(8, "flat")
    for i in range(120):
        store.add(f"d{i}", f"d{i}-v1", [(TEXTS[i % 5], "p"), (TEXTS[(i + 2) % 5], "p")], _vectors(2 * i + 2)[:2])
    store.remove_version("d3-v1")  # a hole in the ids
    queries, mask = _vectors(5), np.ones(len(store), dtype=bool)
    mask[::3] = False
    before = [store.search(q, mask, 7) for q in queries] + [store.search(q, store.alive, 240) for q in queries]
    old = store.index
    store.compact()
    assert store.index is not old and store.index.ntotal == old.ntotal == 238
    after = [store.search(q, mask, 7) for q in queries] + [store.search(q, store.alive, 240) for q in queries]
    assert after == before  # same ids, same scores, same order
    store.remove_version("d5-v1")  # the rebuilt index still maps ids: removal and additions work as before
    store.add("dz", "dz-v1", [("预算", "p")], _vectors(1))
    hits = store.search(_vectors(1)[0], store.alive, 3)
    assert hits[0].chunk_id == 240 and not {10, 11} & {h.chunk_id for h in store.search(queries[0], store.alive, 240)}
