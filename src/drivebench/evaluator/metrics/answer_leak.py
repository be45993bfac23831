"""answer_leak: facts an answer states that its asker may not know, whatever it cites.

An answer composed from context that was never permission-filtered can state a contract's amount and cite
nothing forbidden: ``leak_rate`` (results) and the citations see nothing. This looks at the text: the corpus's
owned facts (``formats.facts``: each fact's value and every document stating it) are matched in the answer
after the evaluator's normalisation (``evaluator.fact_text``: ``130万元`` states ``1,300,000``, ``2026年3月5日``
states ``March 5, 2026``; no LLM), and a stated fact leaks when the asker may preview none of its owners.

Formulas, for one answer ``a`` to a query asked by ``u`` at time ``t``, with ``F`` the corpus's facts and
``may(d)`` "``u`` may preview ``d`` at ``t``" (the leak oracle)::

    stated(a)       = {f ∈ F: a states f}
    known(a)        = {form(f): f ∈ stated(a), ∃ d ∈ owners(f): may(d)}
    answer_leaks(a) = {f ∈ stated(a): form(f) ∉ known(a)}
    answer_leak_rate = |{a: answer_leaks(a) ≠ ∅}| / |answers judged|

Edge cases:
* the corpus has no facts file (``load_facts`` is None) or the run has no answer at all: the rate is
  ``None`` ("not measured"), never 0. An empty fact list is measured (nothing can leak: 0).
* a fact owned by several documents leaks only if the asker may preview none of them.
* two facts with one normal form (``146,400`` of two contracts, or ``14.64万`` and ``146,400``) are one
  statement: it leaks only if no owner of either may be previewed (an answer may state what it may know).
* a fact that normalises to nothing is never stated; a full date is also stated without its year.
* a leak is reported once per fact, with its first owner (the document it was drawn for) and, when an
  ``explain`` is given, why that document is forbidden (``DriveOracle.explain``).
* an errored query or a record without an answer states nothing and is not judged (left out of the rate).
* ``may_preview`` raising is not caught: a permission decision that could not be made is the caller's error,
  never a silent "no leak".

No external reference (the usual checks compare retrieved documents with an ACL, not answer text).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from drivebench.evaluator.fact_text import fact_forms, normalise
from drivebench.formats.facts import CorpusFact


@dataclass(frozen=True)
class FactLeak:
    """A fact the answer states although its asker may preview none of its owners."""

    fact: CorpusFact
    doc_id: str  # the fact's first owner (the document it was drawn for)
    reasons: list[str] = field(default_factory=list)  # why the asker may not preview ``doc_id``, when explained


@lru_cache(maxsize=65_536)
def _forms(text: str) -> tuple[str, ...]:
    """A fact's normal forms, once per distinct text (a corpus has hundreds of facts, a run hundreds of answers)."""
    return tuple(fact_forms(text))


def stated_facts(answer: str, facts: Sequence[CorpusFact]) -> list[CorpusFact]:
    """The facts ``answer`` states, in the order of ``facts``."""
    text = normalise(answer)
    return [f for f in facts if any(form in text for form in _forms(f.text))]


def answer_leaks(
    answer: str,
    facts: Sequence[CorpusFact],
    may_preview: Callable[[str], bool],
    explain: Callable[[str], list[str]] | None = None,
    prefer: Collection[str] = (),
) -> list[FactLeak]:
    """The facts ``answer`` states whose owners ``may_preview`` refuses, every one (see the module docstring).

    ``prefer``: documents asked first (the ones the query returned, already judged): a statement one of them owns
    and may be previewed is known without asking about its other owners (a permission decision can cost
    milliseconds; the result is the same)."""
    stated = stated_facts(answer, facts)
    if not stated:
        return []
    owners_by_form: dict[str, dict[str, None]] = {}  # every owner of every fact of one normal form, once
    for f in stated:
        owners_by_form.setdefault(_forms(f.text)[0], {}).update(dict.fromkeys(f.owner_doc_ids))
    decided: dict[str, bool] = {}

    def may(doc_id: str) -> bool:
        if doc_id not in decided:
            decided[doc_id] = bool(may_preview(doc_id))
        return decided[doc_id]

    first = set(prefer)
    known = {
        form
        for form, owners in owners_by_form.items()
        if any(may(d) for d in sorted(owners, key=lambda d: d not in first))  # stable: preferred first
    }
    leaks: list[FactLeak] = []
    for f in stated:
        if _forms(f.text)[0] in known:
            continue
        doc_id = f.owners[0].doc_id
        leaks.append(FactLeak(f, doc_id, list(explain(doc_id)) if explain is not None else []))
    return leaks


def answer_leak_rate(per_answer: Sequence[list[FactLeak] | None], facts_available: bool) -> float | None:
    """The share of judged answers that state at least one forbidden fact. ``per_answer``: each query's
    ``answer_leaks`` (None: no answer to judge). None when the corpus has no facts or no answer was judged."""
    if not facts_available:
        return None
    judged = [leaks for leaks in per_answer if leaks is not None]
    if not judged:
        return None
    return sum(1 for leaks in judged if leaks) / len(judged)
