"""Processes that need the same built-in corpus at once (parallel test workers, servers starting together) build it
once: the others wait for that build and use it, instead of each spending the build's time again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from drivebench.corpora import builtin
from drivebench.formats.corpus import MANIFEST_NAME


def test_concurrent_resolves_of_one_corpus_build_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIVEBENCH_CACHE", str(tmp_path / "cache"))
    builds: list[Path] = []

    def slow_build(out: Path, seed: int | None, scale: str | int | None) -> None:
        builds.append(out)
        time.sleep(0.3)  # long enough that every other caller arrives while this build runs
        (out / MANIFEST_NAME).write_text("{}", encoding="utf-8")

    real = builtin.lookup_builtin("seed")
    fake = builtin.BuiltinCorpus(real.name, real.version, slow_build, real.sources, real.summary)
    monkeypatch.setattr(builtin, "lookup_builtin", lambda name: fake)
    got: list[Path] = []
    callers = [threading.Thread(target=lambda: got.append(builtin.resolve_corpus("seed"))) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(timeout=30)
    assert len(got) == 3 and len(set(got)) == 1 and builtin.is_corpus_dir(got[0])
    assert len(builds) == 1, builds  # one build; the two other callers waited for it
    assert got[0].parent == tmp_path / "cache" / "corpora"
