"""Packaged passage vectors of the built-in corpora (``*.npz``, format in ``search/index/vector_packs.py``).

``make vector-packs`` (``scripts/build_vector_packs.py``) writes one pack per corpus in ``PACKED_CORPORA``
for the default embedder, at the corpus's default seed and scale: the passages ``drivebench demo`` and
``serve`` ingest first. ``tests/corpora/test_vector_packs_current.py`` fails when a pack no longer covers its
corpus (a generator, extractor or chunking change) and names the command that rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

from drivebench.resources import package_dir

PACKED_CORPORA = ("acme-zh@2", "acme-en@2", "acme-zh@3", "acme-en@3")
PACK_DIR = package_dir("drivebench.corpora.vectors")


def pack_path(corpus: str, embedder_name: str) -> Path:
    return PACK_DIR / f"{corpus.replace('@', '-v')}.{embedder_name}.npz"
