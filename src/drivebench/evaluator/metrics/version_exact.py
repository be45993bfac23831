"""version_exact_hit_rate@K: the right document *in the right version*.

A gold doc may pin a ``version_id``. Per query (over queries with at least one pinned gold doc):
``1`` if some gold doc is in top K and, when pinned, its result carries exactly the pinned
``version_id``; else ``0``. Unpinned gold docs of the same query hit on doc id alone.

Edge cases:
* no pinned gold (or no gold): undefined (``None``), excluded; ``counts.version_pinned`` says how
  many queries are defined. ``None`` overall when no query pins a version.
* empty run / errored / missing query: 0.
* a result without ``version_id`` never matches a pin (the version is unknown).
* duplicate chunks of one file: the first occurrence represents the document (its version decides).
* ties: not re-sorted. Fewer results than K: as returned.

No external reference (trec_eval has no notion of versions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Result = tuple[str, str | None]  # (doc_id, version_id)


def first_results(results: Sequence[Result], k: int) -> dict[str, str | None]:
    """doc_id -> version_id of its first occurrence in top K."""
    out: dict[str, str | None] = {}
    for doc, version in results[:k]:
        out.setdefault(doc, version)
    return out


def version_exact_hit(results: Sequence[Result], pins: Mapping[str, str | None], k: int) -> float | None:
    """``pins``: gold doc id -> pinned version_id (``None`` = any version)."""
    if not any(v is not None for v in pins.values()):
        return None
    for doc, version in first_results(results, k).items():
        if doc in pins and (pins[doc] is None or pins[doc] == version):
            return 1.0
    return 0.0


def any_batch(flags: np.ndarray, k: int) -> np.ndarray:
    """Per-query "some flagged slot in top K" from a ``(queries, depth)`` boolean matrix."""
    return np.asarray(flags[:, :k].any(axis=1), dtype=np.float64)
