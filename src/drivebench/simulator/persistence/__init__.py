"""Durable state for ``drivebench serve --data-dir DIR``: SQLite metadata (``store``), content-addressed
blobs (``blobs``), atomically written FAISS index files tagged with the metadata version they match
(``index_files``), start-up replay (``durable``, opened by ``opening``) and the whole-simulator operations of the control
plane (``lifecycle``). Without a data directory the simulator stays in memory."""

from drivebench.simulator.persistence.durable import DataDirLocked, Durability
from drivebench.simulator.persistence.opening import open_durable

__all__ = ["DataDirLocked", "Durability", "open_durable"]
