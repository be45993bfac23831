"""Built-in corpora, built on demand into a cache and reused while their source is unchanged.

``resolve_corpus("acme-zh")`` returns a directory in the on-disk format (see ``format.py``); a path
to such a directory is returned as it is. The cache key covers the corpus name, seed, scale and a
fingerprint of the code that writes it, so a code change rebuilds. Builds write into a temporary
directory and rename it into place, so a crash never leaves a half-built corpus behind.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from drivebench.corpora.format import MANIFEST_NAME

DEFAULT_CORPUS = "acme-zh"
_HERE = Path(__file__).resolve().parent


def _build_seed(out: Path, seed: int | None, scale: str | int | None) -> None:
    from drivebench.corpora.seed.build import build_seed

    build_seed(out)


def _acme(language: str) -> Callable[[Path, int | None, str | int | None], None]:
    def build(out: Path, seed: int | None, scale: str | int | None) -> None:
        from drivebench.corpora.generator.build import build_acme

        kwargs: dict[str, object] = {"language": language}
        if seed is not None:
            kwargs["seed"] = seed
        if scale is not None:
            kwargs["scale"] = scale
        build_acme(out, **kwargs)  # type: ignore[arg-type]

    return build


BUILTINS: dict[str, tuple[Callable[[Path, int | None, str | int | None], None], tuple[str, ...]]] = {
    "seed": (_build_seed, ("seed", "render", "format.py")),
    "acme-zh": (_acme("zh"), ("generator", "render", "format.py")),
    "acme-en": (_acme("en"), ("generator", "render", "format.py")),
}


def corpus_cache_root() -> Path:
    from drivebench.paths import cache_dir  # issue #15: one cache for every entry point

    return cache_dir() / "corpora"


def _source_fingerprint(parts: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in parts:
        path = _HERE / part
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            h.update(str(f.relative_to(_HERE)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def is_corpus_dir(path: Path) -> bool:
    return (path / MANIFEST_NAME).is_file()


def build_corpus(name: str, out: Path, *, seed: int | None = None, scale: str | int | None = None) -> Path:
    """Build built-in corpus ``name`` into ``out`` (replaced if present)."""
    if name not in BUILTINS:
        raise KeyError(f"unknown corpus {name!r}; built-in corpora: {', '.join(BUILTINS)}")
    builder, _ = BUILTINS[name]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        builder(tmp, seed, scale)
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
    name = str(name_or_path)
    if name not in BUILTINS:
        raise KeyError(
            f"{name!r} is neither a corpus directory (with {MANIFEST_NAME}) nor a built-in: {', '.join(BUILTINS)}"
        )
    _, sources = BUILTINS[name]
    key = f"{name}-seed{seed if seed is not None else 'default'}-{scale or 'default'}-{_source_fingerprint(sources)}"
    target = corpus_cache_root() / key
    if not is_corpus_dir(target):
        build_corpus(name, target, seed=seed, scale=scale)
    return target
