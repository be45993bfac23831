"""latency_ms_p50 / p95 / p99.

Formula: numpy ``percentile`` (linear interpolation between closest ranks) of ``latency_ms`` over
every run record of an eval-set query that carries a latency.

Edge cases:
* errored / timed-out records count with the latency they report (time to the error).
* missing queries and records without ``latency_ms`` are left out (nothing was measured).
* no latency at all: ``None``.
* ranking, ties, duplicates, gold: irrelevant.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

PERCENTILES: tuple[int, ...] = (50, 95, 99)


def latency_percentiles(latencies_ms: Iterable[float | None]) -> dict[str, float | None]:
    v = np.array([x for x in latencies_ms if x is not None], dtype=np.float64)
    return {f"latency_ms_p{p}": float(np.percentile(v, p)) if len(v) else None for p in PERCENTILES}
