"""stale_version_hit_rate@K: the right document came back, but not in the pinned version.

Per query (over queries with at least one pinned gold doc): ``1`` if some pinned gold doc appears
in top K with a ``version_id`` that differs from its pin (older or newer), else ``0``.

Edge cases:
* no pinned gold: undefined (``None``), excluded (same denominator as ``version_exact_hit_rate``).
* a result without ``version_id``: not stale (nothing says the version is wrong).
* empty run / errored / missing query: 0.
* duplicate chunks of one file: the first occurrence represents the document.
* ties: not re-sorted. Fewer results than K: as returned.

A query can be both an exact hit (another gold doc matched) and stale. No external reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drivebench.evaluator.metrics.version_exact import Result, first_results


def stale_version_hit(results: Sequence[Result], pins: Mapping[str, str | None], k: int) -> float | None:
    if not any(v is not None for v in pins.values()):
        return None
    for doc, version in first_results(results, k).items():
        pin = pins.get(doc)
        if pin is not None and version is not None and version != pin:
            return 1.0
    return 0.0
