"""ndcg@K (normalised discounted cumulative gain, cut at K), binary or graded.

Formula::

    DCG@K  = Σ_{i=1..K} gain_i / log2(i + 1)
    gain_i = grade of the document at rank i if it is gold and this is its first occurrence, else 0
    IDCG@K = the same sum over the JUDGED gold grades sorted descending (never the retrieved list)
    ndcg@K = DCG@K / IDCG@K

With every grade 1 this is binary nDCG. Reported as the mean over queries with gold.

Edge cases:
* empty run / errored / missing query: 0.
* no gold: undefined (``None``, IDCG = 0), excluded and counted as ``no_gold``.
* ties: not re-sorted; rank = order returned.
* duplicate chunks of one file: gain only at the first occurrence, so DCG ≤ IDCG and ndcg ≤ 1.
* fewer results than K: missing slots have gain 0; IDCG still uses min(K, |gold|) judged grades,
  so a short list is penalised (the MLflow #24541 / LlamaIndex #17070 bug of building IDCG from the
  retrieved list cannot happen).

Equals trec_eval ``ndcg_cut.K`` (pytrec_eval ``ndcg_cut_K``: gain = relevance grade, discount log2(rank + 1)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from drivebench.evaluator.metrics._common import gains as _gains


def ndcg(ranked: Sequence[str], grades: Mapping[str, float], k: int) -> float | None:
    """``grades``: gold doc id -> grade (≥ 1)."""
    if not grades:
        return None
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(_gains(ranked, grades, k), 1) if g)
    ideal = sorted((float(g) for g in grades.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg


def discounts(depth: int) -> np.ndarray:
    """``1 / log2(i + 1)`` for ranks i = 1..depth."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def ndcg_batch(gains: np.ndarray, ideal: np.ndarray, k: int) -> np.ndarray:
    """Per-query ndcg@K from the gain matrix and the ideal matrix (gold grades sorted descending, 0-padded)."""
    kg, ki = min(k, gains.shape[1]), min(k, ideal.shape[1])
    dcg = gains[:, :kg] @ discounts(kg)
    idcg = ideal[:, :ki] @ discounts(ki)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), np.nan)
