"""``RunResult``: metrics.json as a type, and the one module that reads and writes the file.

``scoring.score`` computes the result as a plain dict (its shape is documented at the top of
``drivebench.evaluator.scoring``); ``evaluate`` and the gates add ``status``, ``run_info``, ``verdict`` and
``gates``. ``RunResult`` types the top level and the sections the reports, the history and the CLI read most
(``errors``, ``oracles``, ``metrics``, ``counts``, ``leaks``, ``run_info``, ``gates``, ``status``); the sections
whose shape is open (strata, citations, per_query rows, ...) stay dicts.

Every model keeps the keys it was given, in their order, and nothing else: ``RunResult.from_dict(d).to_dict()``
equals ``d`` and ``write`` writes the bytes ``json.dumps`` of the dict wrote before this type existed (a key added
by a later version is kept; a key an earlier version did not write is not invented). Numbers keep their JSON type
(an int stays an int). Every ``format`` the code has written (``drivebench-metrics/1``, and files from before
``format`` was written) loads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_serializer, model_validator

METRICS_JSON = "metrics.json"
STATUS_FIRST = ("verdict", "status", "partial", "completion", "errors", "preflight", "unmapped", "oracles", "gates")

Number = int | float  # a JSON number as written: 3 stays 3, 0.5 stays 0.5
MetricValue = Number | dict[str, Any] | None  # a figure, "not measured" (null), or per hop count


class Section(BaseModel):
    """A section of metrics.json: typed fields, the other keys kept as given, in the order given."""

    model_config = ConfigDict(extra="allow", strict=False)
    _order: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: Any) -> Any:
        section = handler(data)
        if isinstance(data, dict):
            section._order = list(data)
        return section

    @model_serializer(mode="wrap")
    def _in_order(self, handler: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        present = set(self.model_fields_set) | set(self.model_extra or {})
        keys = [k for k in self._order if k in dumped and k in present]
        keys += [k for k in dumped if k in present and k not in keys]
        return {k: dumped[k] for k in keys}


class Status(Section):
    state: str | None = None  # ok, failed, partial, gates_failed
    reason: str | None = None
    max_error_rate: Number | None = None


class Errors(Section):
    queries: int | None = None
    answered: int | None = None
    failed: int | None = None
    rate: Number | None = None
    retries: dict[str, Any] | None = None
    by_kind: dict[str, dict[str, Any]] | None = None


class OracleState(Section):
    """Was this oracle available: ``measured`` with its ``source``, or not with the ``reason``."""

    measured: bool | None = None
    source: str | None = None
    reason: str | None = None


class StoredGate(Section):
    expr: str | None = None
    failed: bool | None = None
    value: Number | None = None
    message: str | None = None
    name: str | None = None
    op: str | None = None
    threshold: Number | None = None


class Counts(Section):
    queries: int | None = None
    scored: int | None = None
    errors: int | None = None
    timeouts: int | None = None
    missing_from_run: int | None = None
    unknown_in_run: int | None = None
    duplicate_run_records: int | None = None
    no_gold: int | None = None
    version_pinned: int | None = None
    multi_hop: int | None = None
    with_answer: int | None = None
    with_answer_facts: int | None = None
    refusals: int | None = None
    queries_with_leak: int | None = None
    queries_with_answer_leak: int | None = None
    citations_unresolvable: int | None = None
    citations_ambiguous: int | None = None


class Leaks(Section):
    depth: str | None = None  # "all returned results", or the cutoff it was judged at
    queries_with_leak: int | None = None
    queries_judged: int | None = None
    upper_bound_95: Number | None = None
    documents: list[dict[str, Any]] | None = None
    by_secret_level: dict[str, int] | None = None
    by_cause: list[dict[str, Any]] | None = None


class RunInfo(Section):
    target: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    top_k: int | None = None
    concurrency: int | None = None
    snapshot: str | list[str] | None = None
    drivebench_version: str | None = None
    label: str | None = None
    evalset: str | None = None
    evalset_hash: str | None = None
    corpus: str | None = None
    corpus_version: str | None = None
    target_profile: str | None = None


class RunResult(Section):
    """metrics.json: see ``drivebench.evaluator.scoring`` for every section."""

    format: str | None = None
    verdict: dict[str, Any] | None = None
    status: Status | None = None
    partial: bool | None = None
    completion: dict[str, Any] | None = None
    errors: Errors | None = None
    preflight: dict[str, Any] | None = None
    unmapped: dict[str, Any] | None = None
    oracles: dict[str, OracleState] | None = None
    gates: list[StoredGate] | None = None
    metrics_scope: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    metrics: dict[str, MetricValue] | None = None
    metrics_answered: dict[str, MetricValue] | None = None
    ci: dict[str, list[Number] | None] | None = None
    strata: dict[str, Any] | None = None
    counts: Counts | None = None
    leaks: Leaks | None = None
    answer_leaks: dict[str, Any] | None = None
    over_restriction: dict[str, Any] | None = None
    under_fill: dict[str, Any] | None = None
    answer_outcomes: dict[str, Any] | None = None
    citations: dict[str, Any] | None = None
    per_query: list[dict[str, Any]] | None = None
    run_info: RunInfo | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | RunResult) -> RunResult:
        """The type of a metrics dict (``evaluate``'s ``.result``, a history row); a RunResult as it is."""
        return data if isinstance(data, RunResult) else cls.model_validate(data)

    def to_dict(self) -> dict[str, Any]:
        """The metrics dict, keys and values as given (what ``json.dumps`` writes to metrics.json)."""
        return self.model_dump(mode="json")

    @classmethod
    def read(cls, path: Path) -> RunResult:
        """metrics.json, given the file or the run directory holding it. A file that is not JSON or not an object
        is a ValueError naming it."""
        path = Path(path)
        if path.is_dir():
            path = path / METRICS_JSON
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a drivebench metrics.json (not a JSON object)")
        return cls.model_validate(data)

    def write(self, path: Path) -> Path:
        """metrics.json with the verdict, ``status``, ``errors`` and ``preflight`` first (the rest as computed);
        the failed-queries section keeps its first rows (failed_queries.jsonl has them all)."""
        return write_metrics_dict(self.to_dict(), path)

    @property
    def is_partial(self) -> bool:
        return bool(self.partial)

    @property
    def state(self) -> str | None:
        return self.status.state if self.status is not None else None


def metrics_dict(result: RunResult | Mapping[str, Any]) -> Mapping[str, Any]:
    """What a report reads: the metrics dict of a ``RunResult`` (converted once, at the report's entry point), or
    the dict given (``evaluate``'s ``.result``, a history row) as it is."""
    return result.to_dict() if isinstance(result, RunResult) else result


def with_status_first(result: dict[str, Any]) -> dict[str, Any]:
    """The same dict with ``verdict``, ``status``, ``errors`` and ``preflight`` first (metrics.json key order)."""
    return {
        **{k: result[k] for k in STATUS_FIRST if k in result},
        **{k: v for k, v in result.items() if k not in STATUS_FIRST},
    }


def write_metrics_dict(result: dict[str, Any], path: Path) -> Path:
    """Write a metrics dict as metrics.json (see ``RunResult.write``)."""
    from drivebench.evaluator.failed_queries import stored_for_file

    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(result.get("failed_queries"), dict):
        result = {**result, "failed_queries": stored_for_file(result["failed_queries"])}
    path.write_text(json.dumps(with_status_first(result), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
