"""answer_fact_recall and claim_support: whether the answer states the eval set's answer facts, and cites them.

Judged without an LLM, deterministically: the answer and each fact are normalised
(``drivebench.evaluator.fact_text``: full-width/half-width, case, whitespace, numbers with thousands
separators, 万/亿, amounts with 元/¥/RMB/$, percentages, dates as 2026-03-05 / 2026年3月5日 / 3月5日 /
March 5, 2026 / 05/03) and a fact is *stated* when its normal form is in the answer's.

Formulas, over queries whose eval-set entry has ``answer_facts`` (``F(q)``, distinct facts)::

    answer_fact_recall = mean_q |{f ∈ F(q): f stated in the answer}| / |F(q)|
    claim_support      = mean_q |{f ∈ F(q): f stated in a cited statement}| / |{f ∈ F(q): f stated}|
                         (over the queries whose answer states at least one fact)

A *statement* is answer text up to a group of citation markers, which cite it
(``citations.cited_statements``); a fact stated only in text no marker resolves for is unsupported.
The evaluator reads no document text: a statement citing the wrong document still supports its fact
(``citation_precision`` is what measures the wrong document).

Edge cases:
* the eval set has no ``answer_facts`` at all, or the run has no ``answer`` at all: both ``None``
  ("not measured"), never 0.
* a query without facts: excluded (not in either denominator).
* an errored or missing query, or a record without an answer: states nothing, recall 0, still counted;
  it is left out of claim_support.
* a query whose answer states no fact: excluded from claim_support (support of no claim is undefined);
  ``None`` when that is every query.
* a fact listed twice counts once; a fact that normalises to nothing is dropped.

No external reference (ragas' faithfulness and answer correctness use an LLM judge).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from drivebench.evaluator.citations import Statement
from drivebench.evaluator.fact_text import fact_forms, normalise, stated


def distinct_facts(facts: Iterable[str]) -> list[str]:
    """The facts that can be judged: de-duplicated by normal form, empty ones dropped, in order."""
    out: dict[str, str] = {}
    for fact in facts:
        forms = fact_forms(fact)
        if forms:
            out.setdefault(forms[0], fact)
    return list(out.values())


def fact_counts(facts: Sequence[str], statements: Sequence[Statement]) -> tuple[int, int, int]:
    """``(facts, stated, supported)`` for one answer cut into ``statements``."""
    judged = distinct_facts(facts)
    texts = [(normalise(s.text), bool(s.cited)) for s in statements]
    whole = "".join(t for t, _ in texts)
    n_stated = n_supported = 0
    for fact in judged:
        if stated(fact, whole) or any(stated(fact, t) for t, _ in texts):
            n_stated += 1
            n_supported += any(cited and stated(fact, t) for t, cited in texts)
    return len(judged), n_stated, n_supported


def answer_fact_recall(facts: Sequence[str], statements: Sequence[Statement]) -> float | None:
    """Per-query recall; ``None`` without facts."""
    n, found, _ = fact_counts(facts, statements)
    return found / n if n else None


def claim_support(facts: Sequence[str], statements: Sequence[Statement]) -> float | None:
    """Per-query support; ``None`` when the answer states none of the facts."""
    _, found, supported = fact_counts(facts, statements)
    return supported / found if found else None
