"""Micro-batching of concurrent query encodes (issue #14).

A query embedding is one small model call; on a server several arrive at once. Encoding them one call each
leaves cores idle (the ``e5`` engine parallelises across the texts of one call) or makes the calls fight
over the same cores. ``QueryBatcher.encode(query)`` instead joins whatever queries are waiting into one
``encode_queries`` call:

* no thread of its own: the first caller to find the batcher idle becomes the *leader* and encodes
  everything queued (up to ``max_batch``), its own query included; callers arriving meanwhile queue
  and wait;
* when a batch is done, its callers are woken with their vectors; if more queries queued during the
  call, the first of them becomes the next leader (nobody keeps encoding for others after its own
  vector is ready, so one caller never pays for a long queue);
* a single caller in flight pays nothing but one uncontended lock: the batch is its own query;
* an exception in the encode is re-raised in every caller of that batch (recall fails; never a
  wrong vector); the vectors are the embedder's own, row ``i`` for query ``i`` (encoders embed each
  text independently, so a batched vector equals the single one up to float rounding: tested).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from drivebench.simulator.index.embedders import Embedder

MAX_BATCH = 32


@dataclass
class _Request:
    query: str
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # woken to lead the next batch, not with a result
    vector: np.ndarray | None = None
    error: BaseException | None = None


class QueryBatcher:
    def __init__(self, embedder: Embedder, max_batch: int = MAX_BATCH) -> None:
        self.embedder = embedder
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: list[_Request] = []
        self._busy = False
        self.batches = 0  # encode calls made (for tests and benchmarks)
        self.encoded = 0  # queries encoded

    def encode(self, query: str) -> np.ndarray:
        req = _Request(query)
        with self._lock:
            self._queue.append(req)
            leader = not self._busy
            self._busy = True
        if not leader:
            req.done.wait()
            if not req.lead:
                return self._result(req)
        self._run_batch()
        return self._result(req)

    @staticmethod
    def _result(req: _Request) -> np.ndarray:
        if req.error is not None:
            raise req.error
        assert req.vector is not None
        return req.vector

    def _encode(self, texts: list[str]) -> np.ndarray:
        if hasattr(self.embedder, "encode_queries"):
            return self.embedder.encode_queries(texts)
        return self.embedder.encode(texts, kind="query")

    def _run_batch(self) -> None:
        with self._lock:
            batch = self._queue[: self.max_batch]
            del self._queue[: self.max_batch]
        try:
            vectors = np.asarray(self._encode([r.query for r in batch]))
            if len(vectors) != len(batch):
                raise RuntimeError(f"the embedder returned {len(vectors)} vectors for {len(batch)} queries")
            for r, v in zip(batch, vectors, strict=True):
                r.vector = v
        except BaseException as exc:  # every caller of this batch fails with it
            for r in batch:
                r.error = exc
        with self._lock:
            self.batches += 1
            self.encoded += len(batch)
            nxt = self._queue[0] if self._queue else None
            if nxt is None:
                self._busy = False
            else:
                nxt.lead = True  # the next leader encodes what queued meanwhile (its own query included)
        for r in batch:
            r.done.set()
        if nxt is not None:
            nxt.done.set()
