"""Align a run with its eval set: one entry per eval-set query, in eval-set order.

* The first record of a ``query_id`` wins; later duplicates are counted (``duplicate_run_records``).
* Records for queries outside the eval set are ignored and counted (``unknown_in_run``).
* A query without a record is ``missing`` (scored as an empty ranking, counted).
* A record with a non-null ``error`` is ``error``: its results are ignored (scored as an empty
  ranking); it is a ``timeout`` too when the error text mentions one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter

from drivebench.formats.evalset import EvalQuery, RunHit, RunRecord

_doc_id = attrgetter("doc_id")


def is_timeout(error: str) -> bool:
    """An error counts as a timeout when its text says ``timeout`` or ``timed out``."""
    e = error.lower()
    return "timeout" in e or "timed out" in e


@dataclass
class Aligned:
    queries: list[EvalQuery]
    status: list[str]  # "ok" | "error" | "missing"
    records: list[RunRecord | None]
    hits: list[list[RunHit]]  # [] for errored or missing queries
    counts: dict[str, int] = field(default_factory=dict)

    _top: dict[int, list[list[str]]] = field(default_factory=dict, repr=False)

    def top_ids(self, depth: int) -> list[list[str]]:
        """Doc ids of the first ``depth`` results of every query (computed once per depth)."""
        if depth not in self._top:
            self._top[depth] = [list(map(_doc_id, islice(hits, depth))) for hits in self.hits]
        return self._top[depth]

    @property
    def ok(self) -> list[bool]:
        return [s == "ok" for s in self.status]


def align(queries: Sequence[EvalQuery], run: Iterable[RunRecord]) -> Aligned:
    wanted = {q.query_id for q in queries}
    if len(wanted) != len(queries):
        raise ValueError("duplicate query_id in the eval set")
    by_id: dict[str, RunRecord] = {}
    unknown = duplicates = 0
    for rec in run:
        if rec.query_id not in wanted:
            unknown += 1
        elif rec.query_id in by_id:
            duplicates += 1
        else:
            by_id[rec.query_id] = rec
    status: list[str] = []
    records: list[RunRecord | None] = []
    hits: list[list[RunHit]] = []
    errors = timeouts = 0
    for q in queries:
        matched = by_id.get(q.query_id)
        records.append(matched)
        if matched is None:
            status.append("missing")
            hits.append([])
        elif matched.error is not None:
            status.append("error")
            hits.append([])
            errors += 1
            timeouts += is_timeout(matched.error)
        else:
            status.append("ok")
            hits.append(matched.results)
    counts = {
        "queries": len(queries),
        "scored": status.count("ok"),
        "errors": errors,
        "timeouts": timeouts,
        "missing_from_run": len(queries) - len(by_id),
        "unknown_in_run": unknown,
        "duplicate_run_records": duplicates,
        "no_gold": sum(1 for q in queries if not q.gold),
    }
    return Aligned(list(queries), status, records, hits, counts)
