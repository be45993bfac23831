"""A persistent cache of passage embeddings keyed by (embedder, sha256 of the text), in SQLite.

Re-ingesting a corpus (a restart, a test session, a rebuilt index) re-embeds only texts it has not
seen. The key includes the embedder name and dimension, so backends never mix.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np

from drivebench.simulator.index.embedders import Embedder


def default_cache_dir() -> Path:
    """The one drivebench cache (``drivebench.paths``: DRIVEBENCH_CACHE, a checkout's .cache/, the platform's)."""
    from drivebench.paths import cache_dir

    return cache_dir()


class EmbeddingCache:
    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    @staticmethod
    def _key(embedder: Embedder, text: str) -> str:
        return f"{embedder.name}/{embedder.dim}/" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    def encode(self, embedder: Embedder, texts: list[str]) -> np.ndarray:
        """Passage embeddings for ``texts``, from the cache where present, the embedder otherwise."""
        out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        if self._conn is None:
            return embedder.encode(texts, kind="passage") if texts else out
        keys = [self._key(embedder, t) for t in texts]
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = list(dict.fromkeys(keys[i : i + 500]))
                marks = ",".join("?" * len(batch))
                found.update(self._conn.execute(f"SELECT k, v FROM emb WHERE k IN ({marks})", batch).fetchall())
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            unique = list(dict.fromkeys(texts[i] for i in missing))
            vecs = embedder.encode(unique, kind="passage")
            by_text = {t: vecs[j] for j, t in enumerate(unique)}
            rows = [(self._key(embedder, t), by_text[t].astype(np.float32).tobytes()) for t in unique]
            with self._lock:
                self._conn.executemany("INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)", rows)
            for i in missing:
                out[i] = by_text[texts[i]]
        for i, k in enumerate(keys):
            if k in found:
                out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out
