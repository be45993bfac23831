"""The ``drivebench`` command: the root group, its options and its one error handler.

* ``--version``, ``--config PATH`` (config file: ``drivebench.cli.config``), ``--quiet`` (no progress bars or summaries on
  stderr), ``--debug`` (tracebacks); shell completion via ``--install-completion`` / ``--show-completion``.
* Every option also reads ``DRIVEBENCH_<COMMAND>_<OPTION>`` (e.g. ``DRIVEBENCH_SERVE_PORT``,
  ``DRIVEBENCH_EVAL_RUN_TARGET``): precedence command line > environment > config file > built-in default.
* Errors: ``RootGroup.main`` renders every error as ``error: [file:line: ]message`` plus ``hint: ...`` on stderr
  and exits 2 for usage and input errors (70 for an unexpected exception, a bug); ``--debug`` (or
  ``DRIVEBENCH_DEBUG=1``) re-raises instead, with the traceback.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from typing import Any

import typer
from rich.text import Text
from typer.core import TyperGroup

from drivebench import __version__
from drivebench.cli import audit as audit_cli  # security audits of a corpus
from drivebench.cli import connector as connector_cli
from drivebench.cli import corpus, demo, evaluate, experiment, info, reports, serve, tokens
from drivebench.cli import mcp as mcp_cli  # stdio MCP server
from drivebench.cli import milvus as milvus_cli  # a Milvus server in the foreground; gc of its collections
from drivebench.cli import probe as probe_cli
from drivebench.cli import sync as sync_cli  # noqa: F401  (registers eval sync)
from drivebench.cli.clickcompat import ClickException, MissingParameter
from drivebench.cli.common import err_console, honour_columns, set_quiet
from drivebench.errors import INPUT_ERROR_EXIT, describe

ENV_PREFIX = "DRIVEBENCH"
DEBUG_ENV = "DRIVEBENCH_DEBUG"

# Hints for options a newcomer most often leaves out or gets wrong, by parameter name.
PARAM_HINTS = {
    "token": "pass --token or set DRIVEBENCH_TOKEN; `drivebench tokens --corpus NAME` lists a corpus's tokens "
    "(the evaluation token is the one with scope evaluate-as)",
    "target": "pass --target URL (e.g. http://127.0.0.1:8000, where `drivebench serve` listens) or set it in "
    "drivebench.toml under [eval.run]",
    "evalset": "pass --evalset FILE (a corpus's eval set is evalset.jsonl in its directory)",
}


def _print_error(lines: list[str]) -> None:
    for i, line in enumerate(lines):
        style = "bold red" if i == 0 else "yellow"
        head, sep, rest = line.partition(": ")
        err_console.print(Text(head + sep, style=style) + Text(rest), soft_wrap=True, highlight=False)


def _usage_hint(exc: ClickException) -> str | None:
    param = getattr(exc, "param", None)
    name = getattr(param, "name", None)
    if name in PARAM_HINTS and isinstance(exc, MissingParameter):
        return PARAM_HINTS[name]
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        what = "commands" if "No such command" in str(getattr(exc, "message", "")) else "options"
        return f"`{ctx.command_path} --help` lists the {what}"
    return None


def _debug_requested(args: Sequence[str]) -> bool:
    return "--debug" in args or os.environ.get(DEBUG_ENV, "").lower() in ("1", "true", "yes", "on")


class RootGroup(TyperGroup):
    """The root command: runs the CLI with one error handler for every command below it."""

    def main(  # type: ignore[override]  # Click's main, keywords narrowed
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        args = list(sys.argv[1:] if args is None else args)
        debug = _debug_requested(args)
        args = [a for a in args if a != "--debug"]  # accepted anywhere on the line, not only before the command
        try:
            rv = super().main(args, prog_name or "drivebench", complete_var, standalone_mode=False, **extra)
        except ClickException as exc:  # usage errors: unknown option, bad value, missing option ...
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            if type(exc).__name__ == "NoArgsIsHelpError":  # `drivebench` alone: the help is the answer
                if message.strip():
                    err_console.print(message, markup=False, highlight=False)
                sys.exit(exc.exit_code)
            if isinstance(exc, MissingParameter) and not message.startswith("Missing"):
                message = f"Missing {message}"
            _print_error([f"error: {message.rstrip('.')}"] + ([f"hint: {h}"] if (h := _usage_hint(exc)) else []))
            sys.exit(exc.exit_code)
        except typer.Abort:
            err_console.print("aborted")
            sys.exit(1)
        except Exception as exc:
            if debug:
                raise
            described = describe(exc)
            _print_error(described.lines())
            sys.exit(described.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="drivebench",
    cls=RootGroup,
    help="A permission-aware enterprise-drive simulator and a RAG recall evaluator.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=True,
    context_settings={"auto_envvar_prefix": ENV_PREFIX},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"drivebench {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    show_version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        show_envvar=False,
        help="Print the version and exit.",
    ),
    config: str | None = typer.Option(
        None,
        "--config",
        envvar="DRIVEBENCH_CONFIG",
        help="Config file with option defaults (default: the nearest drivebench.toml, or pyproject.toml with "
        "\\[tool.drivebench]; `none` for no file).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars, spinners or summaries on stderr."),
    debug: bool = typer.Option(False, "--debug", envvar=DEBUG_ENV, help="Show tracebacks instead of one-line errors."),
) -> None:
    """A permission-aware enterprise-drive simulator and a RAG recall evaluator.

    Exit codes: 0 ok; 2 usage or input error (one line, file:line where there is one, and a hint); 70 internal
    error (a bug: rerun with --debug). `eval` commands add their own (see docs/commands.md).
    """
    from drivebench.cli.config import build_default_map, load_config

    set_quiet(quiet)
    honour_columns()
    loaded = load_config(config)
    ctx.default_map = build_default_map(ctx, loaded)
    ctx.meta["drivebench.cli.config"] = loaded.path
    # Every part of drivebench (and any child process) uses the same cache.
    from drivebench.paths import CACHE_ENV, cache_location

    where = cache_location()
    ctx.meta["drivebench.cache"] = where
    os.environ.setdefault(CACHE_ENV, str(where.path))


@functools.wraps(serve.serve)
def _serve(**kwargs: Any) -> None:
    """``serve`` with a preflight: a port in use is an error at once, not after loading the corpus."""
    from drivebench.cli.preflight import ensure_port_free

    ensure_port_free(kwargs["host"], kwargs["port"])
    serve.serve(**kwargs)


app.command("serve")(_serve)
app.command("tokens")(tokens.tokens)
app.command("demo")(demo.demo)
app.command("info")(info.info)
app.command("mcp")(mcp_cli.mcp)  # the MCP server over stdio
app.command("connector")(connector_cli.connector)  # the reference connector (its own index)
app.add_typer(evaluate.app, name="eval", help="Run and score evaluation sets.")
reports.register(evaluate.app)  # eval report/trend/compare/history/export-trec
app.add_typer(corpus.app, name="corpus", help="Build, validate and describe corpora.")
app.command("probe")(probe_cli.probe)  # leak probes
app.add_typer(audit_cli.app, name="audit", help="Security audits of a corpus.")
app.command("milvus-server")(milvus_cli.milvus_server)
app.add_typer(milvus_cli.app, name="milvus", help="Manage drivebench's collections on a Milvus server.")
app.command("experiment")(experiment.experiment)  # a grid of simulator configurations, compared


def main() -> None:  # pragma: no cover - console entry
    app()


__all__ = ["INPUT_ERROR_EXIT", "RootGroup", "app", "main"]
