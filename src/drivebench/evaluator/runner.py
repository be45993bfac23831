"""Run an eval set against a target: bounded concurrency, retries with backoff, timeouts, latency.

Each query becomes one ``RunRecord``. 429 and 5xx answers, timeouts and connection errors are
retried with exponential backoff and full jitter (seeded), honouring ``Retry-After``; after the last
attempt the query is recorded with ``error`` and ``error_kind`` (a failed query, never a result). Latency is the wall time
of the attempt that succeeded.

``RunConfig.mode``: ``"recall"`` calls ``target.recall``; ``"answer"`` calls ``target.answer`` (the
recall results plus a generated ``answer`` with citations, stored in the run record's ``answer``).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
) -> list[RunRecord]:
    """Records in eval-set order."""
    sem = asyncio.Semaphore(max(1, cfg.concurrency))
    rng = random.Random(cfg.seed)

    async def guarded(q: EvalQuery) -> RunRecord:
        async with sem:
            rec = await _one(target, q, cfg, rng)
        if progress is not None:
            progress()
        return rec

    return list(await asyncio.gather(*(guarded(q) for q in queries)))
