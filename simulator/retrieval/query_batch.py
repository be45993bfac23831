"""Micro-batching of concurrent query encodes (issue #14).

A query embedding is one small model call; on a server several arrive at once. Encoding them one call each
leaves cores idle (the ``e5`` engine parallelises across the texts of one call) or makes the calls fight
over the same cores: every calling thread becomes the master of its own OpenMP thread team, so four
requests in flight on two cores run four teams. ``QueryBatcher.encode(query)`` instead hands the query to
one encoder thread, which joins whatever queries are waiting into one ``encode_queries`` call:

* one encoder thread per batcher (started on first use, a daemon): one OpenMP team, reused;
* while a batch is being encoded, new queries queue; the next call takes all of them (up to
  ``max_batch``), so a lone query is encoded alone (no waiting for company) and a burst shares calls;
* every caller gets its own query's row (encoders embed each text independently, so a batched vector
  equals the single one up to float rounding: tested);
* an exception in the encode is re-raised in every caller of that batch (recall fails; never a wrong
  vector), and the encoder thread carries on with the next batch.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from drivebench.simulator.index.embedders import Embedder

MAX_BATCH = 32


@dataclass
class _Request:
    query: str
    done: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None
    error: BaseException | None = None


class QueryBatcher:
    def __init__(self, embedder: Embedder, max_batch: int = MAX_BATCH) -> None:
        self.embedder = embedder
        self.max_batch = max_batch
        self._ready = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._worker: threading.Thread | None = None
        self.batches = 0  # encode calls made (for tests and benchmarks)
        self.encoded = 0  # queries encoded

    def encode(self, query: str) -> np.ndarray:
        req = _Request(query)
        with self._ready:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="query-encoder", daemon=True)
                self._worker.start()
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

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                batch = [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]
            try:
                vectors = np.asarray(self._encode([r.query for r in batch]))
                if len(vectors) != len(batch):
                    raise RuntimeError(f"the embedder returned {len(vectors)} vectors for {len(batch)} queries")
                for r, v in zip(batch, vectors, strict=True):
                    r.vector = v
            except BaseException as exc:  # every caller of this batch fails with it; the thread carries on
                for r in batch:
                    r.error = exc
            self.batches += 1
            self.encoded += len(batch)
            for r in batch:
                r.done.set()
