"""``drivebench eval sync``: how long the target keeps answering from permissions the drive has changed.

Exit codes: 0 every change converged; 1 a revocation was never reflected within --deadline (a leak; waived
by --allow-not-converged) or a --fail-on gate holds; 2 usage (bad option, scenario, drive token, a drive that
is not at its loaded corpus without --reset-first); 3 the run failed (the target does not answer, more calls
failed than --max-error-rate allows, or no pair could be tested); 128 + the signal's number when stopped by
SIGHUP (129), SIGINT (130) or SIGTERM (143), after the drive is reset. ``--restore`` resets a drive that a
killed run left changed, and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import typer
from rich.markup import escape

from drivebench.cli.common import console, err_console, quiet_libraries, resolve_corpus_option
from drivebench.cli.eval_common import (
    EXIT_OK,
    EXIT_RUN_FAILED,
    FailOnOpt,
    JsonOpt,
    JunitOpt,
    MatchOpt,
    MaxErrorRateOpt,
    default_out_dir,
    parse_gates,
    resolve_target,
    usage_error,
)
from drivebench.cli.eval_common import id_mapper as make_id_mapper
from drivebench.cli.evaluate import app


@app.command("sync")
def sync(
    drive: str | None = typer.Option(
        None,
        "--drive",
        help="The simulator the target syncs from (its admin API applies changes); required unless --manual.",
    ),
    drive_token: str | None = typer.Option(
        None, "--drive-token", help="The drive's admin token; required unless --manual."
    ),
    target: str | None = typer.Option(None, "--target", help="Recall URL of the system under test."),
    target_profile: Path | None = typer.Option(None, "--target-profile", dir_okay=False, help="TOML target profile."),
    token: str | None = typer.Option(None, "--token", help="Bearer token for the target (evaluate-as)."),
    corpus: str | None = typer.Option(
        None,
        "--corpus",
        help="The corpus the drive loaded (name or dir): what --match path/name map ids to, and its facts "
        "(facts.jsonl), whose statement in an answer shows its document (class answer-cache).",
    ),
    match: str | None = MatchOpt,
    scenario: str = typer.Option(
        "revocations", "--scenario", help="revocations, content, all, conformance, or a scenario TOML file."
    ),
    deadline: float = typer.Option(120.0, "--deadline", min=0.1, max=86_400, help="Seconds to wait for each change."),
    poll: float = typer.Option(0.5, "--poll", min=0.01, max=3600, help="Seconds between probe rounds."),
    top_k: int = typer.Option(10, "--top-k", min=1, max=100, help="Results asked per probe."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default reports/<timestamp>)."),
    json_out: str | None = JsonOpt,
    fail_on: list[str] = FailOnOpt,
    junit: Path | None = JunitOpt,
    max_error_rate: float = MaxErrorRateOpt,
    allow_not_converged: bool = typer.Option(
        False, "--allow-not-converged", help="Exit 0 although a revocation was never reflected (still reported)."
    ),
    reset_first: bool = typer.Option(
        False, "--reset-first", help="Reset a drive that has changes since it loaded its corpus, instead of refusing."
    ),
    manual: bool = typer.Option(
        False, "--manual", help="Print each change for a person to make with the drive's own tools; wait for Enter."
    ),
    restore: bool = typer.Option(
        False,
        "--restore",
        help="Only reset the drive to its loaded corpus (undo what a killed run left) and exit; needs --drive.",
    ),
) -> None:
    """Apply each change of the scenario through the drive's API and probe the target as every affected
    principal until it reflects the change or --deadline passes; write metrics.json, run.jsonl and reports.

    Exit codes: 0 ok; 1 a revocation not reflected within the deadline (or a --fail-on gate); 2 usage;
    3 the run failed (target errors over --max-error-rate, nothing testable); 129/130/143 stopped by
    SIGHUP/SIGINT/SIGTERM (the drive is reset first)."""
    from drivebench.api import make_target
    from drivebench.evaluator.gates import GateError, check_gates
    from drivebench.evaluator.sync.drive_client import DriveClient
    from drivebench.evaluator.sync.evaluate import Stopped, SyncSetupError, run_sync, stop_on_signals
    from drivebench.evaluator.sync.outputs import junit as write_junit
    from drivebench.evaluator.sync.outputs import problems, summary_lines
    from drivebench.evaluator.sync.runner import SyncConfig
    from drivebench.evaluator.sync.scenario import ScenarioError, load_scenario
    from drivebench.evaluator.sync.summary import gate_metrics, summarize
    from drivebench.evaluator.sync.verdict import verdict_line
    from drivebench.formats.facts import load_facts

    quiet_libraries()
    if restore:
        _restore(drive, drive_token)
    out_console = err_console if json_out == "-" else console
    gates = parse_gates(fail_on)
    try:  # a gate that names no figure of a sync run: refused before the run changes the drive
        check_gates({"metrics": gate_metrics(summarize([], 0, 0, {})), "errors": {}}, gates)
    except GateError as exc:
        usage_error(str(exc))
    try:
        chosen = load_scenario(scenario)
    except ScenarioError as exc:
        usage_error(str(exc))
    if manual and not chosen.manual:
        usage_error(
            "--manual needs a scenario file with [[manual]] changes (class, principal, doc_id, queries, instruction)",
            "see docs/sync.md, 'Against a real drive'",
        )
    if not manual and (drive is None or drive_token is None):
        missing = " and ".join(o for o, v in (("--drive", drive), ("--drive-token", drive_token)) if v is None)
        usage_error(
            f"missing {missing}: a run that applies changes needs the simulator's URL and its admin token",
            "give --drive URL --drive-token TOKEN, or --manual with a scenario of [[manual]] changes for a real drive",
        )
    if (drive is None) != (drive_token is None):
        usage_error("give --drive and --drive-token together (or neither, with --manual)")
    profile, url, single, per_principal = resolve_target(target_profile, target, token, False)
    try:
        tgt = make_target(url, single, tokens=per_principal or None, profile=profile if target_profile else None)
    except ValueError as exc:
        usage_error(str(exc))
    match = match or profile.ids.match
    # ids as eval run maps them; doc ids are checked against the drive's own listing (documents the run uploads
    # are in no corpus), so the corpus is needed only to map paths, names or a map file
    id_mapper = None
    corpus_dir = resolve_corpus_option(corpus) if corpus else None
    if match != "doc_id":
        id_mapper = make_id_mapper(match, corpus_dir, profile.source)
    try:
        facts = load_facts(corpus_dir) if corpus_dir is not None else None
    except ValueError as exc:
        usage_error(str(exc))
    # the answer endpoint: the simulator's beside its recall (checked before the class's first change), or a
    # profile's own; a profile that names none has none (its recall host need not answer the simulator's path)
    no_answers_why = None
    if target_profile is not None and profile.request.answer_url is None:
        no_answers_why = f"the target profile {target_profile} names no answer endpoint ([request] answer_url)"
    out_dir = out or default_out_dir()
    client = DriveClient(drive, drive_token) if drive is not None and drive_token is not None else None
    config = SyncConfig(deadline_s=deadline, poll_s=poll, top_k=top_k, manual=manual)
    say = lambda m: err_console.print(escape(m), highlight=False, soft_wrap=True)  # noqa: E731
    try:
        with stop_on_signals(say):
            result = run_sync(
                client,
                tgt,
                url,
                chosen,
                config,
                out_dir=out_dir,
                reset_first=reset_first,
                preflight_user=chosen.manual[0].principal if manual else None,
                max_error_rate=max_error_rate,
                on_event=say,
                wait_for_person=lambda m: typer.prompt(m, default="", show_default=False),
                gates=gates,
                allow_not_converged=allow_not_converged,
                id_mapper=id_mapper,
                no_answers_why=no_answers_why,
                facts=facts,
            )
    except SyncSetupError as exc:
        usage_error(str(exc))
    except Stopped as stop:
        err_console.print(
            f"[red]stopped by {stop.name}[/] (exit {stop.exit_code}): no report was written"
            + ("" if client is None else "; the drive was reset to its loaded corpus (above)"),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(stop.exit_code) from None
    finally:
        if client is not None:
            client.close()
    for line in problems(result):
        out_console.print(f"[red]{escape(line)}[/]", highlight=False, soft_wrap=True)
    for line in summary_lines(result):
        out_console.print(line, highlight=False, soft_wrap=True)
    verdict = result["verdict"]
    (out_dir / "metrics.json").write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    if junit is not None:
        write_junit(result, junit)
    if json_out == "-":
        typer.echo(json.dumps(result, ensure_ascii=False, default=str))
    elif json_out:
        Path(json_out).write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    err_console.print(f"wrote {out_dir / 'metrics.json'}, {out_dir / 'run.jsonl'}, report.md and report.html")
    style = "red" if verdict["state"] == "failed" else "green"
    err_console.print(f"[{style}]{escape(verdict_line(result))}[/]", highlight=False, soft_wrap=True)
    raise typer.Exit(verdict["exit_code"])


def _restore(drive: str | None, drive_token: str | None) -> NoReturn:
    """``--restore``: reset the drive to the corpus it loaded (what a run does when it ends), e.g. after a run
    killed by SIGKILL left its changes; says how many changes it undid. Exit 0, 2 without the drive, 3 when the
    drive cannot be reset."""
    from drivebench.evaluator.sync.drive_client import DriveClient, DriveError
    from drivebench.evaluator.sync.evaluate import restore_drive

    if drive is None or drive_token is None:
        usage_error("--restore resets the drive: give --drive URL --drive-token TOKEN (its admin token)")
    client = DriveClient(drive, drive_token)
    try:
        undone, _ = restore_drive(client)
    except DriveError as exc:
        err_console.print(f"[red]the drive could not be reset[/]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_RUN_FAILED) from None
    finally:
        client.close()
    what = "it had no change to undo" if not undone else f"{undone} changes undone"
    console.print(f"the drive was reset to its loaded corpus: {what}", highlight=False)
    raise typer.Exit(EXIT_OK)
