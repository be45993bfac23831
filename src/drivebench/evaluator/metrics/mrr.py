"""mrr@K (mean reciprocal rank, cut at K).

Formula: ``rr@K(q) = 1 / rank of the first gold document if that rank ≤ K else 0``; reported as the
mean over queries with gold.

Edge cases:
* empty run / errored / missing query: 0.
* no gold: undefined (``None``), excluded and counted as ``no_gold``.
* ties: not re-sorted; rank = order returned.
* duplicate chunks of one file: only the first occurrence matters, which is already the best rank.
* fewer results than K: a gold doc not returned contributes 0.

Equals trec_eval ``recip_rank`` when K ≥ the length of every ranking (trec_eval has no cutoff for it;
note ir_measures' pytrec_eval provider silently drops the cutoff of ``RR@k``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np


def mrr(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    if not gold:
        return None
    for i, doc in enumerate(ranked[:k], 1):
        if doc in gold:
            return 1.0 / i
    return 0.0


def mrr_batch(gains: np.ndarray, k: int) -> np.ndarray:
    rel = gains[:, :k] > 0
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    first = rel.argmax(axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)
