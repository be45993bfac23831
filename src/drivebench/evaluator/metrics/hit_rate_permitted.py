"""hit_rate_permitted@K: hit rate against the gold the principal may actually see, refusals included.

Formula, per query, with ``permitted = {g ∈ gold : may_preview(q, g)}``:

* ``permitted ≠ ∅``: 1 if some permitted gold doc is in top K, else 0 (a forbidden gold doc
  retrieved is not a hit: it should not have been shown);
* ``permitted = ∅`` and (``gold ≠ ∅`` or ``forbidden ≠ ∅``): a **refusal** query (everything
  relevant is forbidden); correct (1) when no result in top K is non-previewable, else 0;
* no gold and no ``forbidden``: undefined (``None``), excluded like every gold-based metric.

Reported as the mean over defined queries; refusals are counted (``counts.refusals``).

Edge cases:
* errored / missing query: 0, refusals included (an error counts as a miss whatever the kind).
* empty result list from a successful call: 0 for ordinary queries, 1 (a correct refusal) for
  refusals.
* ties: not re-sorted. Duplicate chunks: a doc counts once. Fewer results than K: as returned.
* no oracle: ``None`` (build one with ``oracle_from_evalset``).

No external reference (no public evaluator knows permissions).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from drivebench.evaluator.metrics.hit_rate import hit_rate_batch
from drivebench.evaluator.metrics.leak_rate import leak_batch


def hit_rate_permitted(
    ranked: Sequence[str],
    gold: Collection[str],
    forbidden: Collection[str],
    previewable: Callable[[str], bool],
    k: int,
    *,
    ok: bool = True,
) -> float | None:
    """``ok=False`` for an errored or missing query (scores 0 when defined)."""
    permitted = {g for g in gold if previewable(g)}
    if not permitted and not gold and not forbidden:
        return None
    if not ok:
        return 0.0
    if permitted:
        return 1.0 if permitted.intersection(ranked[:k]) else 0.0
    return 0.0 if any(not previewable(d) for d in ranked[:k]) else 1.0


def hit_rate_permitted_batch(
    permitted_gains: np.ndarray, denied: np.ndarray, refusal: np.ndarray, ok: np.ndarray, k: int
) -> np.ndarray:
    """Rows: ``refusal`` and ``ok`` are boolean per-query vectors; undefined rows are masked by the caller."""
    refused_right = 1.0 - leak_batch(denied, k)
    return np.where(ok, np.where(refusal, refused_right, hit_rate_batch(permitted_gains, k)), 0.0)
