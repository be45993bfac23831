"""The extraction cache returns exactly what a fresh extraction gives, and never mixes strategies."""

from __future__ import annotations

from pathlib import Path

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.extract import ExtractConfig
from drivebench.search.index.extraction_cache import ExtractionCache
from drivebench.search.ingest import ChunkingConfig, prepare
from drivebench.simulator.backend import SimConfig, Simulator


def test_cached_equals_fresh_and_keys_follow_settings(tmp_path: Path) -> None:
    drive = Drive.from_corpus(resolve_corpus("seed"))
    cache = ExtractionCache(tmp_path / "x.sqlite3")
    items = [(d, v) for d in drive.documents.values() for v in d.versions]
    fresh = [prepare(drive, d, v, ExtractConfig(), ChunkingConfig()) for d, v in items]
    first = [prepare(drive, d, v, ExtractConfig(), ChunkingConfig(), cache) for d, v in items]
    second = [prepare(drive, d, v, ExtractConfig(), ChunkingConfig(), cache) for d, v in items]
    assert [p.chunks for p in fresh] == [p.chunks for p in first] == [p.chunks for p in second]  # type: ignore[union-attr]
    small = [prepare(drive, d, v, ExtractConfig(), ChunkingConfig(max_chars=120), cache) for d, v in items]
    assert sum(len(p.chunks) for p in small) > sum(len(p.chunks) for p in fresh)  # type: ignore[union-attr]
    keys = {
        ExtractionCache.key("b", "a.dxf", {"extract": ExtractConfig(dxf=s).as_dict()})
        for s in ("entities+titleblock", "filename-only")
    }
    assert len(keys) == 2


def test_simulators_share_the_cache(tmp_path: Path) -> None:
    corpus = resolve_corpus("seed")
    cfg = SimConfig(embedder="hash", cache_dir=tmp_path)
    a = Simulator(Drive.from_corpus(corpus), cfg)
    a.ingest_all()
    b = Simulator(Drive.from_corpus(corpus), cfg)
    b.ingest_all()
    assert a.store.texts == b.store.texts and a.store.parts == b.store.parts
