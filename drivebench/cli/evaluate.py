"""``drivebench eval run`` and ``drivebench eval score``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import typer

from drivebench.cli.common import console, err_console, progress_bar, quiet_libraries
from drivebench.cli.options import parse_ks
from drivebench.cli.reports import HistoryOpt, finish_run  # issue #6: reports + history

app = typer.Typer(no_args_is_help=True)


def default_out_dir() -> Path:
    return Path("reports") / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


@app.command("run")
def run(
    target: str = typer.Option(..., "--target", help="Base URL of a recall endpoint, e.g. http://127.0.0.1:8000"),
    token: str = typer.Option(..., "--token", envvar="DRIVEBENCH_TOKEN", help="Bearer token (the evaluation token)."),
    evalset: Path = typer.Option(..., "--evalset", exists=True, dir_okay=False, help="Eval set JSONL."),
    k: str = typer.Option("1,3,5,10", "--k", help="Cutoffs, comma-separated."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default reports/<timestamp>)."),
    corpus: str | None = typer.Option(
        None, "--corpus", help="Corpus (name or dir) whose policies are the leak oracle."
    ),
    concurrency: int = typer.Option(8, min=1, max=256, help="Requests in flight."),
    timeout: float = typer.Option(30.0, help="Per-request timeout in seconds."),
    field: list[str] = typer.Option([], "--field", help="Response mapping FIELD=KEY (e.g. doc_id=file_id)."),
    history: str | None = HistoryOpt,  # issue #6: run history
    answers: bool = typer.Option(  # issue #7
        False, "--answers", help="Call the answer endpoint (/api/mcp/answer, or the MCP answer tool): score citations."
    ),
    citation_style: str = typer.Option(
        "brackets", "--citation-style", help="With --answers: brackets, ids or footnotes."
    ),
    mcp: bool = typer.Option(False, "--mcp", help="--target is an MCP endpoint (e.g. http://127.0.0.1:8000/mcp/)."),
) -> None:
    """Call the endpoint for each query as the query's principal; write run.jsonl and metrics.json."""
    from drivebench.evaluator.evaluate import evalset_hash, evaluate, write_outputs
    from drivebench.evaluator.report.terminal import print_summary
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.schema import load_evalset
    from drivebench.evaluator.targets.http import HttpTarget, ResponseMapping

    quiet_libraries()
    ks = parse_ks(k)
    queries = load_evalset(evalset)
    try:
        mapping = ResponseMapping.parse(field)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    oracle = None
    if corpus is not None:
        from drivebench.corpora.builtin import resolve_corpus
        from drivebench.evaluator.oracle import corpus_oracle

        oracle = corpus_oracle(resolve_corpus(corpus))
    catalog = None
    if corpus is not None:  # issue #7: the corpus catalog resolves cited file names
        from drivebench.simulator.faults.compare import corpus_catalog

        catalog = corpus_catalog(resolve_corpus(corpus))
    if mcp:
        from drivebench.evaluator.targets.mcp import McpTarget

        http = McpTarget(target, token, mapping=mapping, timeout=timeout, citation_style=citation_style)
    else:
        http = HttpTarget(target, token, mapping=mapping, timeout=timeout, citation_style=citation_style)
    mode = "answer" if answers else "recall"
    with progress_bar() as bar:
        task = bar.add_task(f"{mode} × {len(queries)}", total=len(queries))
        evaluation = evaluate(
            http,  # type: ignore[arg-type]
            queries,
            ks=ks,
            run_config=RunConfig(top_k=max(10, max(ks)), concurrency=concurrency, mode=mode),
            oracle=oracle,
            catalog=catalog,
            progress=lambda: bar.advance(task),
            run_info={"evalset": str(evalset), "evalset_hash": evalset_hash(evalset)},
        )
    out_dir = write_outputs(evaluation, out or default_out_dir())
    print_summary(evaluation.result, console)
    finish_run(evaluation.result, out_dir, history)  # issue #6: report.md, report.html, history
    err_console.print(f"wrote {out_dir / 'run.jsonl'} and {out_dir / 'metrics.json'}")


@app.command("score")
def score_cmd(
    evalset: Path = typer.Option(..., "--evalset", exists=True, dir_okay=False),
    run_file: Path = typer.Option(..., "--run", exists=True, dir_okay=False),
    k: str = typer.Option("1,3,5,10", "--k"),
    json_out: Path | None = typer.Option(None, "--json", help="Write the metrics JSON here."),
    corpus: str | None = typer.Option(None, "--corpus", help="Corpus whose policies are the leak oracle."),
) -> None:
    """Score a run file offline."""
    from drivebench.evaluator.report.terminal import print_summary
    from drivebench.evaluator.schema import load_evalset, load_run
    from drivebench.evaluator.scoring import score

    ks = parse_ks(k)
    queries, records = load_evalset(evalset), load_run(run_file)
    oracle = None
    if corpus is not None:
        from drivebench.corpora.builtin import resolve_corpus
        from drivebench.evaluator.oracle import corpus_oracle

        oracle = corpus_oracle(resolve_corpus(corpus))
    result = score(queries, records, ks, oracle=oracle if oracle is not None else "evalset")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print_summary(result, console)
