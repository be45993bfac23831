"""Shared CLI helpers: consoles, progress bars, loading a simulator with a progress bar."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from drivebench.simulator.backend import SimConfig, Simulator

console = Console()
err_console = Console(stderr=True)


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
        console=err_console,
        transient=False,
    )


def load_with_progress(corpus: str | Path, config: SimConfig) -> Simulator:
    from drivebench.api import load_simulator
    from drivebench.corpora.builtin import resolve_corpus

    quiet_libraries()
    with err_console.status(f"building/locating corpus {corpus} …"):
        corpus_dir = resolve_corpus(corpus)
    with progress_bar() as bar:
        task = bar.add_task("extract + embed + index", total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        sim = load_simulator(corpus_dir, config=config, progress=step)
    rejected = sim.ingest_report.rejected
    err_console.print(
        f"[green]loaded[/] {sim.drive.name}: {len(sim.drive.documents)} documents, "
        f"{sim.ingest_report.versions} versions, {sim.store.n_alive} chunks"
        + (f", [yellow]{len(rejected)} rejected[/]" if rejected else "")
    )
    return sim
