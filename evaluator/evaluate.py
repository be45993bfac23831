"""Evaluate a target end to end: run the eval set, score it, write run.jsonl and metrics.json."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from drivebench import __version__
from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.evaluator.schema import EvalQuery, RunRecord, write_jsonl
from drivebench.evaluator.scoring import DEFAULT_KS, Oracle, score
from drivebench.evaluator.targets.base import Target


@dataclass
class Evaluation:
    records: list[RunRecord]
    result: dict[str, Any]
    out_dir: Path | None = None


def evalset_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


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
) -> Evaluation:
    cfg = run_config or RunConfig(top_k=max(max(ks), 10))
    started = datetime.now(UTC)

    async def go() -> list[RunRecord]:
        try:
            return await run_queries(target, queries, cfg, progress)
        finally:
            await target.aclose()

    records = asyncio.run(go())
    result = score(queries, records, ks, oracle=oracle if oracle is not None else "evalset", catalog=catalog)
    snapshots = sorted({str(r.model_extra.get("snapshot")) for r in records if (r.model_extra or {}).get("snapshot")})
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
    result["run_info"] = info
    return Evaluation(records, result)


def write_outputs(evaluation: Evaluation, out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_jsonl(out_dir / "run.jsonl", evaluation.records)
    (out_dir / "metrics.json").write_text(
        json.dumps(evaluation.result, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    evaluation.out_dir = out_dir
    return out_dir
