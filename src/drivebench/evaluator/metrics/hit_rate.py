"""hit_rate@K (a.k.a. success@K, Hit@K).

Formula: ``hit_rate@K(q) = 1 if {top-K results of q} ∩ gold(q) ≠ ∅ else 0``; the reported value is the
mean over every query of the eval set that has gold.

Edge cases:
* empty run / errored / missing query: 0.
* no gold: undefined (``None``), excluded from the mean and counted as ``no_gold``.
* ties: not re-sorted, the list is scored as returned.
* duplicate chunks of one file: irrelevant for a hit (any occurrence in top K is a hit).
* fewer results than K: only the results present are looked at.

Equals trec_eval ``success.K`` (pytrec_eval ``success_K``) and ranx ``hit_rate@K`` when scores are distinct.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np


def hit_rate(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    if not gold:
        return None
    return 1.0 if any(doc in gold for doc in ranked[:k]) else 0.0


def hit_rate_batch(gains: np.ndarray, k: int) -> np.ndarray:
    """Per-query hit@K from a ``(queries, depth)`` gain matrix (gain > 0 = first occurrence of a gold doc)."""
    return np.asarray((gains[:, :k] > 0).any(axis=1), dtype=np.float64)
