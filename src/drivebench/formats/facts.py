"""The facts a corpus's documents own (``facts.jsonl``, version 1), beside ``corpus.json``.

One fact per line::

    {"fact_id": "f0001", "text": "1,300,000", "entity": "BGT-2026-031", "attribute": "budget.total",
     "owners": [{"doc_id": "d0042", "version_ids": ["d0042-v1"]}],
     "current": false}

* ``text``: the value as the owner document renders it (compared after the evaluator's normalisation:
  ``evaluator.fact_text``, so ``130万元`` states ``1,300,000``).
* ``entity`` and ``attribute``: what the value is about (the identifiers that name the entity, joined with
  `` / ``) and which of its attributes it is (``<document kind>.<key>``). Two facts with one entity and
  attribute are two values of it: one per version of the owner that changed it.
* ``owners``: every document whose text states the value (the document the generator drew it for first), each
  with the versions that state it. The fact is known to whoever may preview any one of them.
* ``current``: the first owner's current version states the value (false: only an older version does).

A corpus without ``facts.jsonl`` does not say which documents own which facts: whatever is computed from
them is "not measured" (``load_facts`` returns None), never 0. ``seed`` and the built-in corpora from ``acme@3``
on write the file; the frozen ``acme@1`` and ``acme@2`` do not.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from drivebench.formats.evalset import write_jsonl

FACTS_NAME = "facts.jsonl"


class FactOwner(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_id: str
    version_ids: list[str] = Field(min_length=1)


class CorpusFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact_id: str
    text: str = Field(min_length=1)
    entity: str
    attribute: str
    owners: list[FactOwner] = Field(min_length=1)
    current: bool = True

    @property
    def owner_doc_ids(self) -> list[str]:
        return [o.doc_id for o in self.owners]


def write_facts(corpus_dir: Path, facts: list[CorpusFact]) -> Path:
    """Write ``facts.jsonl`` (sorted keys, one fact a line: equal facts are equal bytes)."""
    return write_jsonl(Path(corpus_dir) / FACTS_NAME, facts)


def load_facts(corpus_dir: Path) -> list[CorpusFact] | None:
    """The corpus's facts, or None when it has no ``facts.jsonl`` (facts not available: not measured).
    A malformed line is a ValueError naming the file and line."""
    path = Path(corpus_dir) / FACTS_NAME
    if not path.is_file():
        return None
    facts: list[CorpusFact] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            fact = CorpusFact.model_validate_json(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: {exc}") from exc
        if fact.fact_id in seen:
            raise ValueError(f"{path}:{lineno}: duplicate fact_id {fact.fact_id}")
        seen.add(fact.fact_id)
        facts.append(fact)
    return facts
