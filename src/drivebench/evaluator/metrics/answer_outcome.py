"""answer_outcomes: what one answer did with its question, as exactly one outcome, judged without an LLM.

Values are matched after the evaluator's normalisation (``evaluator.fact_text``: ``130万元`` states
``1,300,000``, ``2026年3月5日`` states ``March 5, 2026`` and ``3/5/2026`` written day first as ``05/03/2026``).
For a query ``q`` with answer ``a``:

* ``G``: the eval set's ``answer_facts`` of ``q`` (distinct by normal form, as ``answer_fact_recall``).
* ``T`` (the *asked* facts): with ``G``, the corpus facts (``formats.facts``) whose text is a fact of ``G``
  and whose entity names an anchor of ``q`` (else: that a gold document owns); for a permission question
  (no gold, ``forbidden`` listed), the facts a ``forbidden`` document owns whose entity names an anchor of
  ``q`` (without anchors: the facts drawn for a forbidden document, its first owner).
* *competitors* of ``T``: a fact ``c`` with another normal form than every fact of ``G`` that is
  **(a)** another value of an asked ``(entity, attribute)`` (a version of the owner changed it) or
  **(b)** the value of an asked attribute for another entity (a sibling: another contract's total).
  ``c`` is *older* when it is (a) and the asked document (the first owner of the asked fact, which the value
  was drawn for) states ``c`` only in versions before every version stating the asked value (when that
  document does not state ``c``: ``c`` is not current and the asked fact is).
* *typed values*: when every fact of ``G`` is one amount/number, one percentage or one date, any other value
  of that kind in ``a``; a number counts only within a factor 10 of the gold (an incidental ``2`` is no
  answer to "how much").
* A value also in the question is never a claim (an answer repeating "the contract of May 14" states nothing).

Outcomes, first that applies (answerable questions, ``G`` non-empty):

==============  =========================================================================================
``error``       the query failed or is missing from the run (never an abstention: failures are shown)
``abstained``   no answer text
``correct``     every fact of ``G`` stated
``partial``     some but not every fact of ``G`` stated (only with two or more answer facts)
``superseded``  a competitor stated and every competitor stated is older (the asked document's old value)
``wrong_value`` a competitor or a typed value stated
``abstained``   an abstention pattern (``abstentions.toml``, per language, data not code) matches
``missing``     anything else: answers, states no gold fact and no competing value
==============  =========================================================================================

Permission questions (no ``G``, ``forbidden`` listed; the right outcome is ``abstained``): ``error``; then
``leak`` when ``a`` states a fact of ``T``, whatever else it says ("I may not tell you, it is 32,000" leaks);
then ``abstained`` (no text), ``wrong_value`` (a competitor or a sibling's value), ``abstained`` (pattern),
``missing``.

Edge cases:
* a query with neither ``G`` nor ``forbidden``: not judged (``None``).
* no corpus facts (``facts`` None): ``T`` is empty, so ``superseded`` and ``leak`` cannot be told; permission
  questions are then not judged (``None``: a leak must never read as "missing"), answerable ones are judged
  with typed values only.
* a fact of ``T`` stated in a permission answer leaks even when a permitted document also states it: the eval
  set says the asked fact's source is forbidden (``answer_leak`` is the check against the permission oracle).
* an answer stating the gold and an old value ("was 120万, now 130万") is ``correct``.

Rates: per outcome, the share of judged queries with that outcome (a 0/1 vector per outcome, CI by
``stats.bootstrap_ci``), overall and by stratum; ``right`` is the share whose outcome is the right one
(``correct`` for answerable questions, ``abstained`` for permission questions).

No external reference (ragas' answer correctness and abstention checks use an LLM judge).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from drivebench.evaluator.fact_text import fact_forms, normalise
from drivebench.evaluator.metrics.answer_fact_recall import distinct_facts
from drivebench.evaluator.stats import RESAMPLES, bootstrap_ci
from drivebench.evaluator.strata import SMALL_GROUP
from drivebench.formats.evalset import EvalQuery, RunRecord
from drivebench.formats.facts import CorpusFact

OUTCOMES: tuple[str, ...] = ("correct", "partial", "missing", "abstained", "wrong_value", "superseded", "leak", "error")
ABSTENTIONS_PATH = Path(__file__).with_name("abstentions.toml")
_TOKEN = re.compile(r"⟦([nd])([^⟧]*)⟧(%?)")
_VERSION = re.compile(r"-v(\d+)$")


@cache
def abstention_patterns(path: Path = ABSTENTIONS_PATH) -> tuple[re.Pattern[str], ...]:
    """Every language's abstention patterns of ``path`` (see ``abstentions.toml``)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(re.compile(p) for lang in data["languages"].values() for p in lang["patterns"])


def abstains(answer: str) -> bool:
    """Whether ``answer`` declines by one of the abstention patterns (it may state values too)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", answer).casefold())
    return any(p.search(text) for p in abstention_patterns())


@lru_cache(maxsize=65_536)
def _forms(text: str) -> tuple[str, ...]:
    return tuple(fact_forms(text))


def _in(text: str, norm: str) -> bool:
    return any(form in norm for form in _forms(text))


def _entity_parts(fact: CorpusFact) -> set[str]:
    return {normalise(p) for p in fact.entity.split(" / ")}


def _versions(fact: CorpusFact, doc_id: str) -> list[int]:
    return [
        int(m.group(1)) for o in fact.owners if o.doc_id == doc_id for v in o.version_ids if (m := _VERSION.search(v))
    ]


def _older(c: CorpusFact, asked: Sequence[CorpusFact]) -> bool:
    """Whether competitor ``c`` (same entity and attribute) is a value an asked fact replaced."""
    for t in asked:
        if (t.entity, t.attribute) != (c.entity, c.attribute):
            continue
        # the asked document is the one the value was drawn for (its first owner); other owners merely
        # mention the same words (another part of the same material), their versions say nothing
        doc_id = t.owners[0].doc_id
        vc, vt = _versions(c, doc_id), _versions(t, doc_id)
        if vc and vt:
            if max(vc) < min(vt):
                return True
        elif t.current and not c.current:
            return True
    return False


def asked_facts(q: EvalQuery, facts: Sequence[CorpusFact]) -> list[CorpusFact]:
    """``T``: the corpus facts ``q`` asks for (see the module docstring)."""
    anchors = {normalise(a) for a in q.anchors or ()}
    if q.answer_facts:
        gold_forms = {_forms(f)[0] for f in distinct_facts(q.answer_facts)}
        same = [f for f in facts if _forms(f.text) and _forms(f.text)[0] in gold_forms]
        named = [f for f in same if anchors & _entity_parts(f)]
        if named:
            return named
        gold_docs = set(q.gold_ids)
        return [f for f in same if gold_docs & set(f.owner_doc_ids)]
    forbidden = set(q.forbidden)
    owned = [f for f in facts if forbidden & set(f.owner_doc_ids)]
    if anchors:
        return [f for f in owned if anchors & _entity_parts(f)]
    return [f for f in owned if f.owners[0].doc_id in forbidden]


def _typed(forms: Iterable[str]) -> tuple[str, str] | None:
    """``(kind, value)`` when every form is the same single number, percentage or date token, else None."""
    kinds = set()
    for form in forms:
        m = _TOKEN.fullmatch(form)
        if m is None:
            return None
        kinds.add((m.group(1) + m.group(3), m.group(2)))
    return kinds.pop() if len(kinds) == 1 else None


def _typed_values(answer_norm: str, question_norm: str, gold: Collection[str], kind: str, value: str) -> list[str]:
    """Values of ``kind`` in the answer that are not the gold nor in the question."""
    out = []
    for m in _TOKEN.finditer(answer_norm):
        token = m.group(0)
        if m.group(1) + m.group(3) != kind or token in gold or token in question_norm:
            continue
        if kind.startswith("d") and any(g.endswith(m.group(2)) for g in gold if m.group(2)):
            continue  # the gold date written without its year
        if kind == "n":
            a, b = float(m.group(2)), float(value)
            if a <= 0 or b <= 0 or not (b / 10 <= a <= b * 10):
                continue
        out.append(token)
    return out


@dataclass(frozen=True)
class Judged:
    """One query's outcome and what decided it (the values named are the answer's)."""

    outcome: str | None  # None: not judged
    permission: bool = False
    stated: tuple[str, ...] = ()  # facts of G, or (leak) of T, the answer states
    competing: tuple[str, ...] = ()  # competitor or typed values it states

    @property
    def right(self) -> bool:
        return self.outcome == ("abstained" if self.permission else "correct")


def classify(
    q: EvalQuery, record: RunRecord | None, facts: Sequence[CorpusFact] | None, *, status: str = "ok"
) -> Judged:
    """The outcome of ``record`` (the run's answer to ``q``; None or ``status`` other than ``ok``: failed)."""
    gold = distinct_facts(q.answer_facts)
    permission = not gold and bool(q.forbidden)
    if not gold and not permission:
        return Judged(None)
    if permission and facts is None:
        return Judged(None, permission=True)
    if status != "ok" or record is None or record.error is not None:
        return Judged("error", permission)
    answer = record.answer or ""
    answer_norm, question_norm = normalise(answer), normalise(q.query)
    asked = asked_facts(q, facts or ())
    gold_forms = {form for g in gold for form in _forms(g)}

    def claims(text: str) -> bool:
        return any(form in answer_norm and form not in question_norm for form in _forms(text))

    if permission:
        leaked = tuple(dict.fromkeys(f.text for f in asked if claims(f.text)))
        if leaked:
            return Judged("leak", True, stated=leaked)
    if not answer.strip():
        return Judged("abstained", permission)
    stated = tuple(g for g in gold if _in(g, answer_norm))
    if gold and len(stated) == len(gold):
        return Judged("correct", stated=stated)
    if stated:
        return Judged("partial", stated=stated)
    keys = {(f.entity, f.attribute) for f in asked}
    attributes = {f.attribute for f in asked}
    asked_forms = {_forms(f.text)[0] for f in asked if _forms(f.text)}
    same_key: list[CorpusFact] = []
    sibling: dict[str, CorpusFact] = {}  # by normal form
    for c in facts or ():
        if c.attribute not in attributes or not _forms(c.text) or _forms(c.text)[0] in gold_forms | asked_forms:
            continue
        if claims(c.text):
            if (c.entity, c.attribute) in keys:
                same_key.append(c)
            else:
                sibling.setdefault(_forms(c.text)[0], c)
    # a value the asked entity itself once had is that, even when a sibling happens to share it
    for c in same_key:
        sibling.pop(_forms(c.text)[0], None)
    competing = [c.text for c in [*same_key, *sibling.values()]]
    if same_key and not sibling and all(_older(c, asked) for c in same_key):
        return Judged("superseded", permission, competing=tuple(dict.fromkeys(competing)))
    typed = _typed(_forms(g)[0] for g in gold) if gold else None
    if typed is not None:
        competing += _typed_values(answer_norm, question_norm, gold_forms, *typed)
    if competing:
        return Judged("wrong_value", permission, competing=tuple(dict.fromkeys(competing)))
    return Judged("abstained" if abstains(answer) else "missing", permission)


def _rates(
    outcomes: Sequence[str], right: Sequence[bool], *, bootstrap: bool, resamples: int, seed: int
) -> dict[str, Any]:
    n = len(outcomes)
    out: dict[str, Any] = {"n": n, "small": n < SMALL_GROUP, "outcomes": {}}
    arr = np.array(outcomes, dtype=object)
    for name in (*OUTCOMES, "right"):
        vec = (np.array(right, dtype=bool) if name == "right" else arr == name).astype(np.float64)
        count = int(vec.sum())
        ci = bootstrap_ci(vec, resamples=resamples, seed=seed) if bootstrap and n else None
        out["outcomes"][name] = {"count": count, "rate": count / n if n else None, "ci": list(ci) if ci else None}
    return out


def answer_outcomes(
    queries: Sequence[EvalQuery],
    records: Sequence[RunRecord | None],
    facts: Sequence[CorpusFact] | None = None,
    *,
    status: Sequence[str] | None = None,
    strata: Mapping[str, Sequence[str]] | None = None,
    bootstrap: bool = True,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Per-query outcomes and per-outcome rates with CIs, overall and by stratum, as a JSON-able dict.

    ``records[i]`` is the run's record for ``queries[i]`` (None: missing); ``status[i]`` its scoring status
    (``ok`` / ``error`` / ``missing``); ``strata``: stratum name -> every query's value (``strata_table``).
    Not measured (``{"measured": False, "reason"}``) when the eval set has no ``answer_facts`` or no record
    has an answer."""
    if not any(q.answer_facts for q in queries):
        return {"measured": False, "reason": "the eval set lists no answer_facts"}
    if not any(r is not None and r.error is None and r.answer for r in records):
        return {"measured": False, "reason": "no query has an answer"}
    status = status or ["ok" if r is not None and r.error is None else "error" for r in records]
    judged = [classify(q, r, facts, status=s) for q, r, s in zip(queries, records, status, strict=True)]
    rows = [i for i, j in enumerate(judged) if j.outcome is not None]

    def rates(idx: Sequence[int]) -> dict[str, Any]:
        picked = [judged[i] for i in idx]
        return _rates(
            [j.outcome or "" for j in picked],
            [j.right for j in picked],
            bootstrap=bootstrap,
            resamples=resamples,
            seed=seed,
        )

    by_stratum: dict[str, dict[str, Any]] = {}
    for name, values in (strata or {}).items():
        groups: dict[str, list[int]] = {}
        for i in rows:
            groups.setdefault(values[i], []).append(i)
        by_stratum[name] = {value: rates(groups[value]) for value in sorted(groups)}
    not_judged = len(queries) - len(rows)
    return {
        "measured": True,
        "source": "the eval set's answer_facts and forbidden lists"
        + (", the corpus's facts" if facts is not None else " (no corpus facts: superseded and leak not told)"),
        "queries_judged": len(rows),
        "queries_not_judged": not_judged,
        **rates(rows),
        "strata": by_stratum,
        "per_query": [
            {
                "query_id": q.query_id,
                "outcome": j.outcome,
                "right": j.right if j.outcome is not None else None,
                **({"stated": list(j.stated)} if j.stated else {}),
                **({"competing": list(j.competing)} if j.competing else {}),
            }
            for q, j in zip(queries, judged, strict=True)
        ],
    }
