"""A small synthetic eval set, run and catalog that exercise every section of the reports.

``sample_inputs(seed)`` makes them (deterministic for a seed); ``sample_result(seed)`` scores them
with ``scoring.score`` and adds a ``run_info`` like ``evaluate`` does. Used by the report, history
and TREC tests, and handy to preview a report without serving a corpus::

    python -c "from drivebench.evaluator.report.sample import sample_result; \\
               from drivebench.evaluator.report.outputs import write_reports; \\
               write_reports(sample_result(), 'reports/sample')"

What is in it: four departments and five file types; roles; single, multi-hop (2 and 3 hops),
version-pinned and permission queries; queries without gold; forbidden documents some of which
the run leaks (of every secret level); answers with resolvable, wrong and unresolvable citations;
one errored query, one missing from the run, one result list with a duplicated document; a ``phrasing``
tag whose ``cross_language`` group is too small to read (4 of 64 queries).
"""

from __future__ import annotations

import random
from typing import Any

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, RunRecord

DEPARTMENTS = ("finance", "hr", "rd", "legal")
FILE_TYPES = ("pdf", "docx", "xlsx", "pptx", "md")
LEVELS = ("public", "internal", "confidential", "secret")
ROLES = ("engineer", "manager", "intern", "accountant")
KINDS = ("single", "multi_hop", "version", "permission")
PHRASINGS = ("paraphrase", "known_item")
TEXTS = (
    "报价单",
    "项目X的技术方案审批人是谁?",
    "What is the travel reimbursement limit for a manager visiting a client abroad next quarter?",
    "Q3 budget",
    "研发部2026年第四季度的重点工作和负责人分别是什么，需要哪些部门配合完成验收？",
)


def _doc(i: int) -> CatalogDoc:
    ft = FILE_TYPES[i % len(FILE_TYPES)]
    return CatalogDoc(
        doc_id=f"d{i:03d}",
        name=f"doc{i:03d}.{ft}",
        path=f"/{DEPARTMENTS[i % 4]}/doc{i:03d}.{ft}",
        file_type=ft,
        department=DEPARTMENTS[(i // 5) % 4],
        secret_level=LEVELS[(i // 3) % 4],
        version_ids=(f"d{i:03d}-v1", f"d{i:03d}-v2"),
    )


def sample_inputs(seed: int = 0, n_queries: int = 64) -> tuple[list[EvalQuery], list[RunRecord], Catalog]:
    rng = random.Random(seed)
    n_docs = 48
    catalog = Catalog([_doc(i) for i in range(n_docs)])
    docs = [f"d{i:03d}" for i in range(n_docs)]
    queries: list[EvalQuery] = []
    run: list[RunRecord] = []
    for qi in range(n_queries):
        qid = f"q{qi:03d}"
        kind = KINDS[qi % len(KINDS)]
        role = ROLES[(qi // 2) % len(ROLES)]
        gold: list[dict[str, Any]] = []
        hops: list[str] | None = None
        forbidden = rng.sample(docs, 2)
        pool = [d for d in docs if d not in forbidden]
        if kind == "multi_hop":
            hops = rng.sample(pool, 2 + (qi // 4) % 2)
            gold = [{"doc_id": d} for d in hops]
        elif kind == "version":
            d = rng.choice(pool)
            gold = [{"doc_id": d, "version_id": f"{d}-v2", "grade": 2}]
        elif kind == "permission" and qi % 8 == 3:
            gold = []  # the principal may open nothing relevant: a refusal is right
        else:
            gold = [{"doc_id": d, "grade": rng.randint(1, 2)} for d in rng.sample(pool, 1 + qi % 3)]
        queries.append(
            EvalQuery(
                query_id=qid,
                query=TEXTS[qi % len(TEXTS)],
                user_role=role,
                gold=gold,
                hops=hops,
                forbidden=forbidden,
                tags={"kind": kind, "phrasing": "cross_language" if qi % 16 == 9 else PHRASINGS[qi % 2]},
            )
        )
        if qi == n_queries - 1:
            continue  # missing from the run
        if qi == 5:
            run.append(RunRecord(query_id=qid, error="HTTP 503", latency_ms=30.0))
            continue
        gold_ids = [g["doc_id"] for g in gold]
        ranked = rng.sample(pool, 8)
        for g in gold_ids:  # put each gold doc somewhere, sometimes past the 10 returned
            pos = rng.choice((0, 0, 1, 2, 4, 7, 11))
            if g in ranked:
                ranked.remove(g)
            ranked.insert(min(pos, len(ranked)), g)
        if qi % 5 == 0:  # a leak
            ranked.insert(rng.randint(0, 6), forbidden[0])
        if qi % 10 == 0 and len(gold_ids) > 1:  # not retrieved, yet cited below
            ranked.remove(gold_ids[-1])
        if qi == 7:  # another chunk of the same file
            ranked.insert(3, ranked[0])
        results = []
        for rank, d in enumerate(ranked[:10], 1):
            version = f"{d}-v2"
            if kind == "version" and d in gold_ids and qi % 3 == 0:
                version = f"{d}-v1"  # stale
            results.append({"doc_id": d, "version_id": version, "score": round(1.0 - rank / 20, 4), "rank": rank})
        answer = None
        if qi % 2 == 0:
            top = [str(r["doc_id"]) for r in results[:3]]
            cites = [f"[[{top[0]}]]", f"[{catalog.docs[top[1]].name}]"]
            if qi % 6 == 0:
                cites.append("[[missing-file.pdf]]")
            if qi % 10 == 0 and len(gold_ids) > 1:
                cites.append(f"[[{gold_ids[-1]}]]")  # cited without having been retrieved
            answer = "Answer. " + " ".join(cites)
        run.append(
            RunRecord(query_id=qid, results=results, latency_ms=round(20 + rng.random() * 180, 3), answer=answer)
        )
    return queries, run, catalog


def sample_result(seed: int = 0, n_queries: int = 64, *, resamples: int = 300, **run_info: Any) -> dict[str, Any]:
    """``scoring.score`` of ``sample_inputs(seed)`` (evalset oracle, with catalog) plus a ``run_info``."""
    queries, run, catalog = sample_inputs(seed, n_queries)
    result = score(queries, run, oracle="evalset", catalog=catalog, seed=seed, resamples=resamples)
    result["run_info"] = {
        "target": "sample:synthetic",
        "corpus": "synthetic",
        "evalset_hash": f"sha256:sample-{n_queries}",
        "snapshot": f"sha256:sample-snapshot-{seed}",
        "started_at": f"2026-0{1 + seed % 9}-01T00:00:00+00:00",
        "drivebench_version": "0.1.0",
        **run_info,
    }
    return result
