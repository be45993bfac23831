"""What every ``eval`` command shares: exit codes, options, usage errors, and reading its inputs (the eval set,
the target, the gates, the id map) with each mistake a usage error (exit 2) before anything is sent.

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
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.progress import Progress, TaskID

from drivebench.cli.common import err_console

if TYPE_CHECKING:
    from drivebench.evaluator.options import EvalSet

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


def load_evalset_or_exit(evalset: Path) -> EvalSet:
    """The eval set, parsed and validated once for the whole run; a bad or empty one is a usage error."""
    from drivebench.evaluator.options import EvalSet

    try:
        return EvalSet.load(evalset)
    except (OSError, ValueError) as exc:
        usage_error(one_line(exc))


def check_by(queries: list[Any], by: list[str]) -> None:
    """``--by`` names tags of the eval set: one that no query carries is a usage error naming those it has."""
    from drivebench.evaluator.strata import UnknownTagError, tag_strata

    try:
        tag_strata(queries, by)
    except UnknownTagError as exc:
        usage_error(f"--by: {exc}", "give --by a key of the eval set's query tags")


def one_line(exc: BaseException) -> str:
    text = str(exc)
    first = text.splitlines()[0] if text else type(exc).__name__
    # pydantic errors: "file:line: 1 validation error for EvalQuery\nfield\n  message": keep the gist
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    if len(lines) >= 3 and "validation error" in lines[0]:
        return f"{lines[0].split(':')[0]}:{lines[0].split(':')[1]}: {lines[1]}: {lines[2].split(' [')[0]}"
    return first


def parse_gates(fail_on: list[str]) -> list[Any]:
    from drivebench.evaluator.gates import GateError, parse_gate

    try:
        return [parse_gate(x) for x in fail_on]
    except GateError as exc:
        usage_error(str(exc))


def id_mapper(match: str, corpus_dir: Path | None, profile_source: Any = None, manifest: Any = None) -> Any:
    """The id mapper ``--match`` names (``manifest``: the corpus's, already read); a bad one is a usage error."""
    from drivebench.evaluator.idmap import IdMapError, id_mapper_for

    try:
        return id_mapper_for(match, corpus_dir, profile_source, manifest)
    except IdMapError as exc:
        usage_error(str(exc))


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


def emit_json(payload: Any, json_out: str) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    if json_out == "-":
        print(text)
    else:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(text + "\n", encoding="utf-8")
        err_console.print(f"wrote {json_out}")
