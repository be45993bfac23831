"""Evaluate a target end to end: preflight, run the eval set, map ids, score, judge the run, and
write run.jsonl and metrics.json.

The run *failed* when the preflight probe failed (nothing else is sent; every query is recorded
as a ``preflight`` error), when the share of failed queries exceeds ``max_error_rate`` (default 0:
any failed query fails the run), or when every answered query returned an empty list. ``metrics.json`` then says so in ``status``
(``"failed"`` with the reason), shown first by every report; history keeps the run, marked failed.

A run stopped early (``Interrupt``: Ctrl-C) is *partial*: the metrics are over the queries answered before it
stopped, ``metrics.json`` says ``"partial": true`` with ``completion`` (how many of how many), ``status.state`` is
``"partial"`` (unless the run failed too) and the verdict fails (``gates.verdict``); its run.jsonl keeps the
target's answers as returned (ids not yet mapped), so that ``done`` records of a resumed run are mapped and scored
exactly like the ones asked after them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from drivebench import __version__
from drivebench.evaluator import failed_queries as fq
from drivebench.evaluator.gates import GateResult, stored_gates
from drivebench.evaluator.idmap import IdMapper
from drivebench.evaluator.loaded_corpus import NO_CORPUS_FACTS
from drivebench.evaluator.oracle_progress import ProgressOracle
from drivebench.evaluator.preflight import Preflight, preflight
from drivebench.evaluator.result import METRICS_JSON, RunResult, with_status_first, write_metrics_dict
from drivebench.evaluator.runner import Interrupt, RunConfig, run_queries
from drivebench.evaluator.scoring import DEFAULT_KS, Oracle, score
from drivebench.evaluator.strata import tag_strata
from drivebench.formats.evalset import EvalQuery, RunRecord, write_jsonl
from drivebench.formats.facts import CorpusFact, load_facts
from drivebench.formats.target import Target


@dataclass
class Evaluation:
    records: list[RunRecord]
    result: dict[str, Any]
    out_dir: Path | None = None
    preflight: Preflight | None = None
    raw_records: list[RunRecord] | None = None  # before id mapping: what a partial run's run.jsonl keeps

    @property
    def run_result(self) -> RunResult:
        """``result`` typed: what metrics.json holds (``RunResult``)."""
        return RunResult.from_dict(self.result)

    @property
    def failed(self) -> bool:
        return (self.result.get("status") or {}).get("state") == "failed"

    @property
    def partial(self) -> bool:
        return bool(self.result.get("partial"))

    @property
    def verdict(self) -> dict[str, Any] | None:
        """``result["verdict"]``: passed or failed, the exit code ``eval run`` would exit with, the failed gates'
        messages (``None`` before the gates were checked)."""
        return self.result.get("verdict")

    @property
    def gates(self) -> list[GateResult]:
        """Every gate checked: the leak gates first, then the ``fail_on`` ones."""
        return stored_gates(self.result)

    @property
    def passed(self) -> bool:
        """The verdict passed (False when it failed or was not judged: never a success by default)."""
        return (self.verdict or {}).get("state") == "passed"

    @property
    def exit_code(self) -> int | None:
        return (self.verdict or {}).get("exit_code")


def evalset_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


def judge(result: dict[str, Any], max_error_rate: float = 0.0, pre: Preflight | None = None) -> dict[str, Any]:
    """``result["status"]``: ``{"state": "ok" | "failed", "reason", "max_error_rate"}``."""
    errors = result.get("errors") or {}
    rate = float(errors.get("rate") or 0.0)
    if pre is not None and pre.fatal:
        reason = f"preflight failed ({pre.kind}): {pre.diagnosis}"
        state = "failed"
    elif errors.get("answered") and all(row.get("n_results") == 0 for row in _answered_rows(result)):
        reason = f"every one of the {errors['answered']} answered queries returned an empty result list"
        state = "failed"
    elif rate > max_error_rate:
        kinds = ", ".join(f"{k} {v['count']}" for k, v in (errors.get("by_kind") or {}).items())
        reason = (
            f"{errors.get('failed')} of {errors.get('queries')} queries failed (error rate {rate:.3f} > "
            f"--max-error-rate {max_error_rate:g}): {kinds}"
        )
        state = "failed"
    else:
        reason = f"error rate {rate:.3f} <= --max-error-rate {max_error_rate:g}"
        state = "ok"
    status = {"state": state, "reason": reason, "max_error_rate": max_error_rate}
    result["status"] = status
    return status


def _answered_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for row in result.get("per_query") or [] if row.get("status") == "ok"]


def evaluate(
    target: Target,
    queries: Sequence[EvalQuery],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    run_config: RunConfig | None = None,
    oracle: Oracle | None = None,
    catalog: Any = None,
    progress: Callable[[], None] | None = None,
    run_info: dict[str, Any] | None = None,
    id_mapper: IdMapper | None = None,
    probe: bool = False,
    preflight_result: Preflight | None = None,
    max_error_rate: float = 0.0,
    scoring_progress: Callable[[int, int], None] | None = None,
    by: Sequence[str] = (),
    done: Sequence[RunRecord] = (),
    interrupt: Interrupt | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    facts: Sequence[CorpusFact] | None = None,
    no_facts_reason: str | None = None,
) -> Evaluation:
    """Run ``queries`` against ``target`` and score them (``by``: eval-set tags to break metrics down by, see
    ``scoring.score``; an unknown one raises ``UnknownTagError`` before anything is sent). With ``probe`` the
    first query is sent once first (``preflight``); ``preflight_result`` passes a probe the caller already made. A fatal
    preflight sends nothing else: every query is recorded as a ``preflight`` error. ``progress`` is called
    once per answered query; ``scoring_progress(done, total)`` with ``(0, n)`` when scoring starts, after each
    query the leak oracle has judged (scoring's slow part: a Casbin decision per returned document), and
    ``(n, n)`` when the scores are done.

    ``done``: the records of a resumed run's queries already answered (as the target returned them): those queries
    are not sent again, and are mapped and scored with the others. ``interrupt`` stops the run early (a partial
    run, see the module docs); ``on_record`` sees each new record as it arrives. ``facts`` and ``no_facts_reason``:
    what answers are checked against for answer leaks (``corpus_facts``; see ``scoring.score``)."""
    cfg = run_config or RunConfig(top_k=max(max(ks), 10))
    tag_strata(queries, by)  # a tag no query carries is a usage error, found before the run, not after it
    started = datetime.now(UTC)
    pre: list[Preflight] = [preflight_result] if preflight_result is not None else []

    answered_before = {r.query_id for r in done}
    pending = [q for q in queries if q.query_id not in answered_before]

    async def go() -> list[RunRecord]:
        try:
            if probe and pending and not pre:
                pre.append(await preflight(target, pending, cfg.top_k, cfg.mode))
            if pre and pre[0].fatal:
                p = pre[0]
                if p.fatal:
                    msg = f"not sent: the preflight probe failed ({p.kind}): {p.diagnosis}"
                    return [
                        RunRecord(query_id=q.query_id, error=msg, error_kind="preflight", attempts=0) for q in pending
                    ]
            return await run_queries(target, pending, cfg, progress, interrupt=interrupt, on_record=on_record)
        finally:
            await target.aclose()

    by_id = {r.query_id: r for r in [*done, *asyncio.run(go())]}
    records = [by_id[q.query_id] for q in queries if q.query_id in by_id]  # eval-set order
    raw_records = list(records)
    total = len(queries)
    partial = len(records) < total
    if partial:  # the metrics are over the queries answered; a --by tag only unanswered queries carry is dropped
        queries = [q for q in queries if q.query_id in by_id]
        by = [b for b in by if _carried(queries, b)]
    n = len(queries)
    if scoring_progress is not None:
        scoring_progress(0, n)
        if oracle is not None and not isinstance(oracle, str):
            oracle = ProgressOracle(oracle, lambda done: scoring_progress(min(done, n), n))
    mapping_info: dict[str, Any] | None = None
    if id_mapper is not None:
        records, stats = id_mapper.map_records(records)
        mapping_info = {
            "match": id_mapper.match,
            "describe": id_mapper.describe,
            "results": stats.results,
            "mapped": stats.mapped,
            "unmapped": stats.unmapped,
            "unmapped_versions": stats.unmapped_versions,
        }
    no_facts_why: dict[str, Any] = {"no_facts_reason": no_facts_reason} if no_facts_reason else {}
    result = score(
        queries,
        records,
        ks,
        oracle=oracle if oracle is not None else "evalset",
        catalog=catalog,
        by=by,
        top_k=cfg.top_k,
        facts=facts,
        **no_facts_why,
    )
    if mapping_info is not None:
        result["unmapped"]["mapping"] = mapping_info
    # the missed and leaking queries by name, each leaked document with the reasons its asker may not see it
    fq.attach(result, queries, records, ks, catalog, oracle if oracle is not None else "evalset")
    p = pre[0] if pre else None
    if p is not None:
        result["preflight"] = p.as_dict()
    judge(result, max_error_rate, p)
    if partial:
        mark_partial(result, len(records), total, interrupt)
    if scoring_progress is not None:
        scoring_progress(n, n)
    snapshots = sorted(
        {str((r.model_extra or {}).get("snapshot")) for r in records if (r.model_extra or {}).get("snapshot")}
    )
    info = {
        "target": getattr(target, "name", "unknown"),
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "top_k": cfg.top_k,
        "concurrency": cfg.concurrency,
        "snapshot": snapshots[0] if len(snapshots) == 1 else snapshots,
        "drivebench_version": __version__,
    }
    info.update(run_info or {})
    reported = server_faults(records)
    if reported is not None:  # what the server says it ran with beats what the caller assumed
        info["faults"] = reported
    if done:
        info["resumed"] = {"answered_before": len(answered_before), "asked": len(records) - len(answered_before)}
    result["run_info"] = info
    return Evaluation(records, with_status_first(result), preflight=p, raw_records=raw_records)


def corpus_facts(corpus_dir: Path | None) -> tuple[list[CorpusFact] | None, str | None]:
    """The facts of the corpus at ``corpus_dir`` (loaded once per run) and, when there are none, why: answer leaks
    are then "not measured", never 0. A malformed facts.jsonl is a ValueError naming the file and line."""
    if corpus_dir is None:
        return None, None
    facts = load_facts(corpus_dir)
    return facts, None if facts is not None else NO_CORPUS_FACTS


def _carried(queries: Sequence[EvalQuery], tag: str) -> bool:
    try:
        tag_strata(queries, [tag])
    except ValueError:
        return False
    return True


def mark_partial(result: dict[str, Any], answered: int, total: int, interrupt: Interrupt | None) -> None:
    """Mark ``result`` partial: ``partial``, ``completion`` (answered of total, what stopped it) and ``status``
    (``"partial"`` unless the run failed; the reason says the metrics are over the answered queries only)."""
    why = interrupt.signal if interrupt is not None and interrupt.signal else "stopped"
    result["partial"] = True
    result["completion"] = {
        "answered": answered,
        "queries": total,
        "unanswered": total - answered,
        "stopped_by": why,
    }
    status = result.setdefault("status", {"state": "ok", "reason": ""})
    sentence = (
        f"PARTIAL run: interrupted ({why}) after {answered} of {total} queries; every figure is over those "
        f"{answered} answered queries only"
    )
    if status.get("state") == "failed":
        status["reason"] = f"{sentence}; and {status.get('reason', '')}"
    else:
        status["state"], status["reason"] = "partial", sentence


def server_faults(records: Sequence[RunRecord]) -> list[str] | None:
    """The faults the target reported (``X-Drivebench-Faults``; over MCP ``_meta["drivebench/faults"]``) over the
    run: every distinct fault spec (name and all parameters, seeds included) in first-seen order; ``[]`` when
    every response said ``none`` (a clean simulator); ``None`` when no response carried it (another endpoint)."""
    seen: list[str] = []
    reported = False
    for r in records:
        value = (r.model_extra or {}).get("faults")
        if not isinstance(value, str):
            continue
        reported = True
        for spec in value.split(","):
            spec = spec.strip()
            if spec and spec != "none" and spec not in seen:
                seen.append(spec)
    return seen if reported else None


def write_outputs(evaluation: Evaluation, out_dir: Path) -> Path:
    """run.jsonl (replaced atomically and fsync'd), failed_queries.jsonl and metrics.json. A partial run's run.jsonl
    keeps the records as the target returned them (``raw_records``): ``--resume`` maps them with the rest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    keep = evaluation.raw_records if evaluation.partial and evaluation.raw_records is not None else evaluation.records
    replace_jsonl(out_dir / "run.jsonl", keep)
    section = evaluation.result.get("failed_queries")
    if isinstance(section, dict):  # every missed or leaking query by name; metrics.json keeps the first rows
        fq.write_failed_queries(section.get("rows") or [], out_dir / fq.FAILED_QUERIES_JSONL)
    write_metrics(evaluation.result, out_dir / METRICS_JSON)
    evaluation.out_dir = out_dir
    return out_dir


def replace_jsonl(path: Path, records: Sequence[RunRecord]) -> Path:
    """Write ``records`` to a temporary file beside ``path``, fsync it, and rename it over ``path``: a reader (or a
    crash) sees the old file or the new one, never half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    write_jsonl(tmp, records)
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def write_metrics(result: dict[str, Any], path: Path) -> Path:
    """metrics.json with ``status``, ``errors`` and ``preflight`` first (the rest as computed): ``result.py`` writes it."""
    return write_metrics_dict(result, path)
