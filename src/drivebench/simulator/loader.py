"""Load a corpus into a simulator: build it if needed, extract and index every version."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drivebench.corpora.builtin import DEFAULT_CORPUS, resolve_corpus
from drivebench.drive.state import Drive
from drivebench.simulator.backend import SimConfig, Simulator


def load_simulator(
    corpus: str | Path = DEFAULT_CORPUS,
    *,
    config: SimConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Simulator:
    """Build (if needed) and load a corpus, extract and index every version. ``progress(done, total)``."""
    corpus_dir = resolve_corpus(corpus)
    sim = Simulator(Drive.from_corpus(corpus_dir), config)
    total = sum(len(d.versions) for d in sim.drive.documents.values())
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    sim.ingest_all(step)
    sim.corpus_dir = corpus_dir
    return sim
