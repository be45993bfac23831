"""Shared CLI helpers: consoles, progress bars, loading a simulator with a progress bar.

Progress bars and spinners go to stderr, only on a terminal and never with ``--quiet``: a pipe or a log file gets
the results and the one-line summaries, no bar frames."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:  # the simulator imports take ~1.5 s: not for `--version`, `--help` or a usage error
    from drivebench.simulator.backend import SimConfig, Simulator

console = Console()
err_console = Console(stderr=True)
QUIET = {"on": False}  # set by the root option --quiet


def set_quiet(quiet: bool) -> None:
    QUIET["on"] = quiet


def bars_enabled() -> bool:
    """Bars only on an interactive terminal and without --quiet."""
    return not QUIET["on"] and err_console.is_terminal and not err_console.is_dumb_terminal


def status(message: str) -> Any:
    """A spinner on a terminal; nothing (a no-op context) in a pipe or with --quiet."""
    return err_console.status(message) if bars_enabled() else contextlib.nullcontext()


def info(message: str) -> None:
    """A one-line summary on stderr (suppressed by --quiet)."""
    if not QUIET["on"]:
        err_console.print(message, soft_wrap=True)


def quiet_libraries() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for name in ("sentence_transformers", "transformers", "jieba", "httpx", "faiss"):
        logging.getLogger(name).setLevel(logging.ERROR)


def progress_bar() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
        disable=not bars_enabled(),
    )


def load_with_progress(corpus: str | Path, config: SimConfig) -> Simulator:
    from drivebench.api import load_simulator
    from drivebench.corpora.builtin import BUILTINS, resolve_corpus
    from drivebench.corpora.format import MANIFEST_NAME
    from drivebench.errors import DrivebenchError

    quiet_libraries()
    with status(f"building/locating corpus {corpus} …"):
        try:
            corpus_dir = resolve_corpus(corpus)
        except KeyError as exc:
            raise DrivebenchError(
                f"unknown corpus {str(corpus)!r}",
                hint=f"use a built-in ({', '.join(BUILTINS)}) or a corpus directory (one holding {MANIFEST_NAME}); "
                "`drivebench corpus build NAME --out DIR` writes one",
            ) from exc
    with progress_bar() as bar:
        task = bar.add_task("extract + embed + index", total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        sim = load_simulator(corpus_dir, config=config, progress=step)
    rejected = sim.ingest_report.rejected
    info(
        f"[green]loaded[/] {sim.drive.name}: {len(sim.drive.documents)} documents, "
        f"{sim.ingest_report.versions} versions, {sim.store.n_alive} chunks"
        + (f", [yellow]{len(rejected)} rejected[/]" if rejected else "")
    )
    return sim
