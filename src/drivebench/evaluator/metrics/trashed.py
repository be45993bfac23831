"""trashed_hit_rate@K: results that were in the recycle bin when the query was asked.

Formula: ``trashed@K(q) = 1 if some result in top K is trashed at q's time, else 0``, averaged over
**every** query of the eval set. q's time is ``q.as_of`` if given, else the catalog's clock
(``Catalog.now``); with neither, any document with a ``trashed_at`` counts as trashed. A document is
trashed at time t when ``trashed_at <= t``. Trashed items must be invisible to search.

Edge cases:
* empty run / errored / missing query: 0 (in the denominator).
* no catalog: ``None``. Documents unknown to the catalog: not trashed.
* ties: not re-sorted; duplicates of one file: any occurrence counts; fewer results than K: as returned.

No external reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def trashed_hit(ranked: Sequence[str], is_trashed: Callable[[str], bool], k: int) -> float:
    return 1.0 if any(is_trashed(d) for d in ranked[:k]) else 0.0
