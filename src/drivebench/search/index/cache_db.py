"""The SQLite file behind the extraction and embedding caches: one way to open it.

* WAL journal, ``synchronous=NORMAL``: a commit is not fsynced (WAL stays consistent; a power cut may lose the
  last entries, which a cache re-computes). With the default ``FULL`` a bulk load of 100,000 documents wrote
  about 5 GB and waited on a sync per entry;
* ``cache_size`` 512 KiB instead of SQLite's 2 MiB per connection: lookups walk a B-tree by key, the interior
  pages fit, and the page cache is resident memory for as long as the simulator lives;
* one connection shared by threads (callers hold their own lock); autocommit (``isolation_level=None``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

CACHE_KIB = 512


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the cache at ``path`` with ``schema`` (a CREATE TABLE IF
    NOT EXISTS statement)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    conn.execute(schema)
    return conn
