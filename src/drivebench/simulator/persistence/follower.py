"""A read replica of a data directory another process writes (``serve --workers N --data-dir D
--index milvus:URI`` beside the writer ``serve --data-dir D --index milvus:URI``).

The replica never takes the directory's lock and never writes: not the SQLite store, not the index files,
not the Milvus collection. Before every request it asks SQLite whether anything was committed since it last
looked (``PRAGMA data_version``, which changes with every commit by another connection); if so it reloads the
whole drive in one read transaction, loads the writer's latest index snapshot, replays the change feed past it
locally (new versions re-embedded in this process, the Milvus rows only read), reads the collection's rows
after a Strong barrier, and swaps the new state in. A grant change writes no rows, so a revocation takes
effect with the reloaded drive. When any of this fails the request is refused (503) and the next one tries
again: a replica never answers from a state older than what the writer had committed when the request came.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from drivebench.drive.state import Drive
from drivebench.search.index import vector_store
from drivebench.simulator.backend import Simulator
from drivebench.simulator.config import SimConfig
from drivebench.simulator.persistence.blobs import DiskBlobs
from drivebench.simulator.persistence.index_files import IndexFiles, config_fingerprint
from drivebench.simulator.persistence.lifecycle import TRANSPLANT
from drivebench.simulator.persistence.store import DriveStore, StoreError

if TYPE_CHECKING:
    from drivebench.search.index.embedders import Embedder

_TRANSPLANT = (
    "policies",
    "store",
    "retriever",
    "tokens",
    "ingest_report",
    "_masks_for",
    "fingerprint",
    "_index_cursor",
)


DRAIN_TIMEOUT_S = 30.0  # how long a catch-up waits for the requests running on the older state


class FollowerBehind(RuntimeError):
    """The replica could not catch up with the writer: the request must not be answered."""


class Follower:
    """Keeps one simulator equal to what the data directory's writer has committed."""

    def __init__(self, data_dir: Path, config: SimConfig, embedder: Embedder | None = None) -> None:
        self.data_dir = Path(data_dir)
        if not (self.data_dir / "drive.sqlite3").exists():
            raise StoreError(f"{self.data_dir} holds no drive: start its writer (serve --data-dir) first")
        self.store = DriveStore(self.data_dir / "drive.sqlite3")
        self.blobs = DiskBlobs(self.data_dir / "blobs")
        self.files = IndexFiles(self.data_dir / "index")
        self.config = replace(config, vector_store_dir=self.data_dir)
        self.embedder = embedder
        self.lock = threading.Condition()  # one catch-up at a time; it waits for the requests in flight
        self.active = 0  # requests running on the state in use (``enter``/``leave``)
        self.seen: int | None = None  # PRAGMA data_version when the state in use was loaded
        self.reloads = 0
        self.sim: Simulator | None = None

    def _data_version(self) -> int:
        with self.store._lock:
            return int(self.store.conn.execute("PRAGMA data_version").fetchone()[0])

    def _load_drive(self) -> tuple[Drive, str | None]:
        """The drive as committed at one instant (one read transaction: never half of a write)."""
        with self.store._lock:
            self.store.conn.execute("BEGIN")
            try:
                drive = self.store.load(self.blobs)
                generation = self.store.generation
            finally:
                self.store.conn.execute("COMMIT")
        drive.journal = None  # a replica never writes the writer's store
        return drive, generation

    def _fresh(self, template: Simulator | None) -> Simulator:
        from drivebench.corpora.builtin import resolve_corpus

        drive, generation = self._load_drive()
        embedder = template.embedder if template is not None else self.embedder
        faults = template.faults if template is not None else None
        sim = Simulator(drive, self.config, embedder=embedder, faults=faults)
        if template is not None:
            sim.use_token_secret(template.token_secret)
            sim.cache = template.cache
        sim.corpus_dir = resolve_corpus(str(self.store.kv("corpus")))
        spec = self.config.vector_store
        loaded = self.files.load(
            generation=generation,
            max_seq=len(drive.changes),
            embedder=sim.embedder.name,
            dim=sim.embedder.dim,
            config=config_fingerprint(
                sim.embedder.name, sim.embedder.dim, sim.config.extract.as_dict(), asdict(sim.config.chunking)
            ),
        )
        with sim._index_lock:
            if loaded is not None:
                sim.store = loaded.store
                sim._index_cursor = loaded.meta_seq
                sim.ingest_report.rejected = list(loaded.rejections)
            vector_store.attach(sim.store, spec, self.data_dir, follow=True)
            # exactly the writer's retriever (``durable.install_store``): pipeline, embedder and reranker
            sim.retriever = sim.make_retriever(sim.config.pipeline, sim.config.rerank)
            sim._masks_for = None
            sim.fingerprint.invalidate()
            sim.index_version += 1
        if loaded is None:
            sim.ingest_all()
        sim.sync_index()  # replay the feed past the snapshot; the follower backend writes nothing
        backend = sim.store.vector_backend
        if backend is not None:
            backend.adopt()
        return sim

    def open(self) -> Simulator:
        """The first state (at start)."""
        with self.lock:
            seen = self._data_version()
            self.sim = self._fresh(None)
            self.seen = seen
            return self.sim

    def enter(self) -> None:
        """Before a request: catch up, then count the request in (a later catch-up swaps the state only once
        no request is running on it). Raises ``FollowerBehind`` (the caller answers 503 and runs nothing)."""
        with self.lock:
            self.catch_up()
            self.active += 1

    def leave(self) -> None:
        with self.lock:
            self.active -= 1
            self.lock.notify_all()

    def catch_up(self) -> bool:
        """Reload when the writer committed anything since the state in use was loaded; True when it did.
        Raises ``FollowerBehind`` when it cannot (the caller answers 503, never from the older state)."""
        sim = self.sim
        assert sim is not None
        with self.lock:
            try:
                seen = self._data_version()  # read before loading: a commit during the load reloads again
                if seen == self.seen:
                    return False
                self.seen = None  # until a reload succeeds, every request tries again
                fresh = self._fresh(sim)
                # no request mixes the old state with the new; bounded, so that requests queued for threads
                # behind this one cannot wait on each other for ever (then 503, and the next request retries)
                if not self.lock.wait_for(lambda: self.active == 0, timeout=DRAIN_TIMEOUT_S):
                    raise TimeoutError(f"requests still running on the older state after {DRAIN_TIMEOUT_S:.0f} s")
                with sim.policies.lock, sim._index_lock:
                    old = sim.store
                    for attr in TRANSPLANT:  # what a reload replaces, as a reset does
                        setattr(sim, attr, getattr(fresh, attr))
                    sim.corpus_dir = fresh.corpus_dir
                    sim.index_version += 1
                vector_store.release(old)
                self.seen = seen
                self.reloads += 1
                return True
            except Exception as exc:
                raise FollowerBehind(f"this replica could not catch up with the data directory: {exc}") from exc


def open_follower(data_dir: Path, config: SimConfig, embedder: Embedder | None = None) -> tuple[Simulator, Follower]:
    follower = Follower(data_dir, config, embedder)
    return follower.open(), follower
