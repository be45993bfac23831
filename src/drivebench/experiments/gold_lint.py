"""The gold linter: does another document the asker can read say something else about the same thing?

``lint_gold(inputs) -> dict`` is a pure function (no simulator, no files): each ``LintInput`` carries a query,
the text that sets the answer's roles (``gold_text``) and the passages of every document the asker may read
(``readable``: doc id -> passages). ``corpus_audit.audit_corpus`` fills them from the simulator: the
documents live and previewable by the query's principal at its time (``as_of`` or the corpus clock, the mask
of ``Simulator.visible_chunks``), each in its version current then, as the simulator extracted and chunked it;
``gold_text`` is the pinned gold versions' text (for a chain: the last hop's, whose document holds the answer).

For a query with ``anchors`` and ``answer_facts``, over every readable document that is not gold (any grade:
a co-gold document is gold):

* **names the anchor**: one passage holds every anchor string (whitespace-insensitive, case-insensitive for
  Latin, not inside a longer Latin code: ``PRJ-2026-0031`` does not name ``PRJ-2026-003``).
* **roles**: what each answer fact is in ``gold_text``: the words just before it in its clause
  (``corpus_audit._roles``: ``审批人：林晓峰`` -> ``审批人``), with the separator between role and value
  (a colon, a space, nothing). A fact with no role (a name alone on a line) cannot be checked. A table row of
  three or more cells (cells apart by two spaces or a tab) gives no role: the words before a cell are other
  cells, not its label.
* **contradiction**: a passage naming the anchor with a line where a gold role is followed (with the same
  separator) by a value that does not start with the answer: ``审批人：韩梅`` where gold says
  ``审批人：林晓峰``. Reported once per document, role and value, with the answer. The role is matched as a
  string: ``原审批人：韩梅`` counts (a careful reader would have to ask which of the two holds). In a table row
  of three or more cells, only a role in the first cell counts: elsewhere it is a column header.

  Passages, not the whole document, are read, both for naming the anchor and for roles: a part drawing
  whose "related documents" section names its assembly drawing (the anchor) gives its own approver in its
  title block, which is not the assembly's; a document that names a person in one section and a project in
  another is not about the pair. Nothing is lost when the anchor is in the title: every chunk the simulator
  indexes starts with its document's title and file name, so such a document names the anchor from each of
  its passages and all of its lines are read.
* **missing gold**: a document whose passages naming the anchor give every checkable answer fact in a gold
  role (same role, same separator, same value), not gold: it answers the question as well as the gold does.

A query without anchors or without answer facts, or whose facts have no role in ``gold_text``, is counted as
not linted (per reason); a permission query with no gold (only ``forbidden``) is skipped and counted apart.
When no query is linted, the counts are ``None`` (not measured): an acceptance check on them fails, never
passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from drivebench.experiments.corpus_audit import _norm, _roles
from drivebench.formats.evalset import EvalQuery

EXAMPLES = 20
_GAP = re.compile(r"[\s:：]*")
# a value ends at a clause break, a line end, or a wide gap (table cells); a comma or full stop followed by a
# digit is part of a number (369,600; 3.5)
_VALUE_END = re.compile(r"[。；;！？!?，、\n]|[,.](?!\d)|\s{2,}|\t")
_CELL = re.compile(r"\s{2,}|\t")  # table cells as the extractors lay them out
_LATIN_ALNUM = re.compile(r"[A-Za-z0-9]")
_WORD = re.compile(r"[\w\u3400-\u9fff]")


@dataclass(frozen=True)
class LintInput:
    """One query, the text that sets its answer's roles, and what its asker may read then."""

    query: EvalQuery
    gold_text: str
    readable: Mapping[str, Sequence[str]]  # doc id -> passages of the version current at the query's time


@lru_cache(maxsize=65536)
def _fold(text: str) -> str:
    """Whitespace removed, Latin case folded (CJK is unchanged by casefold)."""
    return re.sub(r"\s+", "", text).casefold()


@lru_cache(maxsize=4096)
def _loose(s: str) -> re.Pattern[str]:
    """``s`` matched with any whitespace (or none) between its characters, any case."""
    return re.compile(r"\s*".join(re.escape(ch) for ch in _norm(s)), re.IGNORECASE)


@lru_cache(maxsize=4096)
def _anchor_pattern(anchor: str) -> re.Pattern[str]:
    """``anchor`` (folded) with any whitespace between its characters, any case, and not inside a longer Latin
    word or code: ``PRJ-2026-003`` is not named by ``PRJ-2026-0031`` nor ``GW-111`` by ``GW-1110``."""
    lead = r"(?<![A-Za-z0-9])" if _LATIN_ALNUM.match(anchor[0]) else ""
    tail = r"(?![A-Za-z0-9])" if _LATIN_ALNUM.match(anchor[-1]) else ""
    return re.compile(lead + _loose(anchor).pattern + tail, re.IGNORECASE)


def _names(passage: str, anchors: list[str]) -> bool:
    """Does ``passage`` hold every (folded) anchor? The substring test first: it rules out nearly every passage."""
    folded = _fold(passage)
    return all(a in folded for a in anchors) and all(_anchor_pattern(a).search(passage) for a in anchors)


def _is_table_row(line: str) -> bool:
    """Three or more cells: the words before a cell are other cells, not its label (``v2.0  王芳  2026-09-12``
    does not make ``v2.0`` a role), and a role met past the first cell is a column header."""
    return len(_CELL.split(line.strip())) >= 3


def _gap_kind(gap: str) -> str:
    return "colon" if (":" in gap or "：" in gap) else "space" if gap else "none"


def _starts_with(rest: str, fact: str) -> bool:
    """Does ``rest`` start with ``fact`` (whitespace-insensitive, any case), not as a prefix of a longer
    Latin word or number (``Tom Lee`` is not the start of ``Tom Leeson``)?"""
    m = _loose(fact).match(rest)
    if not m:
        return False
    fact = _norm(fact)
    return not (_LATIN_ALNUM.match(fact[-1:]) and _LATIN_ALNUM.match(rest[m.end() : m.end() + 1]))


def fact_roles(gold_text: str, fact: str) -> set[tuple[str, str]]:
    """(role, separator kind) pairs of ``fact`` in ``gold_text``: ``审批人：王芳`` -> ``{("审批人", "colon")}``."""
    fact = _norm(fact)
    out: set[tuple[str, str]] = set()
    for role in _roles(gold_text, fact):
        for line in gold_text.splitlines():
            if _is_table_row(line):
                continue
            for m in _loose(role).finditer(line):
                gap = _GAP.match(line, m.end())
                assert gap is not None  # the pattern matches the empty string
                if _starts_with(line[gap.end() :], fact):
                    out.add((role, _gap_kind(gap.group(0))))
    return out


def _values(line: str, role: str, kind: str) -> Iterator[str]:
    """The rest of ``line`` after each occurrence of ``role`` followed by the separator ``kind`` and a value
    (``_cut``: the text up to a clause break)."""
    table = _is_table_row(line)
    for m in _loose(role).finditer(line):
        if table and line[: m.start()].strip():
            continue  # a column header names the role: the next cell is another column's name
        gap = _GAP.match(line, m.end())
        assert gap is not None
        if _gap_kind(gap.group(0)) != kind:
            continue
        rest = line[gap.end() :]
        if _WORD.search(_cut(rest)):
            yield rest


def _lines(passages: Sequence[str]) -> list[str]:
    """Each distinct line once (chunks overlap and each repeats its document's header)."""
    return list(dict.fromkeys(line for p in passages for line in p.splitlines() if line.strip()))


def _cut(rest: str) -> str:
    """The value at the start of ``rest``: up to a clause break, at most 40 characters."""
    end = _VALUE_END.search(rest)
    return rest[: end.start() if end else len(rest)].strip()[:40]


def lint_query(item: LintInput) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """``(status, contradictions, missing_gold)``; status ``linted``, ``permission_only``, ``no_anchors``,
    ``no_answer_facts`` or ``no_role_in_gold``."""
    q = item.query
    if not q.gold and q.forbidden:
        return "permission_only", [], []
    if not q.anchors:
        return "no_anchors", [], []
    if not q.answer_facts:
        return "no_answer_facts", [], []
    roles = {fact: fact_roles(item.gold_text, fact) for fact in q.answer_facts}
    roles = {f: r for f, r in roles.items() if r}
    if not roles:
        return "no_role_in_gold", [], []
    anchors = [a for a in (_fold(a) for a in q.anchors) if a]
    if not anchors:
        return "no_anchors", [], []
    gold = set(q.gold_ids)
    contradictions: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for doc_id in sorted(item.readable):
        passages = item.readable[doc_id]
        naming = [] if doc_id in gold else [p for p in passages if _names(p, anchors)]
        if not naming:
            continue
        agrees: set[str] = set()
        seen: set[tuple[str, str]] = set()
        for line in _lines(naming):
            for fact, pairs in roles.items():
                for role, kind in sorted(pairs):
                    for rest in _values(line, role, kind):
                        if _starts_with(rest, fact):
                            agrees.add(fact)
                        elif any(_starts_with(rest, f) for f in q.answer_facts):
                            continue  # another answer fact in this role (two approvers): not a contradiction
                        elif (role, value := _cut(rest)) not in seen:
                            seen.add((role, value))
                            contradictions.append(
                                {"query_id": q.query_id, "doc_id": doc_id, "role": role, "value": value, "answer": fact}
                            )
        if agrees == set(roles):
            missing.append({"query_id": q.query_id, "doc_id": doc_id, "facts": sorted(agrees)})
    return "linted", contradictions, missing


def lint_gold(inputs: Iterable[LintInput]) -> dict[str, Any]:
    """Counts and examples over every query (see the module docstring); ``contradictions`` and
    ``missing_gold`` are ``None`` when no query could be linted."""
    statuses: dict[str, int] = {}
    contradictions: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for item in inputs:
        status, c, m = lint_query(item)
        statuses[status] = statuses.get(status, 0) + 1
        contradictions += c
        missing += m
    linted = statuses.get("linted", 0)
    not_linted = {k: v for k, v in sorted(statuses.items()) if k not in ("linted", "permission_only")}
    return {
        "queries": sum(statuses.values()),
        "linted": linted,
        "not_linted": sum(not_linted.values()),
        "not_linted_by_reason": not_linted,
        "permission_only": statuses.get("permission_only", 0),
        "contradictions": len(contradictions) if linted else None,
        "queries_with_contradictions": len({c["query_id"] for c in contradictions}) if linted else None,
        "missing_gold": len(missing) if linted else None,
        "queries_with_missing_gold": len({m["query_id"] for m in missing}) if linted else None,
        "contradiction_examples": contradictions[:EXAMPLES],
        "missing_gold_examples": missing[:EXAMPLES],
    }
