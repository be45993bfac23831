"""Packaged vectors of the built-in corpora (``*.npz``, format in ``search/index/vector_packs.py``).

``make vector-packs`` (``scripts/build_vector_packs.py``) writes two packs per corpus in ``PACKED_CORPORA``
for the default embedder, at the corpus's default seed and scale: its passages (what ``drivebench demo`` and
``serve`` ingest first) and its eval set's questions (kind ``query``: what ``demo`` and ``corpus audit`` ask).
``tests/corpora/test_vector_packs_current.py`` fails when a pack no longer covers its corpus or eval set (a
generator, extractor or chunking change) and names the command that rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

from drivebench.resources import package_dir

PACKED_CORPORA = ("acme-zh@2", "acme-en@2", "acme-zh@3", "acme-en@3")
PACK_DIR = package_dir("drivebench.corpora.vectors")


def pack_path(corpus: str, embedder_name: str, kind: str = "passage") -> Path:
    """The pack of ``corpus``'s passages, or of its eval set's questions (``kind="query"``)."""
    suffix = "" if kind == "passage" else f".{kind}"
    return PACK_DIR / f"{corpus.replace('@', '-v')}.{embedder_name}{suffix}.npz"
