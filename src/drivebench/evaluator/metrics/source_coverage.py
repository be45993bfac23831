"""source_coverage (micro) and source_coverage_macro: how much of the gold the answer cites.

Formula, over queries with gold (``cited`` = distinct doc ids the answer cites, see
``drivebench.evaluator.citations``)::

    source_coverage       = Σ_q |cited(q) ∩ gold(q)| / Σ_q |gold(q)|        (micro)
    source_coverage_macro = mean_q |cited(q) ∩ gold(q)| / |gold(q)|         (macro)

Edge cases:
* the run has no ``answer`` at all: both are ``None`` (not 0): nothing was generated.
* a query whose record has no answer, an errored or a missing query: cites nothing (0), still counted.
* no gold: excluded (counted as ``no_gold``).
* the same document cited several times (several syntaxes, several chunks): counts once.
* unresolvable citations never cover anything.

Reference: ragas ``IDBasedContextRecall`` computed on cited instead of retrieved ids.
"""

from __future__ import annotations

from collections.abc import Collection


def coverage_counts(cited: Collection[str], gold: Collection[str]) -> tuple[int, int]:
    """``(|cited ∩ gold|, |gold|)`` with both sides de-duplicated."""
    gold_set = set(gold)
    return len(gold_set.intersection(cited)), len(gold_set)


def source_coverage(cited: Collection[str], gold: Collection[str]) -> float | None:
    """Per-query coverage (the macro average's term); ``None`` without gold."""
    hit, total = coverage_counts(cited, gold)
    return hit / total if total else None
