"""``eval run``: from its options to the written run.

``run_eval`` reads the inputs (the options a resumed or re-asked run takes from its recorded run, the eval set
once, the target, the corpus once), builds the ``EvalOptions`` ``drivebench.api.evaluate`` runs with (the same
path as the Python API), sends the queries with a progress bar and a journal a killed run can be resumed from,
then writes metrics.json, the reports and the history, prints the summary and exits with the verdict.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.console import Console
from rich.markup import escape
from rich.progress import TaskID

from drivebench.cli import run_state as rs
from drivebench.cli.common import console, err_console, progress_bar, resolve_corpus_option, status
from drivebench.cli.eval_common import (
    check_by,
    default_out_dir,
    load_evalset_or_exit,
    parse_gates,
    resolve_target,
    scoring_bar,
    usage_error,
)
from drivebench.cli.eval_verdict import finish_with_gates, judge_gates
from drivebench.cli.options import parse_ks
from drivebench.cli.reports import attach_previous, finish_run

if TYPE_CHECKING:
    from drivebench.evaluator.evaluate import Evaluation
    from drivebench.evaluator.loaded_corpus import LoadedCorpus
    from drivebench.evaluator.options import EvalOptions, EvalSet


@dataclass(frozen=True)
class Sending:
    """The options that only say how to send the queries and where to write: they may change on ``--resume``."""

    token: str | None
    out: Path | None
    concurrency: int | None
    timeout: float | None
    probe: bool
    junit: Path | None
    junit_misses: bool
    json_out: str | None
    history: str | None


def run_eval(
    ctx: Any, given: dict[str, Any], sending: Sending, resume: Path | None, only_failed: Path | None
) -> NoReturn:
    """``eval run``: ``given`` holds the options a run records (``run_state.RECORDED``)."""
    from drivebench.evaluator.evaluate import evalset_hash

    out_console = err_console if sending.json_out == "-" else console
    cont = rs.continued_options(ctx, given, resume, only_failed, sending.out)
    options = cont.options
    evalset_path = Path(options["evalset"]) if options["evalset"] is not None else None
    if evalset_path is None:
        usage_error("--evalset is required (or --resume/--only-failed RUN_DIR, which take the run's)")
    if not evalset_path.is_file():
        usage_error(f"--evalset {evalset_path}: no such file (the eval set the run asked)")
    if resume is not None and evalset_hash(evalset_path) != cont.recorded["options"].get("evalset_hash"):
        usage_error(
            f"--resume {resume}: the eval set {evalset_path} changed since the run: its queries are not the same"
        )
    k = ",".join(map(str, options["k"])) if isinstance(options["k"], list) else options["k"]
    ks = parse_ks(k)
    gates = parse_gates(options["fail_on"])
    evalset = _queries_to_ask(load_evalset_or_exit(evalset_path), cont.subset)  # parsed once for the whole run
    check_by(evalset.queries, options["by"])
    done = rs.done_records(resume, evalset.queries) if resume is not None else []
    target_profile = Path(options["target_profile"]) if options["target_profile"] is not None else None
    profile, url, single, per_principal = resolve_target(
        target_profile, options["target"], sending.token, options["mcp"]
    )
    corpus = _corpus(options["corpus"], evalset, url, single, checks_served=target_profile is None)
    out_dir = Path(cont.out or default_out_dir())
    config: dict[str, Any] = {
        "state": "running",
        "started_at": cont.started_at or datetime.now(UTC).isoformat(),
        "options": {
            **{n: rs.normalise(n, options[n]) for n in rs.RECORDED},
            "evalset_hash": evalset_hash(evalset_path),
        },
        **({"subset": cont.subset} if cont.subset is not None else {}),
    }
    eval_options = _eval_options(options, sending, ks, profile, single, per_principal, corpus, done, target_profile)
    evaluation = _send(url, evalset, eval_options, out_dir, config, resume is not None)
    info = evaluation.result["run_info"]
    if target_profile is not None:
        info["target_profile"] = str(target_profile)
    info["started_at"] = config["started_at"]  # a resumed run started when its first part did
    if cont.subset is not None:  # named after the run's own keys, as a subset's run_info always was
        info.update(evalset=str(evalset_path), evalset_hash=evalset_hash(evalset_path))
        info["subset"] = {k_: v for k_, v in cont.subset.items() if k_ != "query_ids"} | {
            "queries": len(evalset.queries)
        }
    _write_and_finish(evaluation, options, gates, out_dir, config, sending, out_console)


def _queries_to_ask(evalset: EvalSet, subset: dict[str, Any] | None) -> EvalSet:
    """The eval set's queries ``--only-failed`` asks again (all of them without a subset)."""
    from drivebench.evaluator.options import EvalSet

    if subset is None:
        return evalset
    wanted = set(subset["query_ids"])
    missing = sorted(wanted - {q.query_id for q in evalset.queries})
    if missing:
        usage_error(f"{len(missing)} of the queries to ask again are not in {evalset.path}: {', '.join(missing[:5])}")
    return EvalSet([q for q in evalset.queries if q.query_id in wanted])  # run_info names the file after the run


def _corpus(
    corpus: str | None, evalset: EvalSet, url: str, token: str | None, checks_served: bool
) -> LoadedCorpus | None:
    """``--corpus`` read once (built on first use with its progress shown); a bad name, an eval set of another
    corpus, or a simulator that says it serves another corpus: usage errors before anything is sent."""
    if corpus is None:
        return None
    from drivebench.api import check_fits
    from drivebench.cli.preflight import check_served_corpus
    from drivebench.evaluator.loaded_corpus import LoadedCorpus

    try:
        loaded = LoadedCorpus.load(resolve_corpus_option(corpus), corpus)
    except ValueError as exc:  # a malformed facts.jsonl
        usage_error(str(exc))
    check_fits(evalset.queries, loaded)
    if checks_served:  # the simulator's shape: its /healthz may say which corpus it serves
        check_served_corpus(url, token, corpus)
    return loaded


def _eval_options(
    options: dict[str, Any],
    sending: Sending,
    ks: list[int],
    profile: Any,
    single: str | None,
    per_principal: dict[str, str],
    corpus: LoadedCorpus | None,
    done: list[Any],
    target_profile: Path | None,
) -> EvalOptions:
    from drivebench.evaluator.options import EvalOptions

    return EvalOptions(
        corpus=corpus,
        token=single,
        tokens=per_principal,
        profile=profile if target_profile is not None else None,
        fields=options["field"],
        mcp=options["mcp"],
        citation_style=options["citation_style"],
        match=options["match"] or profile.ids.match,
        ks=ks,
        concurrency=sending.concurrency or profile.request.concurrency,
        timeout=sending.timeout or profile.request.timeout_s,
        answers=options["answers"],
        preflight=sending.probe,
        max_error_rate=options["max_error_rate"],
        by=options["by"],
        label=options["label"],
        done=done,
    )


def _send(
    url: str, evalset: EvalSet, options: EvalOptions, out_dir: Path, config: dict[str, Any], resumed: bool
) -> Evaluation:
    """Run ``evaluate`` with the progress bars, the preflight line, the journal and Ctrl-C; a profile, mapping, map
    file or token list that cannot be used is a usage error."""
    from dataclasses import replace

    from drivebench.api import evaluate
    from drivebench.evaluator import journal as jn
    from drivebench.evaluator.options import EvalHooks
    from drivebench.evaluator.runner import Interrupt

    bar = progress_bar()  # started when the run starts: the preflight and the oracle's spinner come first
    tasks: list[TaskID] = []
    journal: list[jn.RunJournal] = []
    mode = "answer" if options.answers else "recall"

    def run_starts(n: int) -> None:
        jn.write_run_config(out_dir, config)  # before the first query: a killed run can be resumed
        journal.append(jn.RunJournal(out_dir / jn.RUN_JSONL, resume=resumed))
        bar.start()
        tasks.append(bar.add_task(f"{mode} × {n}", total=n))

    interrupt = Interrupt()
    hooks = EvalHooks(
        progress=lambda: bar.advance(tasks[0]),
        scoring_progress=scoring_bar(bar),  # scoring (the leak oracle) takes seconds: a bar
        on_preflight=_show_preflight,
        loading=status,  # loading the leak oracle takes seconds: a spinner
        on_run_start=run_starts,
        on_record=lambda rec: journal[0].append(rec) if journal else None,
        interrupt=interrupt,
    )
    try:
        try:
            with rs.stop_on_signals(interrupt.trigger, rs.announce):
                return evaluate(url, evalset, replace(options, hooks=hooks))
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


def _show_preflight(pre: Any) -> None:
    style = "green" if pre.ok else ("red" if pre.fatal else "yellow")
    err_console.print(
        f"[{style}]preflight[/] {escape(pre.diagnosis)} ({pre.seconds:.2f} s)", highlight=False, soft_wrap=True
    )


def _write_and_finish(
    evaluation: Evaluation,
    options: dict[str, Any],
    gates: list[Any],
    out_dir: Path,
    config: dict[str, Any],
    sending: Sending,
    out_console: Console,
) -> NoReturn:
    """Judge, write run.jsonl, metrics.json, the reports and the history, print the summary, exit."""
    from drivebench.evaluator import journal as jn
    from drivebench.evaluator.evaluate import write_outputs
    from drivebench.evaluator.report.terminal import print_summary

    result = evaluation.result
    resume_cmd = f"drivebench eval run --resume {shlex.quote(str(out_dir))}"
    if evaluation.partial:  # every output says how to continue
        result["completion"]["resume"] = resume_cmd
        result["status"]["reason"] += f"; continue with: {resume_cmd}"
    allow = (options["allow_no_oracle"], options["allow_leaks"])
    judge_gates(result, gates, *allow)  # before metrics.json and every report
    attach_previous(result, sending.history)  # the change since the previous run with this label, stored too
    out_dir = write_outputs(evaluation, out_dir)
    jn.write_run_config(out_dir, {**config, "state": "partial" if evaluation.partial else "complete"})
    print_summary(result, out_console)
    finish_run(result, out_dir, sending.history, out_console)  # report.md, report.html, history
    err_console.print(f"wrote {out_dir / 'run.jsonl'} and {out_dir / 'metrics.json'}")
    if evaluation.partial:
        done_n = result["completion"]
        err_console.print(
            f"[bold red]PARTIAL run[/]: {done_n['answered']} of {done_n['queries']} queries answered, the figures are "
            f"over those only; continue with: {escape(resume_cmd)}",
            highlight=False,
            soft_wrap=True,
        )
    finish_with_gates(
        result,
        gates,
        sending.junit,
        sending.json_out,
        out_console,
        {"out_dir": str(out_dir)},
        *allow,
        sending.junit_misses,
    )
