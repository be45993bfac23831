"""Helpers for the vector-store tests: backend parametrisation and tie-aware ranking equality."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from drivebench.search.index.chunk_store import ChunkHit

# Every backend the permission/version/durability tests run against. milvus-lite always runs (no skip); a real
# Milvus server is added as a third backend when DRIVEBENCH_MILVUS_URI is set (e.g. http://localhost:19530;
# docs/vector-stores.md: compose profile milvus). Unset, that parameter does not exist: nothing is skipped.
SERVER_URI = os.environ.get("DRIVEBENCH_MILVUS_URI", "").strip()
BACKENDS = ["faiss", "milvus", *([f"milvus:{SERVER_URI}"] if SERVER_URI else [])]
backend_params = pytest.mark.parametrize("index", BACKENDS)

TOL = 1e-5  # FAISS and Milvus sum the same float32 products in different orders


def same_ranking(expected: Sequence[tuple[object, float]], got: Sequence[tuple[object, float]]) -> None:
    """``got`` is the ranking ``expected`` is, up to the order of equal scores: the same length, the same score
    at every rank, and the same items above the last score (items tied at the cut may differ: both are right)."""
    assert len(got) == len(expected), (len(got), len(expected))
    for rank, ((ei, es), (gi, gs)) in enumerate(zip(expected, got, strict=True), 1):
        assert abs(es - gs) <= TOL, (rank, ei, es, gi, gs)
    if not expected:
        return
    cut = expected[-1][1]
    above_e = sorted(str(i) for i, s in expected if s > cut + TOL)
    above_g = sorted(str(i) for i, s in got if s > cut + TOL)
    assert above_e == above_g


def pairs(hits: Sequence[ChunkHit]) -> list[tuple[int, float]]:
    return [(h.chunk_id, h.score) for h in hits]
