"""recall@K.

Formula: ``recall@K(q) = |gold(q) ∩ distinct(top-K(q))| / |gold(q)|``; reported as the mean over queries with gold.

Edge cases:
* empty run / errored / missing query: 0.
* no gold: undefined (``None``), excluded and counted as ``no_gold``.
* ties: not re-sorted.
* duplicate chunks of one file: the document counts once (at its first rank), so recall ≤ 1
  (the TruLens #2746 bug cannot happen).
* fewer results than K: only the results present count; the denominator stays ``|gold|``.
* duplicate gold entries: de-duplicated (first entry wins).

Equals trec_eval ``recall.K`` (pytrec_eval ``recall_K``), where every gold doc has grade ≥ 1.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np


def recall(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set.intersection(ranked[:k])) / len(gold_set)


def recall_batch(gains: np.ndarray, n_gold: np.ndarray, k: int) -> np.ndarray:
    """Per-query recall@K; ``n_gold`` is the number of distinct gold docs (0 rows give NaN)."""
    found = (gains[:, :k] > 0).sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n_gold > 0, found / np.maximum(n_gold, 1), np.nan)
