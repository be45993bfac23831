"""A persistent cache of passage embeddings keyed by (embedder fingerprint, sha256 of the text), in SQLite.

Re-ingesting a corpus (a restart, a test session, a rebuilt index) re-embeds only texts it has not
seen. The key starts with the embedder's ``fingerprint`` (weights + prefixes + normalisation, see
``embedders``), so backends never mix and switching embedder re-embeds only for the new one: each
embedder's vectors stay cached side by side. A text the cache lacks is looked up next in the packaged
vector packs (``vector_packs``: verified against the embedder before first use), and only then encoded.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from drivebench.search.index.cache_db import connect
from drivebench.search.index.embedders import Embedder
from drivebench.search.index.vector_packs import VectorPacks, text_digest

SLICE_BATCHES = 8  # with progress: encode calls of 8 model batches (smooth bar, little padding lost)


def default_cache_dir() -> Path:
    """The one drivebench cache (``drivebench.paths``: DRIVEBENCH_CACHE, a checkout's .cache/, the platform's)."""
    from drivebench.paths import cache_dir

    return cache_dir()


def fingerprint_of(embedder: Embedder) -> str:
    """The embedder's cache identity (an embedder without one falls back to name and dimension)."""
    return str(getattr(embedder, "fingerprint", None) or f"{embedder.name}/{embedder.dim}")


class EmbeddingCache:
    def __init__(self, path: Path | None, packs: VectorPacks | None = None) -> None:
        self._lock = threading.Lock()
        self.packs = packs
        self.encoded = 0  # texts this process had to encode (neither cached nor packed)
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            self._conn = connect(path, "CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    @staticmethod
    def _key(fingerprint: str, text: str) -> str:
        return f"{fingerprint}/" + text_digest(text).hex()  # the vector packs' key, with the fingerprint

    def missing(self, embedder: Embedder, texts: list[str]) -> int:
        """How many distinct texts of ``texts`` would have to be encoded (not in the cache)."""
        unique = list(dict.fromkeys(texts))
        if self._conn is None:
            return len(unique)
        return len(unique) - len(self._lookup(fingerprint_of(embedder), unique))

    def _lookup(self, fingerprint: str, texts: list[str]) -> dict[str, bytes]:
        assert self._conn is not None
        keys = list(dict.fromkeys(self._key(fingerprint, t) for t in texts))
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                marks = ",".join("?" * len(batch))
                found.update(self._conn.execute(f"SELECT k, v FROM emb WHERE k IN ({marks})", batch).fetchall())
        return found

    def encode(
        self, embedder: Embedder, texts: list[str], on_encoded: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Passage embeddings for ``texts``, from the cache where present, the embedder otherwise.
        ``on_encoded(n)`` counts texts done: those found in the cache at once, the rest as they are encoded."""
        fingerprint = fingerprint_of(embedder)
        out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        found = self._lookup(fingerprint, texts) if self._conn is not None else {}
        unique = list(dict.fromkeys(t for t in texts if self._key(fingerprint, t) not in found))
        by_text: dict[str, np.ndarray] = {}
        if self.packs is not None and unique:
            by_text = self.packs.lookup(fingerprint, unique, lambda sample: embedder.encode(sample, kind="passage"))
            if by_text:
                self._store(fingerprint, list(by_text), list(by_text.values()))
                unique = [t for t in unique if t not in by_text]
        with self._lock:
            self.encoded += len(unique)
        if on_encoded is not None and len(texts) - len(unique):
            on_encoded(len(texts) - len(unique))  # duplicates and cache hits
        batch = int(getattr(getattr(embedder, "config", None), "batch_size", 64))
        step = SLICE_BATCHES * batch if on_encoded is not None else max(1, len(unique))
        for start in range(0, len(unique), step):
            part = unique[start : start + step]
            vecs = embedder.encode(part, kind="passage")
            by_text.update(zip(part, vecs, strict=True))
            self._store(fingerprint, part, list(vecs))
            if on_encoded is not None:
                on_encoded(len(part))
        for i, t in enumerate(texts):
            vec = by_text.get(t)
            out[i] = vec if vec is not None else np.frombuffer(found[self._key(fingerprint, t)], dtype=np.float32)
        return out

    def _store(self, fingerprint: str, texts: list[str], vectors: list[np.ndarray]) -> None:
        if self._conn is None:
            return
        rows = [
            (self._key(fingerprint, t), np.asarray(v, np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)", rows)
