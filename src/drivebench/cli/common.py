"""Shared CLI helpers: consoles, progress bars, loading a simulator with a progress bar.

Progress bars and spinners go to stderr, only on a terminal and never with ``--quiet``: a pipe or a log file gets
the results and the one-line summaries, no bar frames."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
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


def honour_columns() -> None:
    """``COLUMNS`` as it is when a command starts (Rich reads it once, when the console is made: a command run
    in-process after another, as the Python API and the tests do, would keep the first one's width)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        for c in (console, err_console):
            c.width = int(columns)


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


def _files_under(root: Path) -> int:
    n = 0
    for _, _, files in os.walk(root):
        n += len(files)
    return n


@contextlib.contextmanager
def build_progress(label: str, watch: list[Path]) -> Iterator[None]:
    """A spinner with the number of files written so far and the elapsed time, while a corpus is built.

    ``corpora.builtin.build_corpus`` writes into a hidden temporary directory (``.NAME.xxxx``) beside its target
    and renames it when done; this counts the files in directories that appear under ``watch`` after the start
    (polled twice a second, and once more at the end). Off the terminal or with --quiet: nothing."""
    if not bars_enabled():
        yield
        return
    before = {p: {c.name for c in p.iterdir()} if p.is_dir() else set() for p in watch}
    stop = threading.Event()
    written = [0]
    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        TextColumn("{task.completed} files written"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,  # a cache hit leaves nothing behind; a build ends with one summary line
    ) as bar:
        task = bar.add_task(label, total=None)

        def count() -> None:
            n = 0
            for parent, old in before.items():
                if parent.is_dir():
                    for child in parent.iterdir():
                        # the hidden build directory while it is written, the corpus itself once renamed
                        if child.name not in old and child.is_dir():
                            n += _files_under(child)
            written[0] = max(written[0], n)
            bar.update(task, completed=written[0], refresh=True)

        def poll() -> None:
            while not stop.wait(0.5):
                count()

        thread = threading.Thread(target=poll, name="drivebench-build-progress", daemon=True)
        thread.start()
        started = time.monotonic()
        try:
            yield
        finally:
            stop.set()
            thread.join(2)
            count()  # a build quicker than the poll still shows its count once
    if written[0]:
        err_console.print(f"{label}: {written[0]} files written in {time.monotonic() - started:.1f} s")


def resolve_with_progress(name_or_path: str | Path, **kwargs: Any) -> Path:
    """``corpora.builtin.resolve_corpus`` with the build's progress when the corpus is not built yet."""
    from drivebench.corpora.builtin import corpus_cache_root, is_corpus_dir, resolve_corpus

    if is_corpus_dir(Path(name_or_path)):
        return resolve_corpus(name_or_path, **kwargs)
    with build_progress(f"building/locating corpus {name_or_path}", [corpus_cache_root()]):
        return resolve_corpus(name_or_path, **kwargs)


def resolve_corpus_option(corpus: str | Path) -> Path:
    """The corpus directory a command's ``--corpus`` (or corpus argument) names: a built-in name (``seed``,
    ``acme-zh``, ``acme-zh@2``: built into the cache on first use, with its progress) or a corpus directory. Every
    command resolves its corpus here, so a built-in name works wherever a directory does, and read the corpus's
    files from the returned directory, never from the name. Anything else is a DrivebenchError (exit 2) naming
    the built-ins, before any request is sent."""
    from drivebench.corpora.builtin import BUILTINS, lookup_builtin
    from drivebench.errors import DrivebenchError
    from drivebench.formats.corpus import MANIFEST_NAME

    hint = (
        f"use a built-in ({', '.join(BUILTINS)}) or a corpus directory (one holding {MANIFEST_NAME}); "
        "`drivebench corpus build NAME --out DIR` writes one"
    )
    try:
        return resolve_with_progress(corpus)  # a build shows the files it writes
    except KeyError as exc:
        if Path(corpus).is_dir():  # a directory, but not a corpus: say what it lacks
            raise DrivebenchError(f"{corpus} is not a corpus directory: it has no {MANIFEST_NAME}", hint=hint) from exc
        name, _, version = str(corpus).partition("@")
        if version and name in BUILTINS:
            try:
                lookup_builtin(str(corpus))
            except KeyError as bad:  # a built-in's version it does not have: the versions it has
                raise DrivebenchError(str(bad.args[0]), hint=hint) from exc
        raise DrivebenchError(f"unknown corpus {str(corpus)!r}", hint=hint) from exc
    except (OSError, ValueError) as exc:  # a build that cannot be written, a damaged manifest
        raise DrivebenchError(f"corpus {str(corpus)!r}: {exc}", hint=hint) from exc


def counting_bar(label: str, total: int | None = None) -> tuple[Progress, Callable[[int, int], None]]:
    """A progress bar and a ``(done, total)`` callback for it (start it with ``with bar:``)."""
    bar = progress_bar()
    task = bar.add_task(label, total=total)

    def step(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, step


def load_with_progress(corpus: str | Path, config: SimConfig) -> Simulator:
    from drivebench.api import load_simulator

    quiet_libraries()
    corpus_dir = resolve_corpus_option(corpus)
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
