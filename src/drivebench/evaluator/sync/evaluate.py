"""``run_sync``: one ``eval sync`` run from start to finish (what the CLI and ``drivebench.api`` call).

Before: the drive must be at the corpus it loaded (its change feed empty), since the run ends by resetting it
there; ``reset_first`` resets it first instead of refusing. After (also on an error, Ctrl-C, SIGTERM or SIGHUP
under ``stop_on_signals``): the drive is reset, and its snapshot fingerprint and clock compared with the start
(``drive_restored``). A run killed outright (SIGKILL) leaves its changes in the drive's change feed: the next run
refuses to start until ``restore_drive`` (``eval sync --restore``) or ``reset_first`` resets it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from drivebench.evaluator.gates import Gate
from drivebench.evaluator.idmap import IdMapper
from drivebench.evaluator.sync.drive_client import DriveClient, DriveError
from drivebench.evaluator.sync.runner import (
    AnswerTarget,
    RecallTarget,
    SyncConfig,
    SyncRun,
    SyncRunner,
    pair_dicts,
)
from drivebench.evaluator.sync.scenario import Scenario
from drivebench.evaluator.sync.summary import gate_metrics, summarize
from drivebench.evaluator.sync.verdict import judge
from drivebench.formats.evalset import EvalQuery
from drivebench.formats.facts import CorpusFact
from drivebench.formats.target import TargetError


class SyncSetupError(ValueError):
    """The drive or the target cannot be used as given (usage error: exit 2)."""


# the signals that stop a run the way Ctrl-C does: CI runners stop a job with SIGTERM, a closed terminal sends SIGHUP
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal during a run. A KeyboardInterrupt, so it takes Ctrl-C's way out: the run is cut short and
    the drive reset in ``run_sync``'s ``finally``."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(self.name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: SIGHUP 129, SIGINT 130, SIGTERM 143


@dataclass
class _Stopping:
    say: Callable[[str], None]
    held: int = 0  # depth of signals_held blocks: the drive is being reset
    pending: int | None = None  # a signal that came while held
    raised: bool = False


_stopping: _Stopping | None = None


@contextlib.contextmanager
def stop_on_signals(say: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, the first SIGINT, SIGTERM or SIGHUP raises ``Stopped`` (a later one only says the
    drive is being restored); one that comes while the drive is reset waits for the reset to finish. Outside
    the main thread nothing is installed."""
    global _stopping
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    state = _Stopping(say)

    def handler(signum: int, _frame: Any) -> None:
        if state.raised:
            state.say(f"{signal.Signals(signum).name}: already stopping; the drive is being reset")
        elif state.held:
            state.pending = state.pending or signum
        else:
            state.raised = True
            raise Stopped(signum)

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    _stopping = state
    try:
        yield
    finally:
        _stopping = None
        for s, h in previous.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """A stop signal that comes during the block is raised when the block ends, so a reset is never cut short."""
    state = _stopping
    if state is None:
        yield
        return
    state.held += 1
    try:
        yield
    finally:
        state.held -= 1
        if not state.held and state.pending is not None and not state.raised:
            state.raised = True
            raise Stopped(state.pending)


def restore_drive(drive: DriveClient, start: tuple[str, str] | None = None) -> tuple[int, bool | None]:
    """Reset the drive to the corpus it loaded, the stop signals held meanwhile: ``(changes undone, back at
    start)``, where "back at start" compares the snapshot fingerprint and clock with ``start`` (None without
    one). Raises ``DriveError``."""
    with signals_held():
        undone = drive.feed_length()
        drive.reset()
        return undone, (None if start is None else _state(drive) == start)


def _state(drive: DriveClient) -> tuple[str, str]:
    s = drive.stats()
    return str(s.get("snapshot")), str(s.get("clock"))


LAG_FIGURES = (
    "revocation_lag_p50_s",
    "revocation_lag_p95_s",
    "revocation_lag_max_s",
    "leak_seconds_total",
    "revocations_open_bound",
)
CLASS_FIGURES = ("lag_p50_s", "lag_p95_s", "lag_max_s", "leak_seconds", "open_leak_bound")


def withhold_figures(summary: dict[str, Any]) -> None:
    """A failed run (the target broke, nothing testable) gives no lag or leak figure: they become None ("not
    measured") overall and per class, so neither a report nor a gate reads one. The pairs keep what was
    observed, for replay; the counts stay."""
    for key in LAG_FIGURES:
        summary["overall"][key] = None
    for s in summary["classes"].values():
        for key in CLASS_FIGURES:
            s[key] = None


def run_sync(
    drive: DriveClient | None,
    target: RecallTarget,
    target_name: str,
    scenario: Scenario,
    config: SyncConfig,
    *,
    out_dir: Path | None = None,
    reset_first: bool = False,
    max_error_rate: float = 0.0,
    preflight_user: str | None = None,
    on_event: Callable[[str], None] | None = None,
    wait_for_person: Callable[[str], None] | None = None,
    gates: Sequence[Gate] = (),
    allow_not_converged: bool = False,
    id_mapper: IdMapper | None = None,
    answer_target: AnswerTarget | None = None,
    no_answers_why: str | None = None,
    facts: list[CorpusFact] | None = None,
) -> dict[str, Any]:
    """The run's result (``kind: sync``), its verdict judged (``verdict.judge``: the built-in gates and
    ``gates``) before report.md, report.html and metrics.json are written to ``out_dir``.

    ``answer_target``: what the ``answer-cache`` class asks (default: ``target`` when it has ``answer``, checked
    once before the class's first change); ``no_answers_why`` instead says why there is none, and the class is
    not measured with that reason. ``facts``: the corpus's facts (an answer stating one shows its document)."""
    say = on_event or (lambda _m: None)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    if drive is None and not config.manual:
        raise SyncSetupError("a run that applies changes needs the drive's API (or --manual)")
    start: tuple[str, str] | None = None
    if drive is not None and not config.manual:
        try:
            changes = drive.feed_length()
            if changes and not reset_first:
                raise SyncSetupError(
                    f"the drive has {changes} changes since it loaded its corpus (a run stopped by SIGKILL leaves its "
                    "own), and the run ends by resetting it to that corpus: pass --reset-first to start from it, or "
                    "reset it with `drivebench eval sync --restore --drive URL --drive-token TOKEN` (those changes "
                    "are lost)"
                )
            if changes:
                drive.reset()
            start = _state(drive)
        except DriveError as exc:
            raise SyncSetupError(f"the drive cannot be used: {exc}") from exc
    user = preflight_user or "u001"
    if no_answers_why is None and answer_target is None:
        answer_target = cast(AnswerTarget, target) if callable(getattr(target, "answer", None)) else None
    if answer_target is not None:
        no_answers_why = None
    runner = SyncRunner(
        drive,
        target,
        config,
        log_path=(out_dir / "run.jsonl") if out_dir is not None else None,
        on_event=on_event,
        wait_for_person=wait_for_person,
        id_mapper=id_mapper,
        answer_target=answer_target,
        no_answers_why=no_answers_why,
        facts=facts,
    )
    outcome: dict[str, Any] = {"run": SyncRun(scenario.name), "preflight": None}

    async def go() -> None:  # one event loop for every call: the target's connection pool lives in it
        try:
            await target.recall(EvalQuery(query_id="preflight", query="preflight", user_id=user), config.top_k)
        except TargetError as exc:
            outcome["preflight"] = f"the target does not answer: {exc}"
            return
        if scenario.conformance:
            from drivebench.evaluator.sync.conformance import run_conformance

            outcome["run"] = await run_conformance(runner, scenario)
        else:
            outcome["run"] = await runner.run(scenario)

    t0 = time.monotonic()
    try:
        asyncio.run(go())
    finally:
        runner.close()
        run = runner.result or outcome["run"]
        if drive is not None and start is not None:
            try:
                undone, run.drive_restored = restore_drive(drive, start)
                back = "back at its starting snapshot and clock" if run.drive_restored else "NOT at its starting state"
                say(f"the drive was reset to its loaded corpus: {undone} changes undone, {back}")
            except DriveError as exc:
                say(
                    f"the drive could not be reset: {exc}; "
                    "`drivebench eval sync --restore --drive URL --drive-token TOKEN` resets it"
                )
                run.drive_restored = False
    preflight_error = outcome["preflight"]
    pairs = pair_dicts(run)
    summary = summarize(pairs, run.requests, run.errors, run.not_planned, config.deadline_s, run.not_planned_why)
    if run.cases is not None:
        verdicts = [c["verdict"] for c in run.cases]
        summary["conformance"] = {
            v.replace(" ", "_"): verdicts.count(v) for v in ("pass", "fail", "not testable", "not applicable", "error")
        }
        summary["overall"]["cases_failed"] = verdicts.count("fail")
        summary["overall"]["cases_passed"] = verdicts.count("pass")
    state, reason = "ok", None
    if preflight_error is not None:
        state, reason = "failed", preflight_error
    elif summary["errors"]["rate"] > max_error_rate:
        state, reason = (
            "failed",
            f"{summary['errors']['failed']} of {summary['errors']['requests']} target calls failed",
        )
    elif run.cases is not None:
        judged = summary["conformance"]["pass"] + summary["conformance"]["fail"]
        if summary["conformance"]["error"]:
            state, reason = "failed", "a planted case is answered differently by the drive itself"
        elif not judged:
            state, reason = "failed", "nothing was measured: no conformance case could be judged"
    elif not summary["overall"]["pairs"]:
        state, reason = "failed", "nothing was measured: no (principal, document) pair could be tested"
    ids = runner.id_summary()
    if state == "failed" and ids and ids["unmapped"]:
        reason = f"{reason}; {ids['unmapped']} of {ids['results']} results map to no document"
    if state == "failed":
        withhold_figures(summary)
    result: dict[str, Any] = {
        "kind": "sync",
        "status": {"state": state, "reason": reason},
        "sync": {
            "scenario": scenario.name,
            "target": target_name,
            "drive": drive.url if drive is not None else None,
            "config": asdict(config),
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "seconds": round(time.monotonic() - t0, 2),
            "drive_restored": run.drive_restored,
            "changes": [
                {
                    "index": c.index,
                    "class": c.cls,
                    "detail": c.detail,
                    "applied_at": c.applied_at,
                    "error": c.error,
                    "unaffected": c.unaffected,
                    "pairs": [p for p in pairs if p["change"] == c.index],
                }
                for c in run.changes
            ],
            "pairs": pairs,
            "cases": run.cases,
            "ids": ids,
            **summary,
        },
        "errors": summary["errors"],
    }
    result["metrics"] = gate_metrics(summary)
    judge(result, gates, allow_not_converged)
    if out_dir is not None:
        from drivebench.evaluator.sync.outputs import write

        write(result, out_dir)
    return result
