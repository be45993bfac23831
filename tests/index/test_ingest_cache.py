"""Ingestion stays incremental and cached per (embedder fingerprint, chunk hash); switching embedder
builds only its own vectors; progress is reported while embedding; pipelined encoding changes nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.search.index.embedders import HashEmbedder
from drivebench.simulator.backend import SimConfig, Simulator


class Counting(HashEmbedder):
    """The hash test backend, counting passages it encodes, under a fingerprint of its own."""

    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.encoded = 0

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        if kind == "passage":
            self.encoded += len(texts)
        return super().encode(texts, kind=kind)


@pytest.fixture(scope="module")
def seed_dir() -> Path:
    return resolve_corpus("seed")


def _sim(seed_dir: Path, cache: Path, embedder: Counting, **kw: object) -> Simulator:
    return Simulator(Drive.from_corpus(seed_dir), SimConfig(embedder="hash", cache_dir=cache, **kw), embedder)  # type: ignore[arg-type]


def test_second_ingest_encodes_nothing_and_switching_embedder_encodes_only_its_own(
    seed_dir: Path, tmp_path: Path
) -> None:
    first = Counting("count/a")
    sim = _sim(seed_dir, tmp_path, first)
    sim.ingest_all()
    unique = len(set(sim.store.texts))
    assert first.encoded == unique > 20

    again = Counting("count/a")  # same fingerprint: every vector comes from the cache
    sim2 = _sim(seed_dir, tmp_path, again)
    sim2.ingest_all()
    assert again.encoded == 0
    assert sim2.store.n_alive == sim.store.n_alive

    other = Counting("count/b")  # another embedder: encodes everything once, under its own key
    _sim(seed_dir, tmp_path, other).ingest_all()
    assert other.encoded == unique
    back = Counting("count/a")  # and switching back costs nothing: a's vectors are still there
    _sim(seed_dir, tmp_path, back).ingest_all()
    assert back.encoded == 0


def test_progress_counts_every_version_once_and_pipelining_changes_nothing(seed_dir: Path, tmp_path: Path) -> None:
    calls: list[int] = []
    small_groups = _sim(seed_dir, tmp_path / "a", Counting("count/p"))
    items = [(d, v) for d in small_groups.drive.documents.values() for v in d.versions]
    from drivebench.search.ingest import ingest

    report = ingest(
        small_groups.drive,
        items,
        small_groups.store,
        small_groups.embedder,
        small_groups.cache,
        small_groups.config.extract,
        small_groups.config.chunking,
        progress=calls.append,
        batch_versions=4,  # many groups: encoding of one overlaps extraction of the next
    )
    assert sum(calls) == len(items) and all(n > 0 for n in calls)
    assert report.versions + len(report.rejected) == len(items)
    one_group = _sim(seed_dir, tmp_path / "b", Counting("count/p"))
    one_group.ingest_all()
    assert small_groups.store.texts == one_group.store.texts
    assert small_groups.store.version_ids == one_group.store.version_ids
    q = one_group.embedder.encode_queries(["项目X 技术方案"])[0]
    everything = np.ones(len(one_group.store), dtype=bool)
    assert small_groups.store.search(q, everything, 5) == one_group.store.search(q, everything, 5)
