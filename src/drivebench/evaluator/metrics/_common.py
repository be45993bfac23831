"""Conventions shared by every rank-based metric, and the helpers that implement them.

* **rank = order returned.** Rank *i* (1-based) is the *i*-th result as the system returned it.
  Ties in ``score`` are never re-sorted; the list is scored as returned (the ``score`` and
  ``rank`` fields a system attaches to its results are not read).
* **Several results for one document count once, at their first (best) rank.** Later copies
  (other chunks of the same file) still occupy their slots, so they push other documents down,
  but they score nothing. Hence recall can never exceed 1.
* **Fewer results than K** is the same as padding with non-relevant results.
* **Errored / timed-out queries** are scored as an empty ranking (every metric 0) by the
  orchestrator and reported in a count; results attached to an errored record are ignored.
* **Queries missing from the run** are scored as an empty ranking (0) and counted; they stay in
  every denominator.
* **Duplicate gold entries** for one document: the first entry (its grade, its version pin) wins.
* **Queries without gold** make gold-based metrics undefined: the scalar functions return
  ``None`` and the orchestrator excludes them from those metrics (and counts them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np


def first_ranks(ranked: Sequence[str], depth: int | None = None) -> dict[str, int]:
    """Map each document to the 1-based rank of its first occurrence within the first ``depth`` results."""
    ranks: dict[str, int] = {}
    for i, doc in enumerate(ranked[:depth] if depth is not None else ranked, 1):
        ranks.setdefault(doc, i)
    return ranks


def gains(ranked: Sequence[str], grades: Mapping[str, float], k: int) -> list[float]:
    """Gain of each of the first ``k`` slots: the grade of a gold document at its first occurrence, else 0."""
    out: list[float] = []
    seen: set[str] = set()
    for doc in ranked[:k]:
        g = grades.get(doc, 0.0)
        if g and doc not in seen:
            seen.add(doc)
            out.append(float(g))
        else:
            out.append(0.0)
    return out


def grade_map(gold: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Gold ``(doc_id, grade)`` pairs -> dict; the first entry of a duplicated doc wins."""
    out: dict[str, float] = {}
    for doc, grade in gold:
        out.setdefault(doc, float(grade))
    return out


def gain_matrix(rankings: Iterable[Sequence[str]], grade_maps: Sequence[Mapping[str, float]], width: int) -> np.ndarray:
    """``(queries, width)`` float matrix: the grade of a gold doc at its first occurrence, else 0.

    ``rankings`` yields one list of doc ids per query (only the first ``width`` are read). Queries
    that retrieved no gold doc are skipped with one set operation; only non-zero cells are written.
    """
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for qi, (ranked, grades) in enumerate(zip(rankings, grade_maps, strict=True)):
        if not grades or grades.keys().isdisjoint(ranked[:width]):
            continue
        seen: set[str] = set()
        for i, doc in enumerate(ranked[:width]):
            if doc in grades and doc not in seen and grades[doc]:
                seen.add(doc)
                rows.append(qi)
                cols.append(i)
                vals.append(grades[doc])
    out = np.zeros((len(grade_maps), width), dtype=np.float64)
    out[rows, cols] = vals
    return out


def ideal_matrix(grade_maps: Sequence[Mapping[str, float]], width: int) -> np.ndarray:
    """``(queries, width)`` matrix of each query's judged grades sorted descending, 0-padded (for IDCG)."""
    vals: list[float] = []
    lengths = np.zeros(len(grade_maps), dtype=np.int64)
    for qi, grades in enumerate(grade_maps):
        if grades:
            top = sorted(grades.values(), reverse=True)[:width]
            lengths[qi] = len(top)
            vals += top
    out = np.zeros((len(grade_maps), width), dtype=np.float64)
    rows = np.repeat(np.arange(len(grade_maps)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[rows, np.arange(len(vals)) - starts] = vals
    return out
