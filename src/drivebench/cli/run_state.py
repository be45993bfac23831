"""``eval run``'s stopped, resumed and re-asked runs: the options a run records, the contradiction check of
``--resume``, the queries ``--only-failed`` re-asks, and Ctrl-C.

A run records in ``run_config.json`` (``evaluator.journal``) the options that decide what it measures and how it is
judged (``RECORDED``). ``--resume RUN_DIR`` takes them from there: an option given on the command line (or in its
environment variable) that differs from the recorded one is a usage error (exit 2), never silently used or ignored.
The options that only say how to send the queries or where to write the verdict (``--concurrency``, ``--timeout``,
``--preflight``, ``--token``, ``--history``, ``--junit``, ``--json``) may change on resume. ``--only-failed RUN_DIR``
starts from the same options, and any of them given on the command line replaces the recorded one (a new run).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORDED = (
    "target",
    "target_profile",
    "mcp",
    "evalset",
    "corpus",
    "k",
    "match",
    "field",
    "answers",
    "citation_style",
    "by",
    "label",
    "max_error_rate",
    "fail_on",
    "allow_leaks",
    "allow_no_oracle",
)
FLAGS = {
    "target_profile": "--target-profile",
    "citation_style": "--citation-style",
    "max_error_rate": "--max-error-rate",
    "fail_on": "--fail-on",
    "allow_leaks": "--allow-leaks",
    "allow_no_oracle": "--allow-no-oracle",
}


def flag(name: str) -> str:
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def given_on_command_line(ctx: Any, name: str) -> bool:
    """The option was typed (or set by its environment variable), not a default or a config file's value."""
    from drivebench.cli.clickcompat import click

    source = ctx.get_parameter_source(name)
    return source in (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)


def normalise(name: str, value: Any) -> Any:
    """An option's value as recorded and compared: paths absolute, cutoffs a sorted list, lists as lists."""
    if value is None:
        return None
    if name in ("target_profile", "evalset"):
        return str(Path(value).resolve())
    if name == "corpus":
        path = Path(str(value))
        return str(path.resolve()) if path.exists() else str(value)
    if name == "k":
        from drivebench.cli.options import parse_ks

        return parse_ks(value) if isinstance(value, str) else sorted(int(x) for x in value)
    if name in ("field", "by", "fail_on"):
        return [str(x) for x in value]
    if name == "max_error_rate":
        return float(value)
    return value


def shown(name: str, value: Any) -> str:
    if name == "k" and isinstance(value, list):
        return ",".join(map(str, value))
    if isinstance(value, bool):
        return "on" if value else "off"
    return (
        "(none)"
        if value in (None, [])
        else json.dumps(value, ensure_ascii=False)
        if isinstance(value, list)
        else str(value)
    )


def contradictions(ctx: Any, given: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """One sentence per option typed on the command line whose value differs from the run's recorded one (the eval
    set is compared by content: the same file moved is no contradiction, the file edited is)."""
    from drivebench.evaluator.evaluate import evalset_hash

    out = []
    for name in RECORDED:
        if not given_on_command_line(ctx, name):
            continue
        now, then = normalise(name, given.get(name)), recorded.get(name)
        if name == "evalset" and now is not None:
            if evalset_hash(Path(now)) != recorded.get("evalset_hash"):
                out.append(f"--evalset {now} is not the eval set the run asked (its content differs from {then})")
            continue
        if now != then:
            out.append(f"{flag(name)} {shown(name, now)} contradicts the run's {flag(name)} {shown(name, then)}")
    return out


def failed_query_ids(run_dir: Path) -> tuple[list[str], str]:
    """The ids of the queries that missed or leaked in ``run_dir`` and where they were read: failed_queries.jsonl
    (every row), else metrics.json's per-query rows (answered, with a leak or no gold document in the top K)."""
    from drivebench.evaluator.failed_queries import FAILED_QUERIES_JSONL, main_k
    from drivebench.evaluator.result import RunResult

    listed = run_dir / FAILED_QUERIES_JSONL
    if listed.exists():
        ids = []
        for line in listed.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ids.append(str(json.loads(line)["query_id"]))
        return list(dict.fromkeys(ids)), FAILED_QUERIES_JSONL
    metrics = RunResult.read(run_dir)
    k = main_k((metrics.config or {}).get("ks") or [10])
    ids = [
        str(row.get("query_id"))
        for row in metrics.per_query or []
        if row.get("status") == "ok" and (row.get("leaked") or row.get(f"hit_rate@{k}") == 0.0)
    ]
    return ids, "metrics.json"


@contextlib.contextmanager
def stop_on_signals(on_stop: Callable[[str], None], say: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, Ctrl-C (SIGINT) and SIGTERM call ``on_stop(name)`` (the run stops sending and keeps what
    was answered); a second one stops at once (KeyboardInterrupt). Outside the main thread nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[str] = []

    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if seen:
            raise KeyboardInterrupt
        seen.append(name)
        say(name)
        on_stop(name)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def announce(name: str) -> None:
    """The line a signal prints at once (from the handler: a raw write, no console lock)."""
    with contextlib.suppress(OSError):
        os.write(
            2,
            f"\n{name}: stopping: no new query is sent; the requests in flight get a few seconds; the answered "
            "queries are written (again to stop at once)\n".encode(),
        )


@dataclass
class Continued:
    """The options of this run once ``--resume`` or ``--only-failed`` took the recorded ones: ``subset`` (which
    queries, of which run), ``started_at`` and ``out`` (a resumed run's), ``recorded`` (its run_config.json)."""

    options: dict[str, Any]
    subset: dict[str, Any] | None = None
    started_at: str | None = None
    out: Path | None = None
    recorded: dict[str, Any] = field(default_factory=dict)


def continued_options(
    ctx: Any, given: dict[str, Any], resume: Path | None, only_failed: Path | None, out: Path | None
) -> Continued:
    """The options ``eval run`` runs with: as given, or a resumed run's (a contradicting one is a usage error), or
    those of the run whose failed queries ``--only-failed`` asks again (what was given replaces them)."""
    from drivebench.cli.eval_common import usage_error
    from drivebench.evaluator import journal as jn

    options = dict(given)
    if resume is not None and only_failed is not None:
        usage_error("give --resume or --only-failed, not both")
    if resume is not None:
        recorded = resumable(resume)
        bad = contradictions(ctx, given, recorded["options"])
        if out is not None and out.resolve() != resume.resolve():
            bad.append(f"--out {out}: --resume writes the whole run into {resume}")
        if bad:
            usage_error(
                f"--resume {resume}: " + "; ".join(bad),
                f"leave those options out: --resume takes them from {resume / jn.RUN_CONFIG}",
            )
        options.update(recorded["options"])
        return Continued(options, recorded.get("subset"), recorded.get("started_at"), resume, recorded)
    if only_failed is None:
        return Continued(options, out=out)
    try:
        recorded = jn.read_run_config(only_failed) or {}
        ids, source = failed_query_ids(only_failed)
    except (OSError, ValueError, KeyError) as exc:
        usage_error(f"--only-failed {only_failed}: cannot read its failed queries: {exc}")
    for name, value in (recorded.get("options") or {}).items():
        if name in RECORDED and not given_on_command_line(ctx, name):
            options[name] = value
    if not ids:
        usage_error(f"--only-failed {only_failed}: nothing to re-ask: no query missed or leaked in that run ({source})")
    what = f"only-failed of {only_failed.resolve().name}"
    options["label"] = f"{what} ({options['label']})" if options.get("label") else what
    return Continued(options, {"of": str(only_failed.resolve()), "from": source, "query_ids": ids}, out=out)


def resumable(run_dir: Path) -> dict[str, Any]:
    """The recorded run_config.json of a run ``--resume`` can continue; usage errors (exit 2) otherwise."""
    from drivebench.cli.eval_common import usage_error
    from drivebench.evaluator import journal as jn
    from drivebench.evaluator.result import METRICS_JSON, RunResult

    try:
        recorded = jn.read_run_config(run_dir)
        metrics = RunResult.read(run_dir) if (run_dir / METRICS_JSON).exists() else None
    except (OSError, ValueError) as exc:
        usage_error(f"--resume {run_dir}: {exc}")
    complete = (recorded or {}).get("state") == "complete" or (
        recorded is None and metrics is not None and not metrics.partial
    )
    if complete:
        n = len((metrics.per_query if metrics is not None else None) or []) or "all"
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


def done_records(resume: Path, queries: list[Any]) -> list[Any]:
    """The records a resumed run already has for ``queries`` (its run.jsonl); a bad file is a usage error."""
    from drivebench.cli.eval_common import usage_error
    from drivebench.evaluator import journal as jn

    try:
        known = {q.query_id for q in queries}
        run_file = resume / jn.RUN_JSONL
        return [r for r in jn.read_records(run_file) if r.query_id in known] if run_file.exists() else []
    except (OSError, ValueError) as exc:
        usage_error(f"--resume {resume}: {exc}")
