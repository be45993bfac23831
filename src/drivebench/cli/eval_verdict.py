"""The end of every ``eval`` command: judge the gates, say each one's result and the verdict, write the JUnit and
JSON files, and exit with the verdict's code."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from drivebench.cli.common import err_console
from drivebench.cli.eval_common import EXIT_GATE, EXIT_RUN_FAILED, emit_json, usage_error


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
        emit_json(payload, json_out)
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
