"""The hand-written seed corpus ``seed``: a small, coherent enterprise drive for the walking skeleton,
the end-to-end tests and demos. Build it with ``build_seed(out_dir)`` (see ``build.py``)."""

from __future__ import annotations

from drivebench.corpora.seed.build import build_seed, compute_access

__all__ = ["build_seed", "compute_access"]
