"""Micro-batching of concurrent query encodes: queries that arrive while an encode runs share the
next encode call (on the batcher's one encoder thread); every caller gets its own query's vector (equal to
encoding it alone); errors reach every caller of the failed batch; a lone caller encodes alone."""

from __future__ import annotations

import threading
import time

import numpy as np

from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import QueryBatcher

QUERIES = ["项目X的预算", "budget approval", "合同审批流程", "quarterly report"]


class GatedEmbedder:
    """The hash embedder, recording each call's size; the first call waits until the test opens the gate."""

    def __init__(self, fail: bool = False) -> None:
        self.inner = get_embedder("hash")
        self.name, self.dim, self.fingerprint, self.config = "gated", self.inner.dim, "gated", self.inner.config
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.fail = fail

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            assert self.gate.wait(10)
        if self.fail:
            raise RuntimeError("model crashed")
        return self.inner.encode_queries(texts)


def _run_concurrently(batcher: QueryBatcher, embedder: GatedEmbedder) -> dict[str, object]:
    results: dict[str, object] = {}

    def go(q: str) -> None:
        try:
            results[q] = batcher.encode(q)
        except Exception as exc:
            results[q] = exc

    first = threading.Thread(target=go, args=(QUERIES[0],))
    first.start()
    deadline = time.monotonic() + 10
    while not embedder.calls and time.monotonic() < deadline:  # the encoder is inside the first call
        time.sleep(0.001)
    others = [threading.Thread(target=go, args=(q,)) for q in QUERIES[1:]]
    for t in others:
        t.start()
    while len(batcher._queue) < len(others) and time.monotonic() < deadline:  # all queued behind it
        time.sleep(0.001)
    embedder.gate.set()
    for t in [first, *others]:
        t.join(10)
    return results


def test_queries_arriving_during_an_encode_share_the_next_call() -> None:
    embedder = GatedEmbedder()
    batcher = QueryBatcher(embedder)
    results = _run_concurrently(batcher, embedder)
    assert embedder.calls[0] == [QUERIES[0]] and len(embedder.calls) == 2  # one call for the three that waited
    assert sorted(embedder.calls[1]) == sorted(QUERIES[1:])
    assert batcher.batches == 2 and batcher.encoded == 4
    for q in QUERIES:
        alone = embedder.inner.encode_queries([q])[0]
        np.testing.assert_allclose(results[q], alone, rtol=1e-6, atol=1e-6)


def test_a_failed_batch_fails_every_caller_in_it_and_the_batcher_recovers() -> None:
    embedder = GatedEmbedder(fail=True)
    batcher = QueryBatcher(embedder)
    results = _run_concurrently(batcher, embedder)
    assert all(isinstance(results[q], RuntimeError) for q in QUERIES)
    embedder.fail = False
    np.testing.assert_allclose(batcher.encode("again"), embedder.inner.encode_queries(["again"])[0], atol=1e-6)


def test_a_lone_caller_encodes_alone() -> None:
    embedder = GatedEmbedder()
    embedder.gate.set()
    batcher = QueryBatcher(embedder)
    for q in QUERIES:
        batcher.encode(q)
    assert embedder.calls == [[q] for q in QUERIES]


def test_batches_are_bounded_by_max_batch() -> None:
    embedder = GatedEmbedder()
    batcher = QueryBatcher(embedder, max_batch=2)
    results = _run_concurrently(batcher, embedder)
    assert [len(c) for c in embedder.calls] == [1, 2, 1] and embedder.calls[0] == [QUERIES[0]]
    assert sorted(q for c in embedder.calls[1:] for q in c) == sorted(QUERIES[1:])
    for q in QUERIES:
        np.testing.assert_allclose(results[q], embedder.inner.encode_queries([q])[0], rtol=1e-6, atol=1e-6)


class PooledEmbedder(GatedEmbedder):
    """Allows two concurrent calls and records the team size each call ran with (``use_threads`` is per
    calling thread, as OpenMP's is); every call waits for the gate."""

    concurrent_calls = 2

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()
        self.teams: list[int] = []
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()

    def use_threads(self, n: int) -> None:
        self.local.team = n

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            self.calls.append(list(texts))
            self.teams.append(self.local.team)
            self.running += 1
            self.peak = max(self.peak, self.running)
        assert self.gate.wait(10)
        with self.lock:
            self.running -= 1
        return self.inner.encode_queries(texts)


def test_a_lone_query_gets_the_whole_thread_budget() -> None:
    embedder = PooledEmbedder()
    embedder.gate.set()
    batcher = QueryBatcher(embedder, threads=2)
    assert batcher.workers == 2
    for q in QUERIES:
        np.testing.assert_allclose(batcher.encode(q), embedder.inner.encode_queries([q])[0], atol=1e-6)
    assert embedder.teams == [2] * len(QUERIES) and batcher.most_concurrent == 1


def test_concurrent_queries_run_in_parallel_calls_that_share_the_budget() -> None:
    embedder = PooledEmbedder()
    batcher = QueryBatcher(embedder, threads=2)
    results: dict[str, np.ndarray] = {}
    threads = [threading.Thread(target=lambda q=q: results.__setitem__(q, batcher.encode(q))) for q in QUERIES[:2]]
    threads[0].start()
    deadline = time.monotonic() + 10
    while not embedder.calls and time.monotonic() < deadline:  # the first worker is inside its call
        time.sleep(0.001)
    threads[1].start()
    while len(embedder.calls) < 2 and time.monotonic() < deadline:  # the second worker, at the same time
        time.sleep(0.001)
    assert embedder.peak == 2, "the second query waited for the first call: the encoders are serialised"
    assert embedder.teams == [2, 1]  # the lone call had both threads; the second one got its half
    embedder.gate.set()
    for t in threads:
        t.join(10)
    assert batcher.most_concurrent == 2
    for q in QUERIES[:2]:
        np.testing.assert_allclose(results[q], embedder.inner.encode_queries([q])[0], atol=1e-6)


def test_primed_queries_are_encoded_ahead_in_full_batches_and_answered_from_memory() -> None:
    embedder = GatedEmbedder()
    embedder.gate.set()
    batcher = QueryBatcher(embedder, max_batch=2)
    batcher.prime([*QUERIES, QUERIES[0]])  # a repeated query is encoded once
    assert [len(c) for c in embedder.calls] == [2, 2] and sorted(q for c in embedder.calls for q in c) == sorted(
        QUERIES
    )
    for q in QUERIES:
        np.testing.assert_allclose(batcher.encode(q), embedder.inner.encode_queries([q])[0], rtol=1e-6, atol=1e-6)
    assert len(embedder.calls) == 2 and batcher.batches == 0  # no call for a primed query
    batcher.encode("not primed")
    assert embedder.calls[-1] == ["not primed"]
    batcher.prime(["other"])  # replaces what the first prime held
    batcher.encode(QUERIES[0])
    assert embedder.calls[-1] == [QUERIES[0]]
