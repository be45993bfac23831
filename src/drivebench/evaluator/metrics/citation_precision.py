"""citation_precision: the share of the answer's citations that name a gold document.

Formula, over queries with gold::

    citation_precision = Σ_q |cited(q) ∩ gold(q)| / Σ_q (|cited(q)| + |unresolvable(q)|)

Each non-gold citation is either ``wrong`` (resolves to a document that is not gold) or
``unresolvable`` (looks like a citation but names no known document); both lower precision.

Edge cases:
* the run has no ``answer`` at all: ``None`` (not 0).
* nothing cited anywhere (0 in the denominator): ``None``, precision of an empty set is undefined.
* no gold: the query is excluded (its citations cannot be judged).
* a document cited several times counts once; the same unresolvable text counts once.
* errored / missing queries and records without answer cite nothing.

No external reference (ragas and others judge citations with an LLM).
"""

from __future__ import annotations

from collections.abc import Collection


def citation_precision(cited: Collection[str], unresolvable: Collection[str], gold: Collection[str]) -> float | None:
    """Per-query precision; ``None`` without gold or without any citation."""
    n_cited = len(set(cited)) + len(set(unresolvable))
    if not gold or not n_cited:
        return None
    return len(set(gold).intersection(cited)) / n_cited
