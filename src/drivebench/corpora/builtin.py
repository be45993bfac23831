"""Built-in corpora, versioned, built on demand into a cache and reused while their source is unchanged.

A built-in corpus is named ``NAME`` or ``NAME@VERSION`` (``acme-zh@1``, ``acme-zh@2``); a bare ``NAME``
means its newest version. ``resolve_corpus("acme-zh@1")`` returns a directory in the on-disk format (see
``format.py``); a path to such a directory is returned as it is. Every entry point that takes a corpus
(``corpus build``, ``serve --corpus``, ``demo``, ``eval --corpus``, ``/_sim/seed``, the Python API) goes
through ``resolve_corpus``, so all of them accept versions.

Versions are frozen: ``acme-zh@1`` is the generator in ``generator/`` and builds byte-identical to the
checksum list in ``tests/corpora/data/acme_v1_checksums.json`` (a test compares). New behaviour goes into
a new version, never into an old one.

The cache key covers the corpus name and version, seed, scale and a fingerprint of the code and data that
write it, so a change rebuilds. Builds write into a temporary directory and rename it into place, so a
crash never leaves a half-built corpus behind.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from drivebench.formats.corpus import MANIFEST_NAME, Manifest, load_manifest
from drivebench.resources import package_dir

# The demo's and the server's default: acme-zh@3 passes `corpus validate` and every acceptance check of
# `corpus audit --strict`, gold lint and composition included (tests/corpora/test_acme_v3_audit.py). Pinned by
# version so that a newer version becomes the default only by a decision; a bare "acme-zh" elsewhere means the
# newest version.
DEFAULT_CORPUS = "acme-zh@3"
_HERE = package_dir("drivebench")  # sources are named relative to the package root

Builder = Callable[[Path, int | None, str | int | None], None]


@dataclass(frozen=True)
class BuiltinCorpus:
    """One version of a built-in corpus: how to build it and which source files (relative to the ``drivebench`` package)
    it depends on (``*.py`` and data files under a directory; the fingerprint of the cache key)."""

    name: str
    version: int
    build: Builder
    sources: tuple[str, ...]
    summary: str

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"


def _build_seed(out: Path, seed: int | None, scale: str | int | None) -> None:
    from drivebench.corpora.seed.build import build_seed

    build_seed(out)


def _generator(module: str, function: str, language: str) -> Builder:
    """A builder calling ``drivebench.corpora.<module>.build.<function>(out, language=..., [seed], [scale])``
    (imported on first build: listing the built-ins loads no generator)."""

    def build(out: Path, seed: int | None, scale: str | int | None) -> None:
        import importlib

        kwargs: dict[str, object] = {"language": language}
        if seed is not None:
            kwargs["seed"] = seed
        if scale is not None:
            kwargs["scale"] = scale
        getattr(importlib.import_module(f"drivebench.corpora.{module}.build"), function)(out, **kwargs)

    return build


def _acme_v1(language: str) -> Builder:
    return _generator("generator", "build_acme", language)


def _acme_v2(language: str) -> Builder:
    return _generator("acme2", "build_acme2", language)


def _acme_v3(language: str) -> Builder:
    return _generator("acme3", "build_acme3", language)


# The shared code (corpora/common) is in every version's sources: a change to it rebuilds every version, so each
# version's checksum test sees whether it moved that version's bytes (tests/corpora/test_versions.py checks that
# a version's sources cover every corpora module its build imports). The scenario data in generator/scenario is
# shared too (names, formats, the organisation).
_SHARED_SOURCES = ("corpora/common", "corpora/render", "formats/corpus.py", "formats/evalset.py", "resources.py")
# versions 2 and 3 keep only questions whose words the documents share (the tokenizer every BM25 here uses)
_TOKENIZER_SOURCES = ("formats/tokens.py", "search/index/tokenize.py")
_V1_SOURCES = ("corpora/generator", *_SHARED_SOURCES)
# the seed's owned facts (corpora/seed/facts.toml) are checked against the text extracted from its files
_SEED_SOURCES = (
    "corpora/seed",
    "corpora/render",
    "extract",
    "formats/corpus.py",
    "formats/evalset.py",
    "formats/facts.py",
    "formats/query_length.py",
)
# version 2 builds on version 1's story and plants overshares from its own spec, checked on a real drive and its
# permission model (so the drive and the Casbin model are its sources too)
_V2_SOURCES = (
    "corpora/acme2",
    "corpora/plants.py",
    "corpora/planted_overshares.json",
    "drive",
    "policies",
    *_TOKENIZER_SOURCES,
    *_V1_SOURCES,
)
# version 3 keeps version 1's organisation, folder tree, grant rules and renderers (all in corpora/common) and
# their data; its world is its own
_V3_SOURCES = (
    "corpora/acme3",
    "corpora/generator/scenario",
    "formats/facts.py",
    *_TOKENIZER_SOURCES,
    *_SHARED_SOURCES,
)

_REGISTRY: tuple[BuiltinCorpus, ...] = (
    BuiltinCorpus(
        "seed",
        1,
        _build_seed,
        _SEED_SOURCES,
        "29 hand-written documents",
    ),
    BuiltinCorpus("acme-zh", 1, _acme_v1("zh"), _V1_SOURCES, "generated Chinese enterprise (frozen)"),
    BuiltinCorpus("acme-en", 1, _acme_v1("en"), _V1_SOURCES, "generated English enterprise (frozen)"),
    BuiltinCorpus("acme-zh", 2, _acme_v2("zh"), _V2_SOURCES, "acme-zh with distractors and realistic questions"),
    BuiltinCorpus("acme-en", 2, _acme_v2("en"), _V2_SOURCES, "acme-en with distractors and realistic questions"),
    BuiltinCorpus(
        "acme-zh", 3, _acme_v3("zh"), _V3_SOURCES, "acme-zh, one consistent world: gold a careful reader accepts"
    ),
    BuiltinCorpus(
        "acme-en", 3, _acme_v3("en"), _V3_SOURCES, "acme-en, one consistent world: gold a careful reader accepts"
    ),
)


def _index(registry: tuple[BuiltinCorpus, ...]) -> dict[str, dict[int, BuiltinCorpus]]:
    out: dict[str, dict[int, BuiltinCorpus]] = {}
    for b in registry:
        out.setdefault(b.name, {})[b.version] = b
    return out


VERSIONS: dict[str, dict[int, BuiltinCorpus]] = _index(_REGISTRY)
BUILTINS: tuple[str, ...] = tuple(VERSIONS)  # corpus names (without versions)


def builtin_labels() -> list[str]:
    """Every accepted built-in spelling's canonical form: ``seed@1``, ``acme-zh@1``, ``acme-zh@2``, …"""
    return [b.label for versions in VERSIONS.values() for b in versions.values()]


def _known() -> str:
    return ", ".join(f"{n} (versions {', '.join(str(v) for v in sorted(vs))})" for n, vs in VERSIONS.items())


def lookup_builtin(spec: str) -> BuiltinCorpus:
    """``"acme-zh"`` (newest version), ``"acme-zh@1"`` -> its :class:`BuiltinCorpus`; KeyError otherwise."""
    name, sep, version = str(spec).partition("@")
    if name not in VERSIONS:
        raise KeyError(f"unknown corpus {name!r}; built-in corpora: {_known()}")
    versions = VERSIONS[name]
    if not sep:
        return versions[max(versions)]
    if not version.isdigit() or int(version) not in versions:
        raise KeyError(f"unknown version {version!r} of corpus {name!r}; versions: {', '.join(map(str, versions))}")
    return versions[int(version)]


def is_builtin(spec: str) -> bool:
    try:
        lookup_builtin(spec)
    except KeyError:
        return False
    return True


def corpus_version(corpus_dir: Path) -> str | None:
    """The built-in corpus and version a directory holds (``"acme-zh@2"``), for run metadata and history.

    Read from the manifest's ``corpus_version`` (written from version 2 on); a manifest without it whose
    name is a built-in was written by version 1 (which predates the field and stays byte-identical).
    None for corpora that are not built-in (hand-written, exported from a drive, imported from BEIR).
    """
    return manifest_version(load_manifest(Path(corpus_dir)))


def manifest_version(m: Manifest) -> str | None:
    """``corpus_version`` of a manifest already read."""
    if m.corpus_version is not None:
        return f"{m.name}@{m.corpus_version}"
    if m.name in VERSIONS and 1 in VERSIONS[m.name]:
        return f"{m.name}@1"
    return None


def corpus_cache_root() -> Path:
    from drivebench.paths import cache_dir  # one cache for every entry point

    return cache_dir() / "corpora"


def _source_fingerprint(parts: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in parts:
        path = _HERE / part
        files = (
            sorted(f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
            if path.is_dir()
            else [path]
        )
        for f in files:
            h.update(str(f.relative_to(_HERE)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def is_corpus_dir(path: Path) -> bool:
    return (path / MANIFEST_NAME).is_file()


def cached_build(name: str, *, seed: int | None = None, scale: str | int | None = None) -> Path | None:
    """The cache's build of ``name`` at ``seed`` and ``scale`` from the current sources, if there is one."""
    builtin = lookup_builtin(name)
    target = corpus_cache_root() / _cache_key(builtin, seed, scale)
    return target if is_corpus_dir(target) else None


def _cache_key(builtin: BuiltinCorpus, seed: int | None, scale: str | int | None) -> str:
    fingerprint = _source_fingerprint(builtin.sources)
    return f"{builtin.name}@{builtin.version}-seed{seed if seed is not None else 'default'}-{scale or 'default'}-{fingerprint}"


def build_corpus(name: str, out: Path, *, seed: int | None = None, scale: str | int | None = None) -> Path:
    """Build built-in corpus ``name`` (``NAME`` or ``NAME@VERSION``) into ``out`` (replaced if present). When the
    cache holds the same build (same version, seed, scale and sources) it is copied: a build is a pure function of
    those, so the bytes are the same and the copy takes a fraction of the time."""
    builtin = lookup_builtin(name)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cached = cached_build(name, seed=seed, scale=scale)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        if cached is not None and cached.resolve() != out.resolve():
            shutil.copytree(cached, tmp, dirs_exist_ok=True)
        else:
            builtin.build(tmp, seed, scale)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def resolve_corpus(name_or_path: str | Path, *, seed: int | None = None, scale: str | int | None = None) -> Path:
    """A corpus directory for a built-in name (built into the cache when needed) or a path."""
    path = Path(name_or_path)
    if is_corpus_dir(path):
        return path
    try:
        builtin = lookup_builtin(str(name_or_path))
    except KeyError as exc:
        raise KeyError(
            f"{str(name_or_path)!r} is neither a corpus directory (with {MANIFEST_NAME}) nor a built-in: {exc.args[0]}"
        ) from None
    target = corpus_cache_root() / _cache_key(builtin, seed, scale)
    if not is_corpus_dir(target):
        with _build_lock(target):  # a second process waits for the first one's build instead of building too
            if not is_corpus_dir(target):
                _build_into_cache(builtin, target, seed, scale)
    return target


@contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``target``'s build (a lock file beside it) while it is built: parallel test
    workers or servers starting together that need the same corpus build it once. Where ``fcntl`` does not
    exist (Windows), no lock: each builds, and the first rename wins (``_build_into_cache``)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_into_cache(builtin: BuiltinCorpus, target: Path, seed: int | None, scale: str | int | None) -> None:
    """Build into a temporary directory beside ``target`` and rename it into place. When another process got
    there first (parallel test workers, two servers starting), its build stays: a build is a pure function of
    its key, and replacing it would pull files from under whoever is reading them."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        builtin.build(tmp, seed, scale)
        try:
            tmp.rename(target)
        except OSError:
            if not is_corpus_dir(target):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
