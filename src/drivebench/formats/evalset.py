"""Evaluation-set and run file formats (JSONL, version 1).

Eval set, one query per line::

    {"query_id": "q001", "query": "项目X的技术方案审批人是谁?",
     "user_id": "u003",                 # or "user_role" (+ optional "department")
     "gold": [{"doc_id": "d0007", "version_id": "d0007-v2", "grade": 1}],
     "hops": ["d0001", "d0004", "d0007"],   # optional ordered chain for multi-hop questions
     "forbidden": ["d0009"],               # relevant docs this principal may NOT preview
     "allowed": null,                      # optional: every doc this principal may preview (external oracle)
     "tags": {"kind": "multi_hop", "department": "rd", "file_type": "docx", "length": "medium"},
     "as_of": null,                        # ISO time: ask the drive as it stood then
     "answer_facts": ["王芳"],             # strings a correct answer contains
     "anchors": ["TP-2026-004"]}           # strings naming the entity whose attribute is asked

Run, one query per line::

    {"query_id": "q001", "results": [{"doc_id": "d0007", "version_id": "d0007-v2", "score": 0.71, "rank": 1}],
     "latency_ms": 12.5, "error": null, "error_kind": null, "answer": null}

A record with ``error`` is a failed query (``error_kind`` says which kind): never a result. A result
mapped from a foreign id keeps it in ``foreign_id``; one that maps to no document of the corpus has
``"unmapped": true`` (and ``doc_id`` ``"unmapped:<foreign id>"``): never a hit, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

EVALSET_FORMAT = "drivebench-evalset/1"
RUN_FORMAT = "drivebench-run/1"


class GoldDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str
    version_id: str | None = None
    grade: int = Field(default=1, ge=1)


class EvalQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str
    query: str = Field(min_length=1)
    user_id: str | None = None
    user_role: str | None = None
    department: str | None = None
    gold: list[GoldDoc] = Field(default_factory=list)
    hops: list[str] | None = None
    forbidden: list[str] = Field(default_factory=list)
    allowed: list[str] | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    as_of: datetime | None = None
    answer_facts: list[str] = Field(default_factory=list)
    # What identifies the entity the answer belongs to (a code, a name): the gold linter reads every other
    # document that names all of them and checks what it says in the answer's role. None (absent from the
    # file) when the set has none: the eval sets written before the field existed keep their bytes.
    anchors: list[str] | None = None

    @model_validator(mode="after")
    def _check_principal(self) -> EvalQuery:
        if not self.user_id and not self.user_role:
            raise ValueError(f"query {self.query_id}: give user_id or user_role")
        return self

    @property
    def gold_ids(self) -> list[str]:
        """Gold document ids in file order, without duplicates."""
        return list(dict.fromkeys(g.doc_id for g in self.gold))


class RunHit(BaseModel):
    model_config = ConfigDict(extra="allow")
    doc_id: str
    version_id: str | None = None
    score: float | None = None
    rank: int | None = None


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    query_id: str
    results: list[RunHit] = Field(default_factory=list)
    latency_ms: float | None = None
    error: str | None = None
    error_kind: str | None = None  # one of targets.base.ERROR_KINDS when ``error`` is set
    answer: str | None = None
    attempts: int = 1

    @property
    def ranked_doc_ids(self) -> list[str]:
        """Document ids in returned order (rank = order returned)."""
        return [h.doc_id for h in self.results]


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{lineno}: each line must be a JSON object")
            yield lineno, obj


def load_evalset(path: Path) -> list[EvalQuery]:
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for lineno, obj in _read_jsonl(path):
        try:
            q = EvalQuery.model_validate(obj)
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: {exc}") from exc
        if q.query_id in seen:
            raise ValueError(f"{path}:{lineno}: duplicate query_id {q.query_id}")
        seen.add(q.query_id)
        queries.append(q)
    return queries


def load_run(path: Path) -> list[RunRecord]:
    records: list[RunRecord] = []
    for lineno, obj in _read_jsonl(path):
        try:
            records.append(RunRecord.model_validate(obj))
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: {exc}") from exc
    return records


def write_jsonl(path: Path, rows: Iterable[BaseModel | dict[str, Any]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            data = row.model_dump(mode="json", exclude_none=True) if isinstance(row, BaseModel) else row
            fh.write(json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n")
    return path
