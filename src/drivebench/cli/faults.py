"""``drivebench demo --fault NAME``: the damage a fault profile does, beside a clean baseline."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from drivebench.cli.common import console, err_console, load_with_progress, progress_bar
from drivebench.cli.options import parse_ks


def fault_demo(
    corpus: str,
    out: Path | None,
    k: str,
    pipeline: str,
    embedder: str,
    fault: list[str],
    answers: bool,
    history: str | None = None,
    label: str | None = None,
    answer_levers: dict[str, Any] | None = None,
    rerank: str | None = None,
) -> None:
    """Evaluate under the faults, then clean; write both runs (run.jsonl, metrics.json, report.md,
    report.html, recorded in the history like the clean demo) and comparison.json."""
    from drivebench.cli.eval_common import default_out_dir
    from drivebench.cli.reports import finish_run
    from drivebench.corpora.builtin import corpus_version
    from drivebench.evaluator.evaluate import corpus_facts, evalset_hash, write_outputs
    from drivebench.evaluator.oracle import corpus_oracle
    from drivebench.experiments.fault_comparison import comparison_table, corpus_catalog, fault_comparison
    from drivebench.formats.corpus import EVALSET_NAME
    from drivebench.formats.evalset import load_evalset
    from drivebench.server.process import start_in_thread
    from drivebench.simulator.backend import SimConfig
    from drivebench.simulator.faults import FaultSpecError, parse_fault_specs

    started = time.perf_counter()
    ks = parse_ks(k)
    try:
        faults = parse_fault_specs(fault)
    except FaultSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fault") from None
    sim = load_with_progress(
        corpus, SimConfig(pipeline=pipeline, rerank=rerank, embedder=embedder, **(answer_levers or {}))
    )
    assert sim.corpus_dir is not None
    evalset = sim.corpus_dir / EVALSET_NAME
    queries = load_evalset(evalset)
    facts, no_facts_reason = corpus_facts(sim.corpus_dir)
    if any(f.name == "cad-blind" for f in faults) and not any(
        d.file_type == "dxf" for d in sim.drive.documents.values()
    ):
        err_console.print(f"[yellow]corpus {sim.drive.name} has no dxf documents: cad-blind changes nothing here[/]")
    with start_in_thread(sim) as server, progress_bar() as bar:
        err_console.print(f"simulator listening on {server.url}")

        def progress(label: str, total: int) -> Callable[[], None]:
            task = bar.add_task(f"{label}: {len(queries)} queries over HTTP", total=total)
            return lambda: bar.advance(task)

        cmp = fault_comparison(
            sim,
            server.url,
            queries,
            faults,
            ks=ks,
            answers=answers,
            oracle=corpus_oracle(sim.corpus_dir),
            catalog=corpus_catalog(sim.corpus_dir),
            progress=progress,
            facts=facts,
            no_facts_reason=no_facts_reason,
            run_info={
                "corpus": sim.drive.name,
                "corpus_version": corpus_version(sim.corpus_dir),
                "evalset": str(evalset),
                "evalset_hash": evalset_hash(evalset),
                "pipeline": pipeline,
                "rerank": sim.reranker,
                "embedder": embedder,
                **({"label": label} if label else {}),
            },
        )
    base = out or default_out_dir()
    for label, evaluation in (("clean", cmp.clean), ("faulted", cmp.faulted)):  # reports like the clean demo's
        run_dir = write_outputs(evaluation, base / label)
        finish_run(evaluation.result, run_dir, history, details=False)
    summary = {
        "faults": [f.as_dict() for f in cmp.faults],
        "mode": cmp.mode,
        "scenario": cmp.scenario,
        "injected": cmp.injected,
        "headline": [{"metric": m, "clean": c, "faulted": f} for m, c, f in cmp.headline(max(ks))],
        "paired": cmp.comparison,
    }
    (base / "comparison.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    console.print(comparison_table(cmp, max(ks)))
    if cmp.scenario:
        console.print(f"scenario applied while faulted: {json.dumps(cmp.scenario, ensure_ascii=False)}")
    console.print(f"injected: {json.dumps(cmp.injected)}")
    console.print(
        f"wrote {base}/clean, {base}/faulted (run.jsonl, metrics.json, report.md, report.html) and "
        f"{base / 'comparison.json'} in {time.perf_counter() - started:.1f} s"
    )
