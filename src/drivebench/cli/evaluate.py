"""``drivebench eval run`` and ``drivebench eval score``.

Exit codes (every ``eval`` command): 0 ok; 1 a query returned a document its asker may not preview
(``--allow-leaks`` waives it), a ``--fail-on`` gate failed, or leaks could not be measured (no oracle;
``--allow-no-oracle`` waives it); 2 usage or configuration error (bad option,
eval set, profile, run file; ``--resume`` of a complete run or with options that contradict the run's); 3 the run
failed (the preflight failed, more queries failed than ``--max-error-rate`` allows, or every answered query came back
empty); ``eval run`` only: 130 (143 for SIGTERM) the run was stopped early (Ctrl-C) and written as a partial run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, TaskID

from drivebench.cli.common import (
    console,
    err_console,
    progress_bar,
    quiet_libraries,
    resolve_corpus_option,
    status,
)
from drivebench.cli.options import LabelOpt, parse_ks
from drivebench.cli.reports import HistoryOpt, attach_previous, finish_run  # reports + history

app = typer.Typer(no_args_is_help=True)

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_RUN_FAILED = 0, 1, 2, 3

FailOnOpt = typer.Option(
    [], "--fail-on", help="CI gate NAME OP NUMBER, repeatable: exit 1 when it holds (e.g. 'leak_rate@10>0')."
)
JunitOpt = typer.Option(
    None, "--junit", help="Write a JUnit XML file: a test case per gate, per leaking query and per failed query."
)
JunitMissesOpt = typer.Option(
    False, "--junit-misses", help="In the JUnit file, a missed query (no gold in the top 10) is a failing case too."
)
JsonOpt = typer.Option(None, "--json", help="Write the result as JSON to this file ('-' = stdout).")
MaxErrorRateOpt = typer.Option(
    0.0, "--max-error-rate", min=0.0, max=1.0, help="Largest share of failed queries before the run fails (exit 3)."
)
AllowNoOracleOpt = typer.Option(
    False, "--allow-no-oracle", help="Exit 0 although leaks could not be measured (no oracle)."
)
AllowLeaksOpt = typer.Option(
    False, "--allow-leaks", help="Exit 0 although queries returned documents their askers may not preview."
)
ByOpt = typer.Option(
    [],
    "--by",
    help="Also break metrics down by this eval-set tag (each query's tags[TAG]), repeatable; phrasing, style and "
    "noise are included whenever the eval set has them.",
)
MatchOpt = typer.Option(
    None, "--match", help="Map result ids to the corpus: doc_id, path, name, or a CSV/JSONL map file (needs --corpus)."
)


def default_out_dir() -> Path:
    return Path("reports") / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def usage_error(message: str, hint: str | None = None) -> NoReturn:
    """An input error: the CLI's one handler prints ``error: [file:line: ]message`` and a ``hint:`` line on stderr
    and exits 2 (no traceback unless --debug)."""
    import click

    from drivebench.errors import FILE_LINE, DrivebenchError

    located = FILE_LINE.match(message)
    if located:
        line = located["line"]
        default = (
            f"fix line {line}; docs/evaluation-files.md gives the eval-set and run formats"
            if located["path"].endswith((".jsonl", ".trec", ".txt"))
            else f"fix line {line} of that file"
        )
        raise DrivebenchError(located["rest"], hint=hint or default, path=located["path"], line=int(line))
    ctx = click.get_current_context(silent=True)
    where = f"`{ctx.command_path} --help`" if ctx is not None else "`drivebench --help`"
    raise DrivebenchError(message, hint=hint or f"{where} lists the options")


def resolve_target(
    target_profile: Path | None, target: str | None, token: str | None, mcp: bool
) -> tuple[Any, str, str | None, dict[str, str]]:
    """The target profile, the URL, the single token and the per-principal tokens of ``eval run`` and ``probe``:
    CLI flags over the profile, the profile's ``[auth]`` over ``DRIVEBENCH_TOKEN``. Usage errors exit 2."""
    from drivebench.cli.preflight import check_url
    from drivebench.evaluator.targets.profile import ProfileError, TargetProfile, load_profile, with_target

    try:
        profile = load_profile(target_profile) if target_profile is not None else TargetProfile()
        if target:
            check_url(target)  # a mistyped scheme is a usage error, not "is the server running?"
        url = (target if mcp else with_target(profile, target)) if target else profile.request.url
        if not url:
            usage_error("no target: give --target URL or a --target-profile with [request] url")
        if not target:
            check_url(url, f"[request] url of {target_profile}")
        single, per_principal = profile.tokens() if token is None else (token, {})
        if token is None and not single and not per_principal:
            single = os.environ.get("DRIVEBENCH_TOKEN") or None
    except ProfileError as exc:
        usage_error(str(exc))
    if target_profile is None and not single and not mcp:
        usage_error(
            "no token: give --token (or DRIVEBENCH_TOKEN), or a --target-profile with [auth]",
            "pass --token or set DRIVEBENCH_TOKEN; `drivebench tokens --corpus NAME` lists a corpus's tokens "
            "(the evaluation token is the one with scope evaluate-as)",
        )
    return profile, url, single, per_principal


def _load_queries(evalset: Path) -> list[Any]:
    from drivebench.formats.evalset import load_evalset

    try:
        queries = load_evalset(evalset)
    except (OSError, ValueError) as exc:
        usage_error(_one_line(exc))
    if not queries:
        usage_error(f"{evalset}: the eval set has no queries")
    return queries


def _check_by(queries: list[Any], by: list[str]) -> None:
    """``--by`` names tags of the eval set: one that no query carries is a usage error naming those it has."""
    from drivebench.evaluator.strata import UnknownTagError, tag_strata

    try:
        tag_strata(queries, by)
    except UnknownTagError as exc:
        usage_error(f"--by: {exc}", "give --by a key of the eval set's query tags")


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    first = text.splitlines()[0] if text else type(exc).__name__
    # pydantic errors: "file:line: 1 validation error for EvalQuery\nfield\n  message": keep the gist
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    if len(lines) >= 3 and "validation error" in lines[0]:
        return f"{lines[0].split(':')[0]}:{lines[0].split(':')[1]}: {lines[1]}: {lines[2].split(' [')[0]}"
    return first


def _parse_gates(fail_on: list[str]) -> list[Any]:
    from drivebench.evaluator.gates import GateError, parse_gate

    try:
        return [parse_gate(x) for x in fail_on]
    except GateError as exc:
        usage_error(str(exc))


def _id_mapper(match: str, corpus_dir: Path | None, profile_source: Any = None) -> Any:
    from drivebench.evaluator.idmap import IdMapError, id_mapper_for

    try:
        return id_mapper_for(match, corpus_dir, profile_source)
    except IdMapError as exc:
        usage_error(str(exc))


def judge_gates(
    result: dict[str, Any], gates: list[Any], allow_no_oracle: bool = False, allow_leaks: bool = False
) -> None:
    """Check the leak gates and the ``--fail-on`` gates and store ``gates`` and ``verdict`` in ``result``: done
    before metrics.json and the reports are written, so that every one of them shows the verdict. A gate naming
    no metric is a usage error (exit 2) and nothing is written."""
    from drivebench.evaluator.gates import GateError, apply_verdict

    try:
        apply_verdict(result, gates, allow_no_oracle=allow_no_oracle, allow_leaks=allow_leaks)
    except GateError as exc:
        usage_error(str(exc))


def finish_with_gates(
    result: dict[str, Any],
    gates: list[Any],
    junit: Path | None,
    json_out: str | None,
    out: Console,
    extra: dict[str, Any] | None = None,
    allow_no_oracle: bool = False,
    allow_leaks: bool = False,
    junit_misses: bool = False,
) -> NoReturn:
    """Say each gate's result, write JUnit and JSON, and exit with the verdict's code (0/1/3). The gates are the
    ones ``judge_gates`` stored in ``result`` (checked here when it was not called)."""
    from drivebench.evaluator.gates import stored_gates, write_junit

    if "verdict" not in result:
        judge_gates(result, gates, allow_no_oracle, allow_leaks)
    gate_results = stored_gates(result)
    verdict = result["verdict"]
    code = int(verdict["exit_code"])
    for g in gate_results:
        style = "red" if g.failed else "green"
        head, _, rest = g.message.partition(": ")
        err_console.print(
            f"[{style}]{escape(head)}[/]: {escape(rest)} [dim]({escape(g.expr)})[/]", highlight=False, soft_wrap=True
        )
    if junit is not None:
        write_junit(junit, result, gate_results, misses=junit_misses)
        err_console.print(f"wrote {junit}")
    if json_out is not None:
        payload = {
            "exit_code": code,
            "verdict": verdict,
            "status": result.get("status"),
            **({"partial": True, "completion": result.get("completion")} if result.get("partial") else {}),
            "errors": result.get("errors"),
            "preflight": result.get("preflight"),
            "unmapped": result.get("unmapped"),
            "oracles": result.get("oracles"),
            "gates": result.get("gates"),
            "metrics": result.get("metrics"),
            "metrics_answered": result.get("metrics_answered"),
            "counts": result.get("counts"),
            **(extra or {}),
        }
        _emit_json(payload, json_out)
    if code == EXIT_RUN_FAILED:
        reason = escape(str((result.get("status") or {}).get("reason")))
        err_console.print(f"[red]run FAILED[/] (exit 3): {reason}", highlight=False, soft_wrap=True)
    elif result.get("partial"):
        done = result.get("completion") or {}
        err_console.print(
            f"[red]verdict FAILED[/] (exit {code}): the run is partial ({done.get('answered')} of "
            f"{done.get('queries')} queries answered)"
        )
    elif code == EXIT_GATE:
        failed = sum(g.failed for g in gate_results)
        n = len(gate_results)
        err_console.print(f"[red]verdict FAILED[/] (exit 1): {failed} of {n} gate{'s' if n != 1 else ''} failed")
    raise typer.Exit(code)


def scoring_bar(bar: Progress) -> Callable[[int, int], None]:
    """``evaluate``'s ``scoring_progress``: a second row "scoring N queries" in ``bar``, counting the queries whose results
    the leak oracle has judged (a Casbin decision per returned document: seconds on a 250-query run), with an ETA.
    Off a terminal or with --quiet the bar is disabled: nothing is shown."""
    tasks: list[TaskID] = []

    def step(done: int, total: int) -> None:
        if not tasks:
            tasks.append(bar.add_task(f"scoring {total} queries", total=total))
        bar.update(tasks[0], completed=done, total=total)

    return step


def _emit_json(payload: Any, json_out: str) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    if json_out == "-":
        print(text)
    else:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(text + "\n", encoding="utf-8")
        err_console.print(f"wrote {json_out}")


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
    import shlex

    from drivebench.api import evaluate
    from drivebench.cli import run_state as rs
    from drivebench.evaluator import journal as jn
    from drivebench.evaluator.evaluate import evalset_hash, write_outputs
    from drivebench.evaluator.report.terminal import print_summary
    from drivebench.evaluator.runner import Interrupt

    quiet_libraries()
    out_console = err_console if json_out == "-" else console
    given: dict[str, Any] = {
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
    options = dict(given)
    done: list[Any] = []
    subset: dict[str, Any] | None = None  # --only-failed (or a resumed one): which queries, of which run
    started_at: str | None = None
    recorded: dict[str, Any] = {}  # the run_config.json of --resume or --only-failed
    if resume is not None and only_failed is not None:
        usage_error("give --resume or --only-failed, not both")
    if resume is not None:
        recorded = _resumable(resume)
        bad = rs.contradictions(ctx, given, recorded["options"])
        if out is not None and out.resolve() != resume.resolve():
            bad.append(f"--out {out}: --resume writes the whole run into {resume}")
        if bad:
            usage_error(
                f"--resume {resume}: " + "; ".join(bad),
                f"leave those options out: --resume takes them from {resume / jn.RUN_CONFIG}",
            )
        options.update(recorded["options"])
        subset, started_at, out = recorded.get("subset"), recorded.get("started_at"), resume
    elif only_failed is not None:
        try:
            recorded = jn.read_run_config(only_failed) or {}
            ids, source = rs.failed_query_ids(only_failed)
        except (OSError, ValueError, KeyError) as exc:
            usage_error(f"--only-failed {only_failed}: cannot read its failed queries: {exc}")
        for name, value in (recorded.get("options") or {}).items():
            if name in rs.RECORDED and not rs.given_on_command_line(ctx, name):
                options[name] = value
        if not ids:
            usage_error(
                f"--only-failed {only_failed}: nothing to re-ask: no query missed or leaked in that run ({source})"
            )
        what = f"only-failed of {only_failed.resolve().name}"
        options["label"] = f"{what} ({options['label']})" if options.get("label") else what
        subset = {"of": str(only_failed.resolve()), "from": source, "query_ids": ids}
    (target, target_profile, mcp, evalset, corpus, k, match, field, answers, citation_style, by, label) = (
        options[n] for n in rs.RECORDED[:12]
    )
    max_error_rate, fail_on, allow_leaks, allow_no_oracle = (options[n] for n in rs.RECORDED[12:])
    target_profile = Path(target_profile) if target_profile is not None else None
    evalset = Path(evalset) if evalset is not None else None
    k = ",".join(map(str, k)) if isinstance(k, list) else k
    if evalset is None:
        usage_error("--evalset is required (or --resume/--only-failed RUN_DIR, which take the run's)")
    if not evalset.is_file():
        usage_error(f"--evalset {evalset}: no such file (the eval set the run asked)")
    if resume is not None and evalset_hash(evalset) != recorded["options"].get("evalset_hash"):
        usage_error(f"--resume {resume}: the eval set {evalset} changed since the run: its queries are not the same")
    ks = parse_ks(k)
    gates = _parse_gates(fail_on)
    queries = _load_queries(evalset)  # a bad eval set or --by is a usage error before anything is sent
    if subset is not None:
        wanted = set(subset["query_ids"])
        missing = sorted(wanted - {q.query_id for q in queries})
        if missing:
            usage_error(f"{len(missing)} of the queries to ask again are not in {evalset}: {', '.join(missing[:5])}")
        queries = [q for q in queries if q.query_id in wanted]
    _check_by(queries, by)
    if resume is not None:
        try:
            known = {q.query_id for q in queries}
            run_file = resume / jn.RUN_JSONL
            done = [r for r in jn.read_records(run_file) if r.query_id in known] if run_file.exists() else []
        except (OSError, ValueError) as exc:
            usage_error(f"--resume {resume}: {exc}")
    profile, url, single, per_principal = resolve_target(target_profile, target, token, mcp)
    if corpus is not None:
        from drivebench.cli.preflight import check_evalset_fits, check_served_corpus

        # built on first use with its progress shown; a bad name, an eval set of another corpus: usage errors
        check_evalset_fits(queries, resolve_corpus_option(corpus), corpus)
        if target_profile is None:  # the simulator's shape: its /healthz may say which corpus it serves
            check_served_corpus(url, single, corpus)

    def show_preflight(pre: Any) -> None:
        style = "green" if pre.ok else ("red" if pre.fatal else "yellow")
        err_console.print(
            f"[{style}]preflight[/] {escape(pre.diagnosis)} ({pre.seconds:.2f} s)", highlight=False, soft_wrap=True
        )

    mode = "answer" if answers else "recall"
    out_dir = Path(out or default_out_dir())
    config: dict[str, Any] = {
        "state": "running",
        "started_at": started_at or datetime.now(UTC).isoformat(),
        "options": {
            **{n: rs.normalise(n, options[n]) for n in rs.RECORDED},
            "evalset_hash": evalset_hash(evalset),
        },
        **({"subset": subset} if subset is not None else {}),
    }
    bar = progress_bar()  # started when the run starts: the preflight and the oracle's spinner come first
    tasks: list[TaskID] = []
    journal: list[jn.RunJournal] = []

    def run_starts(n: int) -> None:
        jn.write_run_config(out_dir, config)  # before the first query: a killed run can be resumed
        journal.append(jn.RunJournal(out_dir / jn.RUN_JSONL, resume=resume is not None))
        bar.start()
        tasks.append(bar.add_task(f"{mode} × {n}", total=n))

    interrupt = Interrupt()
    try:
        try:
            with rs.stop_on_signals(interrupt.trigger, rs.announce):
                evaluation = evaluate(
                    url,
                    queries if subset is not None else evalset,
                    corpus=corpus,
                    token=single,
                    tokens=per_principal,
                    profile=profile if target_profile is not None else None,
                    fields=field,
                    mcp=mcp,
                    citation_style=citation_style,
                    match=match or profile.ids.match,
                    ks=ks,
                    concurrency=concurrency or profile.request.concurrency,
                    timeout=timeout or profile.request.timeout_s,
                    answers=answers,
                    preflight=probe,
                    max_error_rate=max_error_rate,
                    progress=lambda: bar.advance(tasks[0]),
                    scoring_progress=scoring_bar(bar),  # scoring (the leak oracle) takes seconds: a bar
                    on_preflight=show_preflight,
                    loading=status,  # loading the leak oracle takes seconds: a spinner
                    on_run_start=run_starts,
                    by=by,
                    label=label,
                    done=done,
                    interrupt=interrupt,
                    on_record=lambda rec: journal[0].append(rec) if journal else None,
                )
        finally:
            bar.stop()
            for j in journal:
                j.close()
                if j.error is not None:
                    err_console.print(
                        f"[yellow]could not append to {j.path} as the run went ({j.error}): the records are "
                        "written when the run ends[/]"
                    )
    except ValueError as exc:  # a profile, mapping, map file or token list that cannot be used
        usage_error(str(exc))
    info = evaluation.result["run_info"]
    if target_profile is not None:
        info["target_profile"] = str(target_profile)
    info["started_at"] = config["started_at"]  # a resumed run started when its first part did
    if subset is not None:
        info.update(evalset=str(evalset), evalset_hash=evalset_hash(evalset))
        info["subset"] = {k_: v for k_, v in subset.items() if k_ != "query_ids"} | {"queries": len(queries)}
    resume_cmd = f"drivebench eval run --resume {shlex.quote(str(out_dir))}"
    if evaluation.partial:  # every output says how to continue
        evaluation.result["completion"]["resume"] = resume_cmd
        evaluation.result["status"]["reason"] += f"; continue with: {resume_cmd}"
    judge_gates(evaluation.result, gates, allow_no_oracle, allow_leaks)  # before metrics.json and every report
    attach_previous(evaluation.result, history)  # the change since the previous run with this label, stored too
    out_dir = write_outputs(evaluation, out_dir)
    jn.write_run_config(out_dir, {**config, "state": "partial" if evaluation.partial else "complete"})
    print_summary(evaluation.result, out_console)
    finish_run(evaluation.result, out_dir, history, out_console)  # report.md, report.html, history
    err_console.print(f"wrote {out_dir / 'run.jsonl'} and {out_dir / 'metrics.json'}")
    if evaluation.partial:
        done_n = evaluation.result["completion"]
        err_console.print(
            f"[bold red]PARTIAL run[/]: {done_n['answered']} of {done_n['queries']} queries answered, the figures are "
            f"over those only; continue with: {escape(resume_cmd)}",
            highlight=False,
            soft_wrap=True,
        )
    finish_with_gates(
        evaluation.result,
        gates,
        junit,
        json_out,
        out_console,
        {"out_dir": str(out_dir)},
        allow_no_oracle,
        allow_leaks,
        junit_misses,
    )


def _resumable(run_dir: Path) -> dict[str, Any]:
    """The recorded run_config.json of a run ``--resume`` can continue; usage errors (exit 2) otherwise."""
    from drivebench.evaluator import journal as jn

    try:
        recorded = jn.read_run_config(run_dir)
        metrics = (
            json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
            if (run_dir / "metrics.json").exists()
            else None
        )
    except (OSError, ValueError) as exc:
        usage_error(f"--resume {run_dir}: {exc}")
    complete = (recorded or {}).get("state") == "complete" or (
        recorded is None and metrics is not None and not metrics.get("partial")
    )
    if complete:
        n = len((metrics or {}).get("per_query") or []) or "all"
        usage_error(
            f"--resume {run_dir}: nothing to resume: the run is complete ({n} of {n} queries answered)",
            "start a new run without --resume (or --only-failed RUN_DIR to ask its missed and leaked queries again)",
        )
    if recorded is None or not isinstance(recorded.get("options"), dict):
        usage_error(
            f"--resume {run_dir}: not a run that can be resumed (no {jn.RUN_CONFIG}: not written by eval run, or "
            "by a version before --resume)"
        )
    return recorded


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
    from drivebench.evaluator.evaluate import judge, with_status_first
    from drivebench.evaluator.report.terminal import print_details, print_summary
    from drivebench.evaluator.scoring import score
    from drivebench.evaluator.trec import is_trec_run, read_qrels, read_trec_run
    from drivebench.formats.evalset import load_run

    out_console = err_console if json_out == "-" else console
    ks = parse_ks(k)
    gates = _parse_gates(fail_on)
    if (evalset is None) == (qrels is None):
        usage_error("give exactly one of --evalset or --qrels")
    if evalset is not None:
        queries = _load_queries(evalset)
    else:
        assert qrels is not None
        try:
            queries = read_qrels(qrels)
        except (OSError, ValueError) as exc:
            usage_error(_one_line(exc))
    _check_by(queries, by)
    path = run_file / "run.jsonl" if run_file.is_dir() else run_file
    try:
        records = read_trec_run(path) if is_trec_run(path) else load_run(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        usage_error(_one_line(exc))
    corpus_dir = resolve_corpus_option(corpus) if corpus is not None else None
    if corpus is not None and corpus_dir is not None:
        from drivebench.cli.preflight import check_evalset_fits

        check_evalset_fits(queries, corpus_dir, corpus)  # an eval set of another corpus: a usage error
    from drivebench.evaluator.evaluate import corpus_facts

    try:
        facts, no_facts_reason = corpus_facts(corpus_dir)  # what answers are checked against for answer leaks
    except ValueError as exc:
        usage_error(_one_line(exc))
    if match is not None or corpus_dir is not None:
        records, _ = _id_mapper(match or "doc_id", corpus_dir).map_records(records)
    from drivebench.evaluator.oracle_progress import ProgressOracle

    oracle: Any = "evalset"
    if corpus_dir is not None:
        from drivebench.evaluator.oracle import corpus_oracle

        with status("loading the corpus's policies (leak oracle) …"):
            oracle = corpus_oracle(corpus_dir)
    n = len(queries)
    with progress_bar() as bar:  # the leak oracle's Casbin decisions take seconds: counted
        step = scoring_bar(bar)
        step(0, n)
        if not isinstance(oracle, str):
            oracle = ProgressOracle(oracle, lambda done: step(min(done, n), n))
        no_facts_why: dict[str, Any] = {"no_facts_reason": no_facts_reason} if no_facts_reason else {}
        result = score(
            queries,
            records,
            ks,
            oracle=oracle,
            by=by,
            facts=facts,
            **no_facts_why,
        )
        step(n, n)
    from drivebench.evaluator.catalog import Catalog
    from drivebench.evaluator.failed_queries import attach
    from drivebench.formats.corpus import load_manifest

    names = Catalog.from_manifest(load_manifest(corpus_dir)) if corpus_dir is not None else None
    attach(result, queries, records, ks, names, oracle)  # JUnit names the missed and leaking queries' documents
    judge(result, max_error_rate)
    result["run_info"] = {"run": str(path), "evalset": str(evalset or qrels), **({"label": label} if label else {})}
    judge_gates(result, gates, allow_no_oracle, allow_leaks)  # before the JSON and the summary
    result = with_status_first(result)
    if json_out is not None and json_out != "-":
        from drivebench.evaluator.evaluate import write_metrics

        write_metrics(result, Path(json_out))
        err_console.print(f"wrote {json_out}")
        json_out = None
    print_summary(result, out_console)
    print_details(result, out_console)
    if json_out == "-":
        print(json.dumps(with_status_first(result), ensure_ascii=False, indent=1))
        json_out = None
    finish_with_gates(result, gates, junit, None, out_console, None, allow_no_oracle, allow_leaks, junit_misses)
