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

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from drivebench.search.index.embedders import Embedder, embed_threads

MAX_BATCH = 32


@dataclass
class _Request:
    query: str
    done: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None
    error: BaseException | None = None


class QueryBatcher:
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

    def prime(self, queries: list[str]) -> None:
        """Encode ``queries`` now, ``max_batch`` at a time, and answer them from memory from then on
        (replacing what an earlier ``prime`` held)."""
        todo = list(dict.fromkeys(queries))
        primed: dict[str, np.ndarray] = {}
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


_shared: dict[Embedder, QueryBatcher] = {}  # like the shared embedders (get_embedder): live for the process
_shared_lock = threading.Lock()


def shared_batcher(embedder: Embedder) -> QueryBatcher:
    """The process's one batcher for ``embedder`` (its workers and thread budget serve every retriever)."""
    with _shared_lock:
        batcher = _shared.get(embedder)
        if batcher is None:
            batcher = _shared[embedder] = QueryBatcher(embedder)
        return batcher
