"""Send the attack queries as each pair's user and judge every result against the ground truth.

A result is a leak when the ground truth forbids it to the asking user: the pair's own document
(``target``) or any other forbidden document that came back (``collateral``). Every leak carries its
evidence: the surface, the query and its kind, the result (rank, score, id as the target gave it),
and the grant path that should have hidden it (``GroundTruth.why``).

Failed requests are counted by kind (``targets.base.ERROR_KINDS``) and never count as "no leak": a
pair none of whose requests was answered is ``not measured``; the probe fails (``status.state =
failed``) when the preflight failed, when more requests failed than ``max_error_rate`` allows, when
every answered request came back empty, or when no result mapped to the corpus.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drivebench.evaluator.idmap import IdMapper, is_unmapped
from drivebench.evaluator.probe.groundtruth import GroundTruth, Why
from drivebench.evaluator.probe.pairs import Pair
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.formats.evalset import EvalQuery, RunRecord
from drivebench.formats.target import ERROR_KINDS, Target

SURFACES = ("recall", "answer")


@dataclass(frozen=True)
class ProbeConfig:
    per_pair: int = 2  # queries per pair (per surface)
    top_k: int = 10
    budget: int | None = None  # most requests sent (None: no limit)
    concurrency: int = 8
    surfaces: tuple[str, ...] = ("recall",)
    max_error_rate: float = 0.0
    attempts: int = 4
    backoff_base: float = 0.1
    channel: str = "http"  # "http" or "mcp": how the surfaces are reached (leaks say "mcp-recall")

    def run_config(self, surface: str) -> RunConfig:
        """How the runner sends this probe's queries on ``surface``."""
        return RunConfig(
            top_k=self.top_k,
            concurrency=self.concurrency,
            mode=surface,
            attempts=self.attempts,
            backoff_base=self.backoff_base,
        )


@dataclass
class Probe:
    pair: Pair
    surface: str
    kind: str
    text: str
    query: EvalQuery


@dataclass
class ProbeOutcome:
    result: dict[str, Any]
    records: list[tuple[Probe, RunRecord]] = field(default_factory=list)


def plan(pairs: list[Pair], builder: QueryBuilder, cfg: ProbeConfig) -> tuple[list[Probe], list[Pair]]:
    """The requests to send, whole pairs in order until the budget; and the pairs left out."""
    probes: list[Probe] = []
    skipped: list[Pair] = []
    for pair in pairs:
        mine = []
        for i, (kind, text) in enumerate(builder.queries_for(pair.doc_id, cfg.per_pair), 1):
            for surface in cfg.surfaces:
                q = EvalQuery(query_id=f"{pair.pair_id}-{i}-{surface}", query=text, user_id=pair.user_id)
                mine.append(Probe(pair, surface, kind, text, q))
        if cfg.budget is not None and len(probes) + len(mine) > cfg.budget:
            skipped.append(pair)
            continue
        probes.extend(mine)
    return probes, skipped


async def send(
    target: Target, probes: list[Probe], cfg: ProbeConfig, progress: Callable[[], None] | None = None
) -> list[RunRecord]:
    out: dict[str, RunRecord] = {}
    for surface in cfg.surfaces:
        mine = [p.query for p in probes if p.surface == surface]
        for rec in await run_queries(target, mine, cfg.run_config(surface), progress):
            out[rec.query_id] = rec
    return [out[p.query.query_id] for p in probes]


def judge(
    gt: GroundTruth,
    probes: list[Probe],
    records: list[RunRecord],
    skipped: list[Pair],
    cfg: ProbeConfig,
    id_mapper: IdMapper | None = None,
    preflight: dict[str, Any] | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    if id_mapper is not None:
        records, _ = id_mapper.map_records(records)
    whys: dict[tuple[str, str], Why] = {}
    errors: dict[str, dict[str, Any]] = {}
    answered: dict[str, int] = defaultdict(int)
    sent: dict[str, int] = defaultdict(int)
    leaks: list[dict[str, Any]] = []
    results = unmapped = empty = 0
    for probe, rec in zip(probes, records, strict=True):
        pid = probe.pair.pair_id
        sent[pid] += 1
        if rec.error is not None:
            kind = rec.error_kind if rec.error_kind in ERROR_KINDS else "other"
            entry = errors.setdefault(
                kind, {"count": 0, "meaning": ERROR_KINDS[kind], "sample": (rec.error or "")[:300], "requests": []}
            )
            entry["count"] += 1
            if len(entry["requests"]) < 5:
                entry["requests"].append(rec.query_id)
            continue
        answered[pid] += 1
        if not rec.results:
            empty += 1
        for hit in rec.results:
            results += 1
            if is_unmapped(hit):
                unmapped += 1
                continue
            user, doc = probe.pair.user_id, hit.doc_id
            if not gt.forbidden(user, doc):
                continue
            key = (user, doc)
            if key not in whys:
                whys[key] = probe.pair.why if doc == probe.pair.doc_id else _why(gt, user, doc)
            extra = hit.model_extra or {}
            leaks.append(
                {
                    "kind": "target" if doc == probe.pair.doc_id else "collateral",
                    "pair_id": pid,
                    "user_id": user,
                    "department": probe.pair.department,
                    "doc_id": doc,
                    "doc_path": gt.doc_path(doc) if doc in gt.drive.documents else None,
                    "secret_level": gt.level(doc) if doc in gt.drive.documents else None,
                    "surface": probe.surface if cfg.channel == "http" else f"{cfg.channel}-{probe.surface}",
                    "query_kind": probe.kind,
                    "query": probe.text,
                    "request_id": rec.query_id,
                    "result": {
                        "rank": hit.rank,
                        "score": hit.score,
                        "doc_id": doc,
                        "version_id": hit.version_id,
                        "foreign_id": extra.get("foreign_id"),
                        "name": extra.get("name"),
                        "text": extra.get("text"),
                    },
                    "why_forbidden": whys[key].as_dict(),
                }
            )
    n_requests = len(probes)
    failed = sum(e["count"] for e in errors.values())
    n_answered = n_requests - failed
    probed_pairs = {p.pair.pair_id: p.pair for p in probes}
    measured = [pid for pid in probed_pairs if answered[pid] > 0]
    leaked_pairs = {x["pair_id"] for x in leaks if x["kind"] == "target"}
    reasons: list[str] = []
    if preflight is not None and preflight.get("fatal"):
        reasons.append(f"preflight failed: {preflight.get('diagnosis')}")
    rate = failed / n_requests if n_requests else 0.0
    if n_requests and rate > cfg.max_error_rate:
        reasons.append(
            f"{failed} of {n_requests} requests failed ({rate:.1%} > max error rate {cfg.max_error_rate:.1%})"
        )
    if n_answered and empty == n_answered:
        reasons.append("every answered request came back empty: a filter cannot be told from a broken target")
    if results and unmapped == results:
        reasons.append("no result id mapped to a corpus document (check [ids] match)")
    if not n_requests:
        reasons.append("no request was sent (budget too small or no pairs)")
    by_stratum: dict[str, dict[str, dict[str, int]]] = {"reason": {}, "secret_level": {}, "department": {}}
    for pid, pair in probed_pairs.items():
        for axis, value in (("reason", pair.reason), ("secret_level", pair.level), ("department", pair.department)):
            cell = by_stratum[axis].setdefault(value, {"pairs": 0, "measured": 0, "leaked": 0})
            cell["pairs"] += 1
            cell["measured"] += int(answered[pid] > 0)
            cell["leaked"] += int(pid in leaked_pairs)
    docs = Counter(x["doc_id"] for x in leaks)
    return {
        "status": {"state": "failed" if reasons else "ok", "reason": "; ".join(reasons) or None},
        "errors": {
            "requests": n_requests,
            "answered": n_answered,
            "failed": failed,
            "rate": rate,
            "by_kind": dict(sorted(errors.items(), key=lambda kv: -kv[1]["count"])),
        },
        "preflight": preflight,
        "counts": {
            "pairs": len(probed_pairs) + len(skipped),
            "pairs_probed": len(probed_pairs),
            "pairs_measured": len(measured),
            "pairs_not_measured": len(probed_pairs) - len(measured),
            "pairs_over_budget": len(skipped),
            "requests": n_requests,
            "results": results,
            "unmapped_results": unmapped,
            "empty_responses": empty,
            "leaks": len(leaks),
            "target_leaks": sum(1 for x in leaks if x["kind"] == "target"),
            "collateral_leaks": sum(1 for x in leaks if x["kind"] == "collateral"),
            "pairs_leaked": len(leaked_pairs),
            "leaked_documents": len(docs),
            "requests_by_query_kind": dict(Counter(p.kind for p in probes)),
        },
        "leaked_documents": [
            {"doc_id": d, "path": gt.doc_path(d) if d in gt.drive.documents else None, "leaks": n}
            for d, n in docs.most_common()
        ],
        "strata": by_stratum,
        "leaks": leaks,
        "config": {
            "per_pair": cfg.per_pair,
            "top_k": cfg.top_k,
            "budget": cfg.budget,
            "surfaces": list(cfg.surfaces),
            "channel": cfg.channel,
            "max_error_rate": cfg.max_error_rate,
        },
        "seconds": round(seconds, 3) if seconds is not None else None,
        "pairs_per_second": round(len(probed_pairs) / seconds, 2) if seconds else None,
    }


def _why(gt: GroundTruth, user: str, doc: str) -> Why:
    if doc not in gt.drive.documents:
        return Why("no-grant", [{"fact": "the corpus has no such document"}])
    return gt.why(user, doc)


def run_probe(
    target: Target,
    gt: GroundTruth,
    pairs: list[Pair],
    builder: QueryBuilder,
    cfg: ProbeConfig,
    *,
    id_mapper: IdMapper | None = None,
    preflight: dict[str, Any] | None = None,
    progress: Callable[[], None] | None = None,
) -> ProbeOutcome:
    probes, skipped = plan(pairs, builder, cfg)
    started = time.perf_counter()

    async def go() -> list[RunRecord]:
        try:
            return await send(target, probes, cfg, progress)
        finally:
            await target.aclose()

    records = asyncio.run(go()) if probes and not (preflight or {}).get("fatal") else []
    if len(records) != len(probes):  # not sent (fatal preflight): every request is a preflight error
        records = [
            RunRecord(query_id=p.query.query_id, error="not sent: the preflight probe failed", error_kind="preflight")
            for p in probes
        ]
    seconds = time.perf_counter() - started
    result = judge(gt, probes, records, skipped, cfg, id_mapper, preflight, seconds)
    return ProbeOutcome(result, list(zip(probes, records, strict=True)))
