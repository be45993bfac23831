"""Run an eval set against a target: bounded concurrency, retries with backoff, timeouts, latency.

Each query becomes one ``RunRecord``. 429 and 5xx answers, timeouts and connection errors are
retried with exponential backoff and full jitter (seeded), honouring ``Retry-After``; after the last
attempt the query is recorded with ``error`` and ``error_kind`` (a failed query, never a result). Latency is the wall time
of the attempt that succeeded.

``RunConfig.mode``: ``"recall"`` calls ``target.recall``; ``"answer"`` calls ``target.answer`` (the
recall results plus a generated ``answer`` with citations, stored in the run record's ``answer``).

An ``Interrupt`` (set by ``eval run``'s Ctrl-C handler) stops a run early: no new query is sent, the requests in
flight may finish for ``grace_s`` seconds and are then cancelled; ``run_queries`` returns the records of the queries
answered by then (a partial run). ``on_record`` sees each record as it arrives (``eval run`` appends it to run.jsonl,
so even a killed process keeps what was answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from drivebench.formats.evalset import EvalQuery, RunRecord
from drivebench.formats.target import Target, TargetError


@dataclass(frozen=True)
class RunConfig:
    top_k: int = 10
    concurrency: int = 8
    attempts: int = 4
    backoff_base: float = 0.1
    backoff_max: float = 5.0
    seed: int = 0
    mode: str = "recall"  # "recall" or "answer"

    def __post_init__(self) -> None:
        if self.mode not in ("recall", "answer"):
            raise ValueError(f"mode must be 'recall' or 'answer', got {self.mode!r}")


class Interrupt:
    """A request to stop a run early, safe to trigger from a signal handler or another thread: the run sends no new
    query, lets the requests in flight finish for up to ``grace_s`` seconds, then cancels them."""

    def __init__(self, grace_s: float = 5.0) -> None:
        self.grace_s = grace_s
        self.signal: str | None = None  # what stopped the run: "SIGINT", "SIGTERM", or a caller's word
        self._wakers: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def trigger(self, why: str = "SIGINT") -> None:
        with self._lock:
            if self.signal is None:
                self.signal = why
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def _watch(self, wake: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._wakers.append(wake)

        def unwatch() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._wakers.remove(wake)

        return unwatch


async def _one(target: Target, q: EvalQuery, cfg: RunConfig, rng: random.Random) -> RunRecord:
    last_error, last_kind = "not attempted", "other"
    retries = 0
    call = getattr(target, cfg.mode, None)
    if call is None:
        return RunRecord(
            query_id=q.query_id, error=f"target {target.name} has no {cfg.mode}()", error_kind="other", attempts=0
        )
    for attempt in range(1, cfg.attempts + 1):
        started = time.perf_counter()
        try:
            resp = await call(q, cfg.top_k)
        except TargetError as exc:
            last_error, last_kind = str(exc), exc.kind
            if not exc.retryable or attempt == cfg.attempts:
                return RunRecord(
                    query_id=q.query_id, error=last_error, error_kind=last_kind, attempts=attempt, retries=retries
                )
            retries += 1
            delay = exc.retry_after if exc.retry_after is not None else rng.uniform(0, cfg.backoff_base * 2**attempt)
            await asyncio.sleep(min(delay, cfg.backoff_max))
            continue
        except Exception as exc:  # a target bug must not stop the run
            return RunRecord(
                query_id=q.query_id, error=f"{type(exc).__name__}: {exc}", error_kind="other", attempts=attempt
            )
        latency = (time.perf_counter() - started) * 1000
        return RunRecord(
            query_id=q.query_id,
            results=resp.hits,
            latency_ms=round(latency, 3),
            answer=resp.answer,
            attempts=attempt,
            retries=retries,
            as_of=resp.as_of,
            snapshot=resp.snapshot,
            **({"faults": resp.faults} if resp.faults is not None else {}),  # the server's X-Drivebench-Faults
        )
    return RunRecord(
        query_id=q.query_id, error=last_error, error_kind=last_kind, attempts=cfg.attempts, retries=retries
    )


async def run_queries(
    target: Target,
    queries: Sequence[EvalQuery],
    cfg: RunConfig = RunConfig(),
    progress: Callable[[], None] | None = None,
    *,
    interrupt: Interrupt | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
) -> list[RunRecord]:
    """Records in eval-set order: one per query, or, when ``interrupt`` stopped the run, one per query answered
    (or failed) before it did. ``on_record`` is called with each record as it arrives (completion order)."""
    sem = asyncio.Semaphore(max(1, cfg.concurrency))
    rng = random.Random(cfg.seed)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def wake() -> None:  # called from the thread that saw the interrupt
        loop.call_soon_threadsafe(stop.set)

    unwatch = interrupt._watch(wake) if interrupt is not None else None
    if interrupt is not None and interrupt.requested:
        stop.set()

    async def guarded(q: EvalQuery) -> RunRecord | None:
        async with sem:
            if stop.is_set() or (interrupt is not None and interrupt.requested):  # stopping: never sent
                return None
            rec = await _one(target, q, cfg, rng)
        if on_record is not None:
            on_record(rec)
        if progress is not None:
            progress()
        return rec

    tasks = [asyncio.ensure_future(guarded(q)) for q in queries]
    stopping = asyncio.ensure_future(stop.wait())
    try:
        if tasks:
            everything = asyncio.gather(*tasks, return_exceptions=True)
            either: set[asyncio.Future[Any]] = {everything, stopping}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            pending = [t for t in tasks if not t.done()]
            if pending:  # stopped: the requests in flight may finish within the grace period, then are cancelled
                grace = interrupt.grace_s if interrupt is not None else 0.0
                _, late = await asyncio.wait(pending, timeout=grace)
                for t in late:
                    t.cancel()
                await asyncio.gather(*late, return_exceptions=True)
    finally:
        stopping.cancel()
        if unwatch is not None:
            unwatch()
    out: list[RunRecord] = []
    for t in tasks:
        if t.done() and not t.cancelled() and t.exception() is None:
            rec = t.result()
            if rec is not None:
                out.append(rec)
        elif t.done() and not t.cancelled() and (failure := t.exception()) is not None:
            raise failure  # a bug in on_record or progress: not a target failure
    return out
