"""Where drivebench keeps its cache: one answer for every entry point (make, the CLI, ``python -m drivebench``,
the Python API, the pytest plugin).

1. ``DRIVEBENCH_CACHE`` when set;
2. else ``.cache/`` at the root of the source checkout this package runs from (an editable install: what
   ``make`` creates), whatever the current directory;
3. else the platform's user cache directory (``platformdirs``: ``~/.cache/drivebench`` on Linux,
   ``~/Library/Caches/drivebench`` on macOS, ``%LOCALAPPDATA%\\drivebench\\Cache`` on Windows).

The cache holds built corpora (``corpora/``), passage embeddings (``embeddings.sqlite3``) and extracted text
(``extractions.sqlite3``); deleting it costs only time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "DRIVEBENCH_CACHE"


@dataclass(frozen=True)
class CacheLocation:
    path: Path
    source: str  # "DRIVEBENCH_CACHE", "checkout" or "platform"


def checkout_root() -> Path | None:
    """The source checkout this package was imported from, or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]  # <root>/src/drivebench/paths.py
    looks_like_checkout = (root / "pyproject.toml").is_file() and (root / "src" / "drivebench" / "simulator").is_dir()
    return root if looks_like_checkout else None


def cache_location() -> CacheLocation:
    env = os.environ.get(CACHE_ENV)
    if env:
        return CacheLocation(Path(env).expanduser(), CACHE_ENV)
    root = checkout_root()
    if root is not None:
        return CacheLocation(root / ".cache", "checkout")
    import platformdirs

    return CacheLocation(platformdirs.user_cache_path("drivebench", appauthor=False), "platform")


def cache_dir() -> Path:
    return cache_location().path
