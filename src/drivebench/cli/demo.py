"""``drivebench demo``: load the default corpus, serve it, evaluate it over HTTP, print and write the results."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from drivebench.cli.common import console, err_console, load_with_progress, progress_bar
from drivebench.cli.options import (
    AnswerCitationOpt,
    AnswerLengthOpt,
    AnswerPassagesOpt,
    CorpusOpt,
    EmbedderOpt,
    ExtractOpt,
    LabelOpt,
    PipelineOpt,
    RerankOpt,
    answer_config,
    parse_extract,
    parse_ks,
)
from drivebench.cli.reports import HistoryOpt, attach_previous, finish_run  # reports + history


def demo(
    corpus: str = CorpusOpt,
    out: Path | None = typer.Option(None, "--out", help="Output directory (default reports/<timestamp>)."),
    k: str = typer.Option("1,3,5,10", "--k"),
    pipeline: str = PipelineOpt,
    rerank: str | None = RerankOpt,
    embedder: str = EmbedderOpt,
    extract: list[str] = ExtractOpt,
    history: str | None = HistoryOpt,  # run history
    label: str | None = LabelOpt,
    fault: list[str] = typer.Option(  # fault profiles
        [],
        "--fault",
        help="Also evaluate under these faults (NAME[:k=v][,NAME]) and show the damage beside a clean run.",
    ),
    answers: bool = typer.Option(
        True,
        "--answers/--no-answers",
        help="Call /api/mcp/answer too (the default): Source Recall Coverage and citation precision are scored.",
    ),
    answer_citation: str = AnswerCitationOpt,
    answer_length: int = AnswerLengthOpt,
    answer_passages: int = AnswerPassagesOpt,
) -> None:
    """Serve the corpus on a free local port, evaluate its eval set over HTTP, print the tables, write the files."""
    levers = answer_config(answer_citation, answer_length, answer_passages)
    if fault:  # clean vs faulted comparison
        from drivebench.cli.faults import fault_demo

        fault_demo(corpus, out, k, pipeline, embedder, fault, answers, history, label, levers, rerank)
        return
    from drivebench.cli.eval_common import default_out_dir, scoring_bar
    from drivebench.corpora.builtin import corpus_version
    from drivebench.evaluator.evaluate import corpus_facts, evalset_hash, evaluate, write_outputs
    from drivebench.evaluator.oracle import corpus_oracle
    from drivebench.evaluator.report.terminal import print_summary
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.targets.http import HttpTarget
    from drivebench.experiments.fault_comparison import corpus_catalog
    from drivebench.formats.corpus import EVALSET_NAME
    from drivebench.formats.evalset import load_evalset
    from drivebench.server.process import start_in_thread
    from drivebench.simulator.backend import SimConfig

    started = time.perf_counter()
    ks = parse_ks(k)
    sim = load_with_progress(
        corpus, SimConfig(pipeline=pipeline, rerank=rerank, embedder=embedder, extract=parse_extract(extract), **levers)
    )
    assert sim.corpus_dir is not None
    evalset = sim.corpus_dir / EVALSET_NAME
    queries = load_evalset(evalset)
    facts, no_facts_reason = corpus_facts(sim.corpus_dir)  # answer leaks: "not measured" for a corpus without facts
    with start_in_thread(sim) as server:
        err_console.print(f"simulator listening on {server.url}")
        target = HttpTarget(server.url, sim.tokens.eval_token)
        with progress_bar() as bar:
            task = bar.add_task(f"{'answer' if answers else 'recall'} × {len(queries)} over HTTP", total=len(queries))
            evaluation = evaluate(
                target,
                queries,
                ks=ks,
                run_config=RunConfig(top_k=max(10, max(ks)), concurrency=4, mode="answer" if answers else "recall"),
                oracle=corpus_oracle(sim.corpus_dir),
                catalog=corpus_catalog(sim.corpus_dir),  # resolves citations, trashed, strata
                progress=lambda: bar.advance(task),
                scoring_progress=scoring_bar(bar),  # the leak oracle's judging: seconds, counted
                facts=facts,
                no_facts_reason=no_facts_reason,
                run_info={
                    "corpus": sim.drive.name,
                    "corpus_version": corpus_version(sim.corpus_dir),  # which version: compare refuses mixed versions
                    "evalset": str(evalset),
                    "evalset_hash": evalset_hash(evalset),
                    "pipeline": pipeline,
                    "rerank": sim.reranker,
                    "embedder": embedder,
                    **({"answer_levers": levers} if answers and levers != answer_config("always", 0, 3) else {}),
                    **({"label": label} if label else {}),
                },
            )
    attach_previous(evaluation.result, history)  # the change since the previous run with this label, stored too
    out_dir = write_outputs(evaluation, out or default_out_dir())
    print_summary(evaluation.result, console)  # the verdict, the failures, the article's three metrics, the rest
    finish_run(evaluation.result, out_dir, history)  # report.md, report.html, history
    console.print(
        f"wrote {out_dir / 'run.jsonl'} and {out_dir / 'metrics.json'} in {time.perf_counter() - started:.1f} s"
    )
