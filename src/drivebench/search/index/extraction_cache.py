"""A persistent cache of extraction + chunking results, keyed by what determines them.

Key: sha256 of the file bytes, the file name's extension (type detection reads it), the extraction
strategies, the chunking parameters and a fingerprint of the extractor source code (a code change
invalidates every entry). Values are the chunks (text, part) or the rejection (reason, message).
Re-ingesting an unchanged corpus then skips parsing (DXF parsing dominates ingestion time).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from drivebench.resources import package_dir
from drivebench.search.index.cache_db import connect

_EXTRACT_DIR = package_dir("drivebench.extract")


@cache
def extractor_fingerprint() -> str:
    h = hashlib.sha256()
    for f in sorted(_EXTRACT_DIR.rglob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


class ExtractionCache:
    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            self._conn = connect(path, "CREATE TABLE IF NOT EXISTS extraction (k TEXT PRIMARY KEY, v TEXT NOT NULL)")

    @staticmethod
    def key(blob: str, name: str, settings: Mapping[str, object]) -> str:
        ext = Path(name).suffix.lower()
        spec = json.dumps(settings, sort_keys=True, default=str)
        return hashlib.sha256(f"{blob}|{ext}|{spec}|{extractor_fingerprint()}".encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored JSON object (what ``put`` stored), None when absent."""
        if self._conn is None:
            return None
        with self._lock:
            row = self._conn.execute("SELECT v FROM extraction WHERE k = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Mapping[str, object]) -> None:
        if self._conn is None:
            return
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO extraction (k, v) VALUES (?, ?)", (key, json.dumps(value, ensure_ascii=False))
            )
