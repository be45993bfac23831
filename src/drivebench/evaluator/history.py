"""History of evaluation runs in one SQLite file (default ``reports/history.sqlite3``; the CLI keeps it beside the
project's drivebench.toml, see ``cli.reports.history_path``).

Every run is stored whole: its metrics.json minus ``per_query`` as one JSON document, its
per-query rows (one table row each), and its scalar metrics flattened into ``metric_values`` so a
trend is one indexed query. A by-hop metric is flattened as ``multi_hop_completeness[3]`` and
``hop_position_hit_rate[3][2]``.

Recording is idempotent: a run is identified by the SHA-256 of its canonical JSON, so recording
the same metrics.json twice returns the same id. ``load(run_id)`` gives back a dict equal to what
was recorded, which ``scoring.compare`` accepts.

Run order (for trends and ``latest``) is ``run_info.started_at`` (else the time it was recorded),
then id. The article behind drivebench recommends re-running the evaluation monthly;
``MONTHLY_DAYS`` is the gap the trend view flags.

A run whose metrics.json says ``status.state == "failed"`` (the preflight failed, or more queries
failed than ``--max-error-rate`` allows) is recorded with ``status = 'failed'``; ``trend``,
``runs`` and ``latest`` leave such runs out unless ``include_failed``.

A run's ``verdict`` (``passed``/``failed``, from ``--fail-on`` gates and the leak gates; ``NULL`` for a run
recorded before gates were stored) and its ``gates`` (JSON: expression, value, threshold, passed, message) are
columns of its row. ``status`` says whether the run's figures can be trusted (a failed run is left out of
trends); ``verdict`` says whether they met the gates (a gate-failed run is a valid measurement and stays in).

A run's ``label`` (``run_info.label``, from ``--label``; ``NULL`` when it had none) names it: ``eval trend`` draws one
line per target, corpus version and label.

A run's ``scope`` says whether it measured the whole eval set: ``NULL`` for a full run (and every run recorded before
the column existed), ``partial`` for a run stopped early (``"partial": true``: Ctrl-C), ``subset`` for a re-run of some
queries only (``eval run --only-failed``: ``run_info.subset``). ``trend``, and ``runs``/``latest`` without
``include_failed``, leave both out like failed runs: their figures are not comparable with a full run's.

Schema (version 1; the ``status``, ``corpus``, ``corpus_version``, ``verdict``, ``gates``, ``label`` and ``scope``
columns are added to older files on open)::

    meta(key PRIMARY KEY, value)                    -- schema_version
    runs(id INTEGER PRIMARY KEY, fingerprint UNIQUE, recorded_at, started_at, run_dir, target,
         evalset_hash, snapshot, format, result, status,
         corpus, corpus_version,                    -- result: JSON without per_query; acme-zh@2
         verdict, gates,                            -- passed | failed | NULL; gates: JSON list
         label,                                     -- run_info.label or NULL
         scope)                                     -- NULL (full) | partial | subset
    metric_values(run_id, name, value, ci_low, ci_high, PRIMARY KEY(run_id, name))
    query_values(run_id, ord, query_id, status, row, PRIMARY KEY(run_id, ord))   -- row: JSON
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
DEFAULT_HISTORY = Path("reports") / "history.sqlite3"
MONTHLY_DAYS = 31

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL UNIQUE,
    recorded_at TEXT NOT NULL,
    started_at TEXT,
    run_dir TEXT,
    target TEXT,
    evalset_hash TEXT,
    snapshot TEXT,
    format TEXT,
    result TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_order ON runs (started_at, id);
CREATE TABLE IF NOT EXISTS metric_values (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL,
    ci_low REAL,
    ci_high REAL,
    PRIMARY KEY (run_id, name)
);
CREATE INDEX IF NOT EXISTS metric_values_name ON metric_values (name, run_id);
CREATE TABLE IF NOT EXISTS query_values (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    query_id TEXT NOT NULL,
    status TEXT,
    row TEXT NOT NULL,
    PRIMARY KEY (run_id, ord)
);
"""


@dataclass(frozen=True)
class RunSummary:
    id: int
    recorded_at: str
    started_at: str | None
    run_dir: str | None
    target: str | None
    evalset_hash: str | None
    snapshot: str | None
    status: str = "ok"
    corpus: str | None = None
    corpus_version: str | None = None  # "acme-zh@2" for a built-in corpus (corpora.builtin.corpus_version)
    verdict: str | None = None  # passed | failed; None: recorded before gates were stored
    gates_json: str | None = None
    label: str | None = None  # run_info.label (--label); None: unlabelled, or recorded before labels were stored
    scope: str | None = None  # None: a full run; "partial": stopped early; "subset": --only-failed

    @property
    def full(self) -> bool:
        return self.scope is None

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def gates(self) -> list[dict[str, Any]]:
        """The gates checked on the run (``[]`` when none were, or for an older row)."""
        try:
            loaded = json.loads(self.gates_json) if self.gates_json else []
        except ValueError:
            return []
        return [g for g in loaded if isinstance(g, dict)] if isinstance(loaded, list) else []

    @property
    def failed_gates(self) -> list[dict[str, Any]]:
        return [g for g in self.gates if g.get("failed")]

    @property
    def when(self) -> str:
        return self.started_at or self.recorded_at


@dataclass(frozen=True)
class TrendPoint:
    run: RunSummary
    value: float | None
    ci: tuple[float, float] | None


def fingerprint(result: Mapping[str, Any]) -> str:
    canonical = json.dumps(result, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def flatten_metrics(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """Scalar metrics as they are; by-hop dicts as ``name[h]`` / ``name[h][p]``."""
    out: dict[str, float | None] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, sub in value.items():
                walk(f"{prefix}[{key}]", sub)
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[prefix] = None if value is None else float(value)

    for name, value in metrics.items():
        walk(name, value)
    return out


def run_status(result: Mapping[str, Any]) -> str:
    """``"failed"`` or ``"ok"`` from a metrics.json dict (older files without ``status`` are ok)."""
    return "failed" if (result.get("status") or {}).get("state") == "failed" else "ok"


def run_scope(result: Mapping[str, Any]) -> str | None:
    """``"partial"`` (stopped early), ``"subset"`` (some queries only: ``run_info.subset``) or None (a full run)."""
    if result.get("partial"):
        return "partial"
    return "subset" if (result.get("run_info") or {}).get("subset") else None


def run_verdict(result: Mapping[str, Any]) -> str | None:
    """``"passed"``/``"failed"`` from a metrics.json dict's ``verdict``; None when it has none."""
    verdict = result.get("verdict")
    state = verdict.get("state") if isinstance(verdict, Mapping) else None
    return state if state in ("passed", "failed") else None


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ",".join(map(str, value)) or None
    return str(value)


def parse_when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


SQLITE_MAX_INTEGER = 2**63 - 1  # run ids are SQLite INTEGERs
_REF = re.compile(r"^(?:#?(?P<id>\d+)|latest(?:~(?P<back>\d+))?)$")


class HistoryStore:
    """The SQLite history file; every method opens and closes its own connection."""

    def __init__(self, path: str | Path = DEFAULT_HISTORY) -> None:
        self.path = Path(path)

    @contextmanager
    def _connect(self, create: bool = True) -> Iterator[sqlite3.Connection]:
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise FileNotFoundError(f"no history at {self.path}")
        con = sqlite3.connect(self.path, timeout=30)
        try:
            con.execute("PRAGMA foreign_keys = ON")
            con.executescript(_SCHEMA)
            con.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            columns = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
            if "status" not in columns:
                con.execute("ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok'")
            # which corpus, which version (compare refuses mixed versions); the verdict and the gates checked; the
            # run's label (trend lines)
            # whether the run measured the whole eval set (partial and subset runs are left out of trends)
            for column in ("corpus", "corpus_version", "verdict", "gates", "label", "scope"):
                if column not in columns:
                    con.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")
            with con:
                yield con
        finally:
            con.close()

    def record(self, result: Mapping[str, Any], run_dir: str | Path | None = None) -> int:
        """Store one metrics.json dict; returns its run id (the existing id if already recorded)."""
        fp = fingerprint(result)
        info = result.get("run_info") or {}
        body = {k: v for k, v in result.items() if k != "per_query"}
        with self._connect() as con:
            row = con.execute("SELECT id FROM runs WHERE fingerprint = ?", (fp,)).fetchone()
            if row:
                return int(row[0])
            cur = con.execute(
                "INSERT INTO runs (fingerprint, recorded_at, started_at, run_dir, target, evalset_hash, snapshot,"
                " format, result, status, corpus, corpus_version, verdict, gates, label, scope)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    fp,
                    datetime.now(UTC).isoformat(),
                    _str_or_none(info.get("started_at")),
                    None if run_dir is None else str(Path(run_dir).resolve()),
                    _str_or_none(info.get("target")),
                    _str_or_none(info.get("evalset_hash")),
                    _str_or_none(info.get("snapshot")),
                    _str_or_none(result.get("format")),
                    json.dumps(body, sort_keys=True, ensure_ascii=False),
                    run_status(result),
                    _str_or_none(info.get("corpus")),
                    _str_or_none(info.get("corpus_version")),
                    run_verdict(result),
                    json.dumps(result["gates"], ensure_ascii=False) if isinstance(result.get("gates"), list) else None,
                    _str_or_none(info.get("label")),
                    run_scope(result),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            ci = result.get("ci") or {}
            con.executemany(
                "INSERT INTO metric_values (run_id, name, value, ci_low, ci_high) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, name, value, *(ci.get(name) or (None, None)))
                    for name, value in flatten_metrics(result.get("metrics") or {}).items()
                ],
            )
            con.executemany(
                "INSERT INTO query_values (run_id, ord, query_id, status, row) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, i, str(q.get("query_id")), q.get("status"), json.dumps(q, ensure_ascii=False))
                    for i, q in enumerate(result.get("per_query") or [])
                ],
            )
            return run_id

    def _summary(self, row: tuple[Any, ...]) -> RunSummary:
        return RunSummary(int(row[0]), *row[1:])

    _COLS = (
        "id, recorded_at, started_at, run_dir, target, evalset_hash, snapshot, status, corpus, corpus_version,"
        " verdict, gates, label, scope"
    )
    _ORDER = "ORDER BY COALESCE(started_at, recorded_at), id"

    def runs(
        self, *, evalset_hash: str | None = None, target: str | None = None, include_failed: bool = True
    ) -> list[RunSummary]:
        """Every run, oldest first (optionally only one eval set and/or target, without failed runs)."""
        where, args = self._filters(evalset_hash, target, include_failed=include_failed)
        with self._connect() as con:
            rows = con.execute(f"SELECT {self._COLS} FROM runs {where} {self._ORDER}", args).fetchall()
        return [self._summary(r) for r in rows]

    @staticmethod
    def _filters(
        evalset_hash: str | None, target: str | None, alias: str = "", *, include_failed: bool = True
    ) -> tuple[str, list[str]]:
        clauses, args = [], []
        if not include_failed:
            clauses.append(f"{alias}status != 'failed'")
            clauses.append(f"{alias}scope IS NULL")  # a partial or subset run is not a measurement of the eval set
        if evalset_hash:
            clauses.append(f"{alias}evalset_hash = ?")
            args.append(evalset_hash)
        if target:
            clauses.append(f"{alias}target = ?")
            args.append(target)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    def resolve(self, ref: str | int, *, include_failed: bool = True) -> int:
        """A run id from ``12``, ``#12``, ``latest`` or ``latest~1`` (the one before the latest; failed
        runs are skipped unless ``include_failed``)."""
        m = _REF.match(str(ref).strip())
        if not m:
            raise ValueError(f"not a history run reference: {ref!r} (use an id, #id, latest or latest~N)")
        if m["id"]:
            run_id = int(m["id"])
            if run_id > SQLITE_MAX_INTEGER:  # sqlite cannot even bind it (OverflowError): no such run can exist
                raise KeyError(f"no run {run_id} in {self.path}")
            with self._connect() as con:
                if not con.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                    raise KeyError(f"no run {run_id} in {self.path}")
            return run_id
        back = int(m["back"] or 0)
        ordered = self.runs(include_failed=include_failed)
        if back >= len(ordered):
            raise KeyError(f"{ref}: the history at {self.path} has {len(ordered)} run(s)")
        return ordered[-1 - back].id

    def load(self, ref: str | int) -> dict[str, Any]:
        """The metrics.json dict of a run, ``per_query`` included, as it was recorded."""
        run_id = self.resolve(ref)
        with self._connect() as con:
            (body,) = con.execute("SELECT result FROM runs WHERE id = ?", (run_id,)).fetchone()
            rows = con.execute("SELECT row FROM query_values WHERE run_id = ? ORDER BY ord", (run_id,)).fetchall()
        result = json.loads(body)
        result["per_query"] = [json.loads(r[0]) for r in rows]
        return result

    def summary(self, ref: str | int) -> RunSummary:
        run_id = self.resolve(ref)
        with self._connect() as con:
            row = con.execute(f"SELECT {self._COLS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._summary(row)

    def metric_names(self) -> list[str]:
        with self._connect() as con:
            return [r[0] for r in con.execute("SELECT DISTINCT name FROM metric_values ORDER BY name")]

    def trend(
        self,
        metric: str,
        *,
        evalset_hash: str | None = None,
        target: str | None = None,
        last: int | None = None,
        include_failed: bool = False,
    ) -> list[TrendPoint]:
        """``metric`` in every run (oldest first; failed runs only with ``include_failed``); runs
        without the metric give ``value=None``."""
        where, args = self._filters(evalset_hash, target, "r.", include_failed=include_failed)
        sql = (
            f"SELECT r.id, r.recorded_at, r.started_at, r.run_dir, r.target, r.evalset_hash, r.snapshot, r.status,"
            f" r.corpus, r.corpus_version, r.verdict, r.gates, r.label, r.scope, m.value, m.ci_low, m.ci_high FROM runs r"
            f" LEFT JOIN metric_values m ON m.run_id = r.id AND m.name = ? {where}"
            f" ORDER BY COALESCE(r.started_at, r.recorded_at), r.id"
        )
        with self._connect() as con:
            rows = con.execute(sql, [metric, *args]).fetchall()
        points = [
            TrendPoint(
                self._summary(row[:14]),
                row[14],
                None if row[15] is None or row[16] is None else (float(row[15]), float(row[16])),
            )
            for row in rows
        ]
        return points[-last:] if last else points

    def leak_counts(self, run_ids: list[int]) -> dict[int, int]:
        """Queries that leaked, by run, for the runs among ``run_ids`` whose leaks were measured and found: result
        leaks plus answer leaks (a run recorded with --allow-leaks passed its gates and still leaked: a trend marks it
        as failed)."""
        if not run_ids:
            return {}
        marks = ",".join("?" * len(run_ids))
        sql = (
            "SELECT id, CASE WHEN json_extract(result, '$.oracles.leak.measured')"
            " THEN json_extract(result, '$.counts.queries_with_leak') END,"
            " CASE WHEN json_extract(result, '$.oracles.answer_leak.measured')"
            " THEN json_extract(result, '$.counts.queries_with_answer_leak') END"
            f" FROM runs WHERE id IN ({marks})"
        )
        with self._connect() as con:
            rows = con.execute(sql, run_ids).fetchall()
        out: dict[int, int] = {}
        for run_id, *counts in rows:  # a query whose results and answer both leaked counts twice: an upper count
            n = sum(int(x) for x in counts if isinstance(x, int | float))
            if n > 0:
                out[int(run_id)] = n
        return out

    def previous(
        self, target: str | None, corpus_version: str | None, label: str | None, before: str | None = None
    ) -> RunSummary | None:
        """The latest full run (not partial, not a subset) that is not failed on the same target, corpus version and label (``None`` matches
        ``None``: an unlabelled run follows unlabelled runs), started before ``before`` when given."""
        where = "WHERE status != 'failed' AND scope IS NULL AND target IS ? AND corpus_version IS ? AND label IS ?"
        args: list[Any] = [target, corpus_version, label]
        if before:
            where += " AND COALESCE(started_at, recorded_at) < ?"
            args.append(before)
        sql = f"SELECT {self._COLS} FROM runs {where} ORDER BY COALESCE(started_at, recorded_at) DESC, id DESC LIMIT 1"
        with self._connect() as con:
            row = con.execute(sql, args).fetchone()
        return None if row is None else self._summary(row)

    def metric_value(self, run_id: int, name: str) -> float | None:
        with self._connect() as con:
            row = con.execute(
                "SELECT value FROM metric_values WHERE run_id = ? AND name = ?", (run_id, name)
            ).fetchone()
        return None if row is None or row[0] is None else float(row[0])


def main_metric(result: Mapping[str, Any]) -> str:
    """The figure a run is compared on: Hit Rate at the reports' main K (10 when evaluated, else the largest K)."""
    ks = [int(k) for k in (result.get("config") or {}).get("ks") or []]
    k = 10 if 10 in ks or not ks else max(ks)
    return f"hit_rate@{k}"


def _minute(when: str | None) -> str | None:
    dt = parse_when(when)
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if dt is not None else when


def compare_with_previous(result: Mapping[str, Any], store: HistoryStore | None) -> dict[str, Any]:
    """``result["previous_run"]``: the run's main figure against the latest earlier run (not failed) with the same
    target, corpus version and label in ``store``, computed when the run is recorded so that a report re-rendered
    from metrics.json shows it.

    ``state`` is ``compared`` (``previous`` and ``delta``; ``delta`` is ``None`` when either figure was not
    measured, never a made-up 0), ``first`` (no earlier run with this label) or ``no history`` (``store`` is
    ``None``: recording is off)."""
    info = result.get("run_info") or {}
    metric = main_metric(result)
    value = (result.get("metrics") or {}).get(metric)
    out: dict[str, Any] = {
        "metric": metric,
        "value": value,
        "target": _str_or_none(info.get("target")),
        "corpus_version": _str_or_none(info.get("corpus_version")),
        "label": _str_or_none(info.get("label")),
    }
    if store is None:
        return {**out, "state": "no history"}
    before = _str_or_none(info.get("started_at"))
    prev = store.previous(out["target"], out["corpus_version"], out["label"], before) if store.path.exists() else None
    if prev is None:
        return {**out, "state": "first"}
    prev_value = store.metric_value(prev.id, metric)
    delta = None if value is None or prev_value is None else round(float(value) - prev_value, 6)
    return {
        **out,
        "state": "compared",
        "previous": {"run_id": prev.id, "when": _minute(prev.when), "value": prev_value, "run_dir": prev.run_dir},
        "delta": delta,
    }


@dataclass(frozen=True)
class TrendLine:
    """The runs of one target on one corpus version under one label: the points a trend line may join (runs of
    different targets, corpora or labels measure different things)."""

    target: str | None
    corpus_version: str | None
    label: str | None
    points: list[TrendPoint]

    @property
    def key(self) -> tuple[str | None, str | None, str | None]:
        return (self.target, self.corpus_version, self.label)


def trend_lines(points: list[TrendPoint], last: int | None = None) -> list[TrendLine]:
    """``points`` (oldest first) split by (target, corpus version, label), in the order each line first appears;
    ``last`` keeps the last N points of each line."""
    grouped: dict[tuple[str | None, str | None, str | None], list[TrendPoint]] = {}
    for p in points:
        grouped.setdefault((p.run.target, p.run.corpus_version, p.run.label), []).append(p)
    return [TrendLine(*key, points=pts[-last:] if last else pts) for key, pts in grouped.items()]


SPARK_BLOCKS = "▁▂▃▄▅▆▇█"
SPARK_ASCII = "_.-:=+*#"


def sparkline(
    values: list[float | None], *, ascii_only: bool = False, lo: float | None = None, hi: float | None = None
) -> str:
    """One character per value (``·`` for a missing one), scaled between ``lo`` and ``hi``
    (default: the values' own min and max; a flat series sits in the middle)."""
    chars = SPARK_ASCII if ascii_only else SPARK_BLOCKS
    gap = "." if ascii_only else "·"
    present = [v for v in values if v is not None]
    if not present:
        return gap * len(values)
    lo = min(present) if lo is None else lo
    hi = max(present) if hi is None else hi
    out = []
    for v in values:
        if v is None:
            out.append(gap)
        elif hi - lo <= 1e-12:
            out.append(chars[len(chars) // 2])
        else:
            frac = min(max((v - lo) / (hi - lo), 0.0), 1.0)
            out.append(chars[min(int(frac * len(chars)), len(chars) - 1)])
    return "".join(out)
