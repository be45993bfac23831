"""``drivebench eval run`` and ``drivebench eval score``: the commands, their options and help. What they do is in
``eval_run`` (run an eval set against a target), ``eval_score`` (score a run file), ``eval_verdict`` (the gates,
the verdict, the exit) and ``eval_common`` (what every ``eval`` command shares).

Exit codes (every ``eval`` command): 0 ok; 1 a query returned a document its asker may not preview
(``--allow-leaks`` waives it), a ``--fail-on`` gate failed, or leaks could not be measured (no oracle;
``--allow-no-oracle`` waives it); 2 usage or configuration error (bad option,
eval set, profile, run file; ``--resume`` of a complete run or with options that contradict the run's); 3 the run
failed (the preflight failed, more queries failed than ``--max-error-rate`` allows, or every answered query came back
empty); ``eval run`` only: 130 (143 for SIGTERM) the run was stopped early (Ctrl-C) and written as a partial run.
"""

from __future__ import annotations

from pathlib import Path

import typer

from drivebench.cli.common import quiet_libraries
from drivebench.cli.eval_common import (
    AllowLeaksOpt,
    AllowNoOracleOpt,
    ByOpt,
    FailOnOpt,
    JsonOpt,
    JunitMissesOpt,
    JunitOpt,
    MatchOpt,
    MaxErrorRateOpt,
)
from drivebench.cli.options import LabelOpt
from drivebench.cli.reports import HistoryOpt

app = typer.Typer(no_args_is_help=True)


@app.command("run")
def run(
    ctx: typer.Context,
    target: str | None = typer.Option(
        None, "--target", help="Recall URL. Without a path: the simulator's /api/mcp/recall; with one: as given."
    ),
    target_profile: Path | None = typer.Option(
        None, "--target-profile", dir_okay=False, help="TOML target profile (URL, body, auth, response, ids)."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        help="Bearer token (overrides the profile's [auth]); default: the profile's [auth], else $DRIVEBENCH_TOKEN.",
    ),
    evalset: Path | None = typer.Option(
        None, "--evalset", exists=True, dir_okay=False, help="Eval set JSONL (required unless --resume/--only-failed)."
    ),
    k: str = typer.Option("1,3,5,10", "--k", help="Cutoffs, comma-separated."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default reports/<timestamp>)."),
    corpus: str | None = typer.Option(
        None, "--corpus", help="Corpus (name or dir): leak oracle, document catalog, and ids for --match."
    ),
    concurrency: int | None = typer.Option(None, min=1, max=256, help="Requests in flight (default 8)."),
    timeout: float | None = typer.Option(None, help="Per-request timeout in seconds (default 30)."),
    field: list[str] = typer.Option([], "--field", help="Response mapping FIELD=KEY (e.g. doc_id=file_id)."),
    match: str | None = MatchOpt,
    history: str | None = HistoryOpt,  # run history
    label: str | None = LabelOpt,
    answers: bool = typer.Option(  # score citations too
        False, "--answers", help="Call the answer endpoint (/api/mcp/answer, or the MCP answer tool): score citations."
    ),
    citation_style: str = typer.Option(
        "brackets", "--citation-style", help="With --answers: brackets, ids or footnotes."
    ),
    mcp: bool = typer.Option(False, "--mcp", help="--target is an MCP endpoint (e.g. http://127.0.0.1:8000/mcp/)."),
    max_error_rate: float = MaxErrorRateOpt,
    probe: bool = typer.Option(True, "--preflight/--no-preflight", help="Send one probe request before the run."),
    fail_on: list[str] = FailOnOpt,
    junit: Path | None = JunitOpt,
    junit_misses: bool = JunitMissesOpt,
    json_out: str | None = JsonOpt,
    allow_no_oracle: bool = AllowNoOracleOpt,
    allow_leaks: bool = AllowLeaksOpt,
    by: list[str] = ByOpt,
    resume: Path | None = typer.Option(
        None,
        "--resume",
        exists=True,
        file_okay=False,
        help="Continue the partial run in RUN_DIR (stopped by Ctrl-C): ask only its unanswered queries, with its "
        "recorded options, and write the whole run there.",
    ),
    only_failed: Path | None = typer.Option(
        None,
        "--only-failed",
        exists=True,
        file_okay=False,
        help="Ask again only the queries that missed or leaked in RUN_DIR (a new run, labelled 'only-failed of "
        "RUN_DIR', kept out of trends).",
    ),
) -> None:
    """Call the endpoint for each query as the query's principal; write run.jsonl, metrics.json, reports.

    Ctrl-C stops sending, lets the requests in flight finish (a few seconds), and writes the answered queries as a
    partial run (exit 130; SIGTERM 143): `--resume RUN_DIR` asks the rest.

    Exit codes: 0 ok; 1 a leak (unless --allow-leaks), a --fail-on gate failed, or leaks could not be measured; 2 usage or
    configuration error (also: --resume of a complete run, or options that contradict the run's); 3 the run failed
    (preflight, --max-error-rate, or every answer empty); 130 a partial run (interrupted).
    """
    from drivebench.cli.eval_run import Sending, run_eval

    quiet_libraries()
    given = {
        "target": target,
        "target_profile": target_profile,
        "mcp": mcp,
        "evalset": evalset,
        "corpus": corpus,
        "k": k,
        "match": match,
        "field": field,
        "answers": answers,
        "citation_style": citation_style,
        "by": by,
        "label": label,
        "max_error_rate": max_error_rate,
        "fail_on": fail_on,
        "allow_leaks": allow_leaks,
        "allow_no_oracle": allow_no_oracle,
    }
    sending = Sending(token, out, concurrency, timeout, probe, junit, junit_misses, json_out, history)
    run_eval(ctx, given, sending, resume, only_failed)


@app.command("score")
def score_cmd(
    evalset: Path | None = typer.Option(None, "--evalset", exists=True, dir_okay=False, help="Eval set JSONL."),
    qrels: Path | None = typer.Option(
        None, "--qrels", exists=True, dir_okay=False, help="TREC qrels (qid 0 docid grade) instead of an eval set."
    ),
    run_file: Path = typer.Option(
        ..., "--run", exists=True, help="Run: JSONL, a TREC run file (qid Q0 docid rank score tag), or a run directory."
    ),
    k: str = typer.Option("1,3,5,10", "--k"),
    json_out: str | None = JsonOpt,
    corpus: str | None = typer.Option(None, "--corpus", help="Corpus whose policies are the leak oracle."),
    match: str | None = MatchOpt,
    max_error_rate: float = MaxErrorRateOpt,
    fail_on: list[str] = FailOnOpt,
    junit: Path | None = JunitOpt,
    junit_misses: bool = JunitMissesOpt,
    allow_no_oracle: bool = AllowNoOracleOpt,
    allow_leaks: bool = AllowLeaksOpt,
    by: list[str] = ByOpt,
    label: str | None = LabelOpt,
) -> None:
    """Score a run file offline (JSONL or TREC, against an eval set or TREC qrels).

    Exit codes: 0 ok; 1 a leak (unless --allow-leaks), a --fail-on gate failed, or leaks could not be measured; 2 usage or
    configuration error (a bad line is reported as file:line); 3 more queries failed than --max-error-rate.
    """
    from drivebench.cli.eval_score import score_run

    score_run(
        evalset=evalset,
        qrels=qrels,
        run_file=run_file,
        k=k,
        json_out=json_out,
        corpus=corpus,
        match=match,
        max_error_rate=max_error_rate,
        gates_given=fail_on,
        junit=junit,
        junit_misses=junit_misses,
        allow_no_oracle=allow_no_oracle,
        allow_leaks=allow_leaks,
        by=by,
        label=label,
    )
