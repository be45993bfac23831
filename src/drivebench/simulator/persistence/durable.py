"""A simulator whose state survives restarts and crashes (opened by ``opening.open_durable(data_dir, corpus, config)``).

What is where under ``data_dir``:

* ``drive.sqlite3`` (+ WAL): all metadata and the change feed (``store.DriveStore``); a drive write
  is committed there before it returns (``synchronous=FULL``).
* ``blobs/``: the file bytes, content-addressed (``blobs.DiskBlobs``), written and fsynced before
  the metadata that references them.
* ``index/``: the FAISS index and chunk metadata (``index_files.IndexFiles``), tagged with the change
  sequence number (``meta_seq``) and state ``generation`` they match. Saved by a background thread
  a moment after the index changes, before any destructive change (purge, version deletion: so a
  replay never has to re-create content that no longer exists) and at shutdown.
* ``LOCK``: an exclusive ``flock`` so two servers never share a data directory.

Start-up: load the metadata (or, on an empty directory, load the corpus and store it), remove
unreferenced blobs (left by a crash between a blob write and its commit), load the index snapshot
if it matches, else rebuild it from the blobs; then replay the change feed from the snapshot's tag
(``Simulator.sync_index``), which re-extracts and re-embeds only the versions added since. So after
a SIGKILL at any moment, every acknowledged write is present and searchable and nothing
half-written is visible: a write is either committed whole (one SQLite transaction) or absent.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivebench.drive.state import Drive
from drivebench.simulator.persistence.blobs import DiskBlobs
from drivebench.simulator.persistence.index_files import IndexFiles, IndexSnapshot, config_fingerprint
from drivebench.simulator.persistence.store import DriveStore

if TYPE_CHECKING:
    from drivebench.simulator.persistence.host import SimulatorState

log = logging.getLogger("drivebench.persistence")

# seconds between index snapshots while the index keeps changing (tests stretch it to force a replay)
SAVE_INTERVAL = float(os.environ.get("DRIVEBENCH_INDEX_SAVE_INTERVAL", "2.0"))


ROWS_RETRY_S = 1.0  # how often the saver thread retries Milvus rows left behind by an outage


class DataDirLocked(RuntimeError):
    pass


def lock_data_dir(data_dir: Path) -> int:
    fd = os.open(str(data_dir / "LOCK"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DataDirLocked(f"{data_dir} is in use by another drivebench process") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def blobs_to_disk(drive: Drive, blobs: DiskBlobs) -> None:
    """Move a freshly loaded drive's in-memory blobs to the disk store."""
    for data in drive.blobs.values():
        blobs.put(data)
    drive.blobs.clear()
    drive.blob_store = blobs


class Durability:
    """The persistence side of one simulator: metadata store, blob store, index files, saver thread."""

    def __init__(
        self, sim: SimulatorState, data_dir: Path, store: DriveStore, blobs: DiskBlobs, files: IndexFiles, lock_fd: int
    ) -> None:
        self.sim = sim
        self.data_dir = data_dir
        self.store = store
        self.blobs = blobs
        self.files = files
        self.lock = threading.RLock()  # serialises snapshots and whole-state replacement
        self._lock_fd = lock_fd
        self.saved_version = -1
        self.saved_seq = -1
        self.saves = 0
        self.replayed_changes = 0
        self.rebuilt = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.interval = SAVE_INTERVAL
        self.closed = False

    # ------------------------------------------------------------------ index snapshots
    def config_fingerprint(self) -> str:
        sim = self.sim
        extract = sim.config.extract.as_dict()
        return config_fingerprint(sim.embedder.name, sim.embedder.dim, extract, asdict(sim.config.chunking))

    def checkpoint(self) -> int:
        """Bring the index up to the metadata and write it to disk; returns the tag written."""
        sim = self.sim
        with self.lock:
            sim.sync_index()
            with sim._index_lock:  # no sync in progress: store and cursor agree
                version, cursor = sim.index_version, sim._index_cursor
                if version == self.saved_version and cursor == self.saved_seq:
                    return cursor
                snap = IndexSnapshot.capture(
                    sim.store,
                    generation=self.store.generation or "",
                    meta_seq=cursor,
                    embedder=sim.embedder.name,
                    dim=sim.embedder.dim,
                    config=self.config_fingerprint(),
                    rejections=list(sim.ingest_report.rejected),
                )
            self.files.save(snap)
            self.saved_version, self.saved_seq = version, cursor
            self.saves += 1
            return cursor

    def rows_caught_up(self) -> None:
        """The Milvus rows were behind the drive and are current again: a commit (a marker row) makes the data
        directory's replicas reload and read the rows again (they follow ``PRAGMA data_version``)."""
        self.store.put_marker("shared_rows_caught_up", time.time())

    def _run(self) -> None:
        last_try = 0.0
        while not self._stop.wait(0.25):
            if self.sim.shared_rows_behind is not None and time.monotonic() - last_try >= ROWS_RETRY_S:
                last_try = time.monotonic()  # Milvus was down at a write: write its rows once it answers
                self.sim.write_shared_rows()
            if self.sim.index_version == self.saved_version:
                continue
            self._stop.wait(self.interval)  # let a burst of writes settle
            try:
                self.checkpoint()
            except Exception:  # keep serving; the next start replays from the older snapshot
                log.exception("index snapshot failed")

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="drivebench-index-saver", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the saver, write a final snapshot, close the store and release the directory (once)."""
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None
        try:
            self.checkpoint()
        finally:
            self.store.close()
            if self._lock_fd >= 0:
                os.close(self._lock_fd)
                self._lock_fd = -1

    def stats(self) -> dict[str, Any]:
        manifest = self.files.manifest() or {}
        return {
            "data_dir": str(self.data_dir),
            "generation": self.store.generation,
            "meta_seq": self.store.meta_seq(),
            "index_file_seq": manifest.get("meta_seq"),
            "index_saves": self.saves,
            "replayed_changes_at_start": self.replayed_changes,
            "rebuilt_index_at_start": self.rebuilt,
            "blob_bytes": self.blobs.size_bytes(),
        }


def install_store(sim: SimulatorState, store: Any, cursor: int) -> None:
    """Swap in a loaded chunk store (caller holds ``sim._index_lock``)."""
    from drivebench.search.index import vector_store

    # a Milvus backend adopts the data dir's collection and reconciles it with the loaded store
    vector_store.attach(store, sim.config.vector_store, sim.config.vector_store_dir, reconcile=True)
    sim.store = store
    sim.retriever = sim.make_retriever(sim.config.pipeline, sim.config.rerank)
    sim._index_cursor = cursor
    sim._masks_for = None
    sim.fingerprint.invalidate()
    sim.index_version += 1
