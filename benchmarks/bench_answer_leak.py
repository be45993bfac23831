"""What answer-leak scoring adds to an eval run: the default eval set with answers, scored with and without it.

The default corpus (``acme-zh@3``, which writes ``facts.jsonl``) is served in process, its eval set asked once in
answer mode (the clean simulator) and once more under ``answer-unfiltered-context`` (answers that state facts of
forbidden documents: every leak is also explained). Each answer set is then scored as ``eval run`` scores it
(``score`` with the corpus's leak oracle, catalog and top_k, then the missed/leaking queries by name), without
answer leaks (``facts=None``) and with them (``load_facts`` + every answer matched against every fact, each stated
fact's owners judged by the same oracle). A fresh oracle for every scoring (a run builds one; its decisions are
memoised), not timed; runs interleaved, best of 3. Acceptance: on the clean answers, answer-leak scoring adds at
most 10 % wall time; the leaking answers' cost (each leaked fact's owners judged and explained) is reported.

Prints and writes ``benchmarks/results/bench_answer_leak.json`` and ``.md``.
Run: ``.venv/bin/python benchmarks/bench_answer_leak.py`` (``BENCH_CORPUS`` for another corpus).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drivebench.api import load_simulator
from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.evaluator import failed_queries as fq
from drivebench.evaluator.evaluate import corpus_facts, evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.scoring import score
from drivebench.experiments.fault_comparison import corpus_catalog
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import report_checks

CORPUS = os.environ.get("BENCH_CORPUS", DEFAULT_CORPUS)
KS, TOP_K, REPEAT = (1, 3, 5, 10), 10, 3
MAX_ADDED = 0.10  # the acceptance: answer-leak scoring adds at most 10 % to the scoring's wall time


def main() -> int:
    started = time.perf_counter()
    sim = load_simulator(CORPUS)
    corpus_dir = sim.corpus_dir
    assert corpus_dir is not None
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    catalog = corpus_catalog(corpus_dir)
    print(f"{CORPUS}: {len(queries)} queries, simulator loaded in {time.perf_counter() - started:.1f} s")
    cfg = RunConfig(top_k=TOP_K, concurrency=4, mode="answer")
    answer_sets: dict[str, Any] = {}
    for label, fault in (("clean", None), ("answer-unfiltered-context", "answer-unfiltered-context")):
        sim.faults.clear()
        if fault:
            sim.faults.enable(fault)
        t0 = time.perf_counter()
        answer_sets[label] = evaluate(InProcessTarget(sim), queries, ks=KS, run_config=cfg).records
        print(f"  {label}: answered in {time.perf_counter() - t0:.1f} s")
    sim.faults.clear()

    def scoring(records: list[Any], with_facts: bool) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            oracle = corpus_oracle(corpus_dir)  # fresh, as every run builds one: memoised decisions never carry over
            t0 = time.perf_counter()
            facts, reason = corpus_facts(corpus_dir) if with_facts else (None, None)
            result = score(
                queries,
                records,
                KS,
                oracle=oracle,
                catalog=catalog,
                top_k=TOP_K,
                facts=facts,
                **({"no_facts_reason": reason} if reason else {}),
            )
            fq.attach(result, queries, records, KS, catalog, oracle)
            result["_wall_s"] = time.perf_counter() - t0
            return result

        return run

    fns = {
        f"{label}/{'with' if with_facts else 'without'}": scoring(records, with_facts)
        for label, records in answer_sets.items()
        for with_facts in (False, True)
    }
    wall = dict.fromkeys(fns, float("inf"))
    out: dict[str, dict[str, Any]] = {}
    for _ in range(REPEAT):  # interleaved: every variant sees the same machine load
        for name, fn in fns.items():
            out[name] = fn()
            wall[name] = min(wall[name], out[name]["_wall_s"])
    facts = corpus_facts(corpus_dir)[0]
    rows = []
    for label in answer_sets:
        without, with_ = wall[f"{label}/without"], wall[f"{label}/with"]
        r = out[f"{label}/with"]
        section = r["answer_leaks"] or {}
        rows.append(
            {
                "answers": label,
                "scoring_without_s": round(without, 3),
                "scoring_with_s": round(with_, 3),
                "added_s": round(with_ - without, 3),
                "ratio_with_over_without": round(with_ / without, 3),
                "answer_leak_rate": r["metrics"]["answer_leak_rate"],
                "queries_with_answer_leak": section.get("queries_with_answer_leak"),
                "queries_judged": section.get("queries_judged"),
                "facts_leaked": section.get("facts_leaked"),
                "upper_bound_95": round(section.get("upper_bound_95") or 0.0, 5),
                "queries_with_leak": r["counts"].get("queries_with_leak"),
                "added_ms_per_leaked_fact": round(1000 * (with_ - without) / section["facts_leaked"], 2)
                if section.get("facts_leaked")
                else None,
            }
        )
    result = {
        "corpus": CORPUS,
        "queries": len(queries),
        "facts": len(facts) if facts is not None else None,
        "best_of": REPEAT,
        "max_added": MAX_ADDED,
        "rows": rows,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(f"scoring {len(queries)} answered queries of {CORPUS} ({result['facts']} facts), best of {REPEAT}:")
    for row in rows:
        print(
            f"  {row['answers']:26s} without {row['scoring_without_s']:.3f} s  with {row['scoring_with_s']:.3f} s  "
            f"ratio {row['ratio_with_over_without']:.3f}  answer leaks {row['queries_with_answer_leak']} of "
            f"{row['queries_judged']} (<= {100 * row['upper_bound_95']:.2f} %)"
        )
    # the acceptance is about a run that does not leak (the default eval set on the clean simulator); a leaking run
    # pays for what it finds: every owner of a stated forbidden fact judged (a Casbin decision, ~5 ms) and explained
    checks = {
        f"clean: answer-leak scoring adds <= {MAX_ADDED:.0%} wall time": rows[0]["ratio_with_over_without"]
        <= 1 + MAX_ADDED
    }
    checks["the clean simulator's answers leak no fact"] = rows[0]["queries_with_answer_leak"] == 0
    checks["answer-unfiltered-context's answers leak facts"] = (rows[1]["queries_with_answer_leak"] or 0) > 0
    report_checks("bench_answer_leak", result, checks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
