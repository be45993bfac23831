"""Versioned built-in corpora: ``NAME@VERSION`` everywhere a corpus is named; version 1 is frozen.

The checksum list was computed from the code before any version-2 generator change (commit 7d5ea28): if a
change to a shared module (renderers, the manifest writer, the eval-set writer) alters a byte of
``acme-zh@1`` or ``acme-en@1``, the frozen-build test names the files that differ.

The builds compared are the session's cached ones (``resolve_corpus``): the cache key is a fingerprint of every
source file a version is built from, so a cached build is the build of the code under test, and every other test
that reads the corpus shares it (in CI, from a clean clone, each is built once).
"""

from __future__ import annotations

import json
from pathlib import Path

import grimp
import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora import builtin
from drivebench.corpora.builtin import (
    DEFAULT_CORPUS,
    builtin_labels,
    corpus_version,
    is_builtin,
    lookup_builtin,
    resolve_corpus,
)
from drivebench.corpora.checksums import tree_checksums, tree_digest
from drivebench.formats.corpus import MANIFEST_NAME, load_manifest, write_manifest

CHECKSUMS = Path(__file__).parent / "data" / "acme_v1_checksums.json"
V2_CHECKSUMS = Path(__file__).parent / "data" / "acme_v2_checksums.json"


@pytest.mark.slow
@pytest.mark.parametrize("label", ["acme-zh@1", "acme-en@1"])
def test_version_1_builds_byte_identical_to_the_committed_checksums(label: str) -> None:
    expected = json.loads(CHECKSUMS.read_text(encoding="utf-8"))["corpora"][label]
    out = resolve_corpus(label)
    got = tree_checksums(out)
    assert sorted(set(got) ^ set(expected["files"])) == []  # no file added or lost
    assert [p for p in expected["files"] if got[p] != expected["files"][p]] == []
    assert tree_digest(got) == expected["digest"]
    assert len(got) > 400 and {"corpus.json", "evalset.jsonl"} <= set(got)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["acme-zh@2", "acme-en@2"])
def test_version_2_builds_the_committed_bytes(label: str) -> None:
    """Version 2 is not frozen, but it changes only on purpose: the list (first computed from main 41ce1ef,
    before the scenario's text moved into data files) is updated in a commit that says why."""
    expected = json.loads(V2_CHECKSUMS.read_text(encoding="utf-8"))["corpora"][label]
    out = resolve_corpus(label)
    got = tree_checksums(out)
    assert sorted(set(got) ^ set(expected["files"])) == []
    assert [p for p in expected["files"] if got[p] != expected["files"][p]] == []
    assert tree_digest(got) == expected["digest"]
    assert {"corpus.json", "evalset.jsonl", "generation.json"} <= set(got)


BUILD_PACKAGES = {1: "generator", 2: "acme2", 3: "acme3"}  # the package of each acme version's build


def test_each_versions_fingerprint_covers_the_code_its_build_imports() -> None:
    """The checksum tests compare the cached build, and the cache key is a fingerprint of a version's sources: a
    module a build imports (of the corpora or not: the tokenizer, the drive acme@2 checks its plants on) but its
    sources leave out (the shared ``corpora/common``, say) could change
    the version's bytes while the cache serves the old ones and its checksum test passes."""
    graph = grimp.build_graph("drivebench", include_external_packages=False)
    uncovered: dict[str, list[str]] = {}
    for label in builtin_labels():
        version = lookup_builtin(label)
        package = "seed" if version.name == "seed" else BUILD_PACKAGES[version.version]
        build = f"drivebench.corpora.{package}.build"
        imported = graph.find_upstream_modules(build) | {build}
        files = [_source_file(m) for m in sorted(imported) if m != "drivebench"]  # the package root only re-exports
        missing = [f for f in files if not any(f == s or f.startswith(f"{s}/") for s in version.sources)]
        if missing:
            uncovered[label] = missing
    assert uncovered == {}
    assert "corpora/common/assemble.py" in _files_of(lookup_builtin("acme-zh@3").sources)  # the walk sees it


def _source_file(module: str) -> str:
    """``drivebench.corpora.common`` -> ``corpora/common/__init__.py``; a module -> its ``.py`` file."""
    relative = "/".join(module.split(".")[1:])
    return f"{relative}/__init__.py" if (builtin._HERE / relative).is_dir() else f"{relative}.py"


def _files_of(sources: tuple[str, ...]) -> set[str]:
    out: set[str] = set()
    for source in sources:
        path = builtin._HERE / source
        found = path.rglob("*.py") if path.is_dir() else [path]
        out |= {f.relative_to(builtin._HERE).as_posix() for f in found}
    return out


def test_names_and_versions_resolve() -> None:
    assert lookup_builtin("acme-zh@1").version == 1
    assert lookup_builtin("acme-en@1").label == "acme-en@1"
    newest = max(builtin.VERSIONS["acme-zh"])
    assert lookup_builtin("acme-zh").version == newest  # bare = newest
    assert lookup_builtin("seed").label == "seed@1"
    for bad in ("acme-zh@0", "acme-zh@99", "acme-zh@x", "acme-zh@", "acme-fr", "acme-fr@1"):
        assert not is_builtin(bad)
        with pytest.raises(KeyError):
            lookup_builtin(bad)
    assert is_builtin(DEFAULT_CORPUS)


def test_resolve_caches_each_version_apart_and_reports_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIVEBENCH_CACHE", str(tmp_path))
    one = resolve_corpus("acme-en@1", scale=40)  # 40 documents: the caching is the point, not the corpus
    assert one.name.startswith("acme-en@1-seeddefault-40-")
    assert resolve_corpus("acme-en@1", scale=40) == one  # cached
    assert corpus_version(one) == "acme-en@1"
    assert "corpus_version" not in json.loads((one / MANIFEST_NAME).read_text(encoding="utf-8"))
    with pytest.raises(KeyError, match="neither a corpus directory"):
        resolve_corpus("acme-en@42")


def test_corpus_version_of_other_corpora(tmp_path: Path) -> None:
    seed = resolve_corpus("seed")
    assert corpus_version(seed) == "seed@1"
    m = load_manifest(seed)
    m.name = "my-own-drive"
    write_manifest(m, tmp_path)
    assert corpus_version(tmp_path) is None  # hand-written or exported: no built-in version
    m.name, m.corpus_version = "acme-zh", 7
    write_manifest(m, tmp_path)
    assert corpus_version(tmp_path) == "acme-zh@7"
    assert json.loads((tmp_path / MANIFEST_NAME).read_text(encoding="utf-8"))["corpus_version"] == 7


def test_cli_build_takes_versions(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["corpus", "build", "acme-en@1", "--scale", "small", "--out", str(tmp_path / "c")])
    assert ok.exit_code == 0, ok.output
    assert "acme-en@1" in ok.output
    assert load_manifest(tmp_path / "c").name == "acme-en"
    bad = runner.invoke(app, ["corpus", "build", "acme-en@42", "--out", str(tmp_path / "d")])
    assert bad.exit_code == 2
    assert "unknown version" in bad.output
    assert not (tmp_path / "d").exists()


def test_a_build_that_loses_the_race_leaves_the_winner_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes building one corpus into the cache (parallel test workers): the second to finish keeps the
    first's directory (same bytes) instead of replacing it under whoever is reading it."""
    monkeypatch.setenv("DRIVEBENCH_CACHE", str(tmp_path / "cache"))
    first = builtin.resolve_corpus("seed")
    inode = first.stat().st_ino
    files = sorted(p for p in first.rglob("*") if p.is_file())
    builtin._build_into_cache(builtin.lookup_builtin("seed"), first, None, None)  # a late second build
    assert first.stat().st_ino == inode and all(p.is_file() for p in files)
    leftovers = [p.name for p in first.parent.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock")]
    assert leftovers == []  # its temporary dir is gone (the build's lock file stays, empty)
