"""The caches' SQLite settings (search/index/cache_db.py): WAL without a sync per entry, a bounded page
cache, and entries that survive reopening."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from drivebench.search.index.cache_db import CACHE_KIB, connect
from drivebench.search.index.embedders import HashEmbedder
from drivebench.search.index.embedding_cache import EmbeddingCache
from drivebench.search.index.extraction_cache import ExtractionCache


def test_settings_are_applied(tmp_path: Path) -> None:
    conn = connect(tmp_path / "sub" / "c.sqlite3", "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("t",), ("sqlite_autoindex_t_1",)]


def test_both_caches_keep_their_entries_across_reopening(tmp_path: Path) -> None:
    texts = ["采购订单 P-1001", "travel policy"]
    first = EmbeddingCache(tmp_path / "emb.sqlite3").encode(HashEmbedder(), texts)
    again = EmbeddingCache(tmp_path / "emb.sqlite3")
    assert np.array_equal(again.encode(HashEmbedder(), texts), first) and again.encoded == 0
    ExtractionCache(tmp_path / "ext.sqlite3").put("k", {"chunks": [["text", "body"]]})
    assert ExtractionCache(tmp_path / "ext.sqlite3").get("k") == {"chunks": [["text", "body"]]}
