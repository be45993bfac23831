"""``drivebench eval sync``: how long the target keeps answering from permissions the drive has changed.

Exit codes: 0 every change converged; 1 a revocation was never reflected within --deadline (a leak; waived
by --allow-not-converged) or a --fail-on gate holds; 2 usage (bad option, scenario, drive token, a drive that
is not at its loaded corpus without --reset-first); 3 the run failed (the target does not answer, more calls
failed than --max-error-rate allows, or no pair could be tested).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from drivebench.cli.common import console, err_console, quiet_libraries
from drivebench.cli.evaluate import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_RUN_FAILED,
    FailOnOpt,
    JsonOpt,
    JunitOpt,
    MaxErrorRateOpt,
    _parse_gates,
    app,
    default_out_dir,
    resolve_target,
    usage_error,
)


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
) -> None:
    """Apply each change of the scenario through the drive's API and probe the target as every affected
    principal until it reflects the change or --deadline passes; write metrics.json, run.jsonl and reports.

    Exit codes: 0 ok; 1 a revocation not reflected within the deadline (or a --fail-on gate); 2 usage;
    3 the run failed (target errors over --max-error-rate, nothing testable)."""
    from drivebench.api import make_target
    from drivebench.evaluator.gates import check_gates
    from drivebench.evaluator.sync.drive_client import DriveClient
    from drivebench.evaluator.sync.evaluate import SyncSetupError, run_sync
    from drivebench.evaluator.sync.outputs import junit as write_junit
    from drivebench.evaluator.sync.outputs import problems
    from drivebench.evaluator.sync.runner import SyncConfig
    from drivebench.evaluator.sync.scenario import ScenarioError, load_scenario

    quiet_libraries()
    out_console = err_console if json_out == "-" else console
    gates = _parse_gates(fail_on)
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
    out_dir = out or default_out_dir()
    client = DriveClient(drive, drive_token) if drive is not None and drive_token is not None else None
    config = SyncConfig(deadline_s=deadline, poll_s=poll, top_k=top_k, manual=manual)
    try:
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
            on_event=lambda m: err_console.print(escape(m), highlight=False, soft_wrap=True),
            wait_for_person=lambda m: typer.prompt(m, default="", show_default=False),
        )
    except SyncSetupError as exc:
        usage_error(str(exc))
    finally:
        if client is not None:
            client.close()
    for line in problems(result):
        out_console.print(f"[red]{escape(line)}[/]", highlight=False, soft_wrap=True)
    o = result["sync"]["overall"]

    def fig(x: object) -> str:
        return "not measured" if x is None else str(x)

    out_console.print(
        f"revocation lag p95 {fig(o['revocation_lag_p95_s'])} s, max {fig(o['revocation_lag_max_s'])} s; "
        f"leak seconds {fig(o['leak_seconds_total'])}; not converged {o['not_converged']}; "
        f"not testable {o['not_testable']}; pairs {o['pairs']}",
        highlight=False,
    )
    for cls, s in result["sync"]["classes"].items():
        out_console.print(
            f"  {cls:20} n={s['n']:<3} lag p50 {fig(s['lag_p50_s'])} p95 {fig(s['lag_p95_s'])} "
            f"max {fig(s['lag_max_s'])} "
            f"not converged {s['not_converged']} not testable {s['not_testable']}",
            highlight=False,
        )
    gate_results = check_gates(result, gates)
    result["gates"] = [g.as_dict() for g in gate_results]
    (out_dir / "metrics.json").write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    if junit is not None:
        write_junit(result, junit)
    if json_out == "-":
        typer.echo(json.dumps(result, ensure_ascii=False, default=str))
    elif json_out:
        Path(json_out).write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    err_console.print(f"wrote {out_dir / 'metrics.json'}, {out_dir / 'run.jsonl'}, report.md and report.html")
    if result["status"]["state"] == "failed":
        raise typer.Exit(EXIT_RUN_FAILED)
    if any(g.failed for g in gate_results):
        raise typer.Exit(EXIT_GATE)
    if o.get("cases_failed"):
        raise typer.Exit(EXIT_GATE)
    if o["revocations_not_converged"] and not allow_not_converged:
        raise typer.Exit(EXIT_GATE)
    raise typer.Exit(EXIT_OK)
