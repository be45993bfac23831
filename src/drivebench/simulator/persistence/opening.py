"""Open the durable simulator of a data directory: ``open_durable(data_dir, corpus, config)`` (what ``drivebench
serve --data-dir`` runs). It builds a ``Simulator``, so it sits above the simulator, apart from the parts the
simulator is built from (``durable``, ``lifecycle``): none of those imports it back."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from drivebench.corpora.builtin import DEFAULT_CORPUS, resolve_corpus
from drivebench.drive.state import Drive
from drivebench.search.index.embedders import Embedder
from drivebench.simulator.backend import Simulator
from drivebench.simulator.config import SimConfig
from drivebench.simulator.persistence.blobs import DiskBlobs
from drivebench.simulator.persistence.durable import Durability, blobs_to_disk, install_store, lock_data_dir
from drivebench.simulator.persistence.index_files import IndexFiles
from drivebench.simulator.persistence.store import DriveStore

log = logging.getLogger("drivebench.persistence")


def open_durable(
    data_dir: Path,
    corpus: str | Path | None = None,
    config: SimConfig | None = None,
    *,
    embedder: Embedder | None = None,
    progress: Callable[[int], None] | None = None,
    start_saver: bool = True,
) -> Simulator:
    """Open (or create from ``corpus``) the durable simulator in ``data_dir``. When the directory already
    holds a drive, that drive is used and ``corpus`` only has to agree with it (a mismatch is logged)."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    lock_fd = lock_data_dir(data_dir)
    try:
        store = DriveStore(data_dir / "drive.sqlite3")
        blobs = DiskBlobs(data_dir / "blobs")
        files = IndexFiles(data_dir / "index")
        if store.is_empty():
            spec = str(corpus or DEFAULT_CORPUS)
            fresh = Drive.from_corpus(resolve_corpus(spec))
            blobs_to_disk(fresh, blobs)
            store.write_all(fresh, spec)
            files.clear()
        else:
            spec = str(store.kv("corpus"))
            if corpus is not None and str(corpus) != spec:
                log.warning(
                    "%s holds corpus %r; ignoring --corpus %r (reset or seed to change it)", data_dir, spec, corpus
                )
        drive = store.load(blobs)
        removed = blobs.gc(drive.referenced_blobs())
        if removed:
            log.info("removed %d unreferenced blob files", removed)
        if config is not None and config.vector_store != "faiss":  # milvus-lite lives in the data dir
            config = replace(config, vector_store_dir=data_dir)
        sim = Simulator(drive, config, embedder=embedder)
        sim.corpus_dir = resolve_corpus(spec)
        durable = Durability(sim, data_dir, store, blobs, files, lock_fd)
        sim.durable = durable
        loaded = files.load(
            generation=store.generation,
            max_seq=len(drive.changes),
            embedder=sim.embedder.name,
            dim=sim.embedder.dim,
            config=durable.config_fingerprint(),
        )
        if loaded is not None:
            with sim._index_lock:
                install_store(sim, loaded.store, loaded.meta_seq)
                sim.ingest_report.rejected = list(loaded.rejections)
            durable.saved_seq = loaded.meta_seq
            durable.replayed_changes = len(drive.changes) - loaded.meta_seq
        else:
            durable.rebuilt = True
            sim.ingest_all(progress)
        started = time.perf_counter()
        sim.sync_index()  # replay the feed from the snapshot's tag
        sim.write_shared_rows()  # a Milvus server's collection exists and is current before the first request
        if durable.replayed_changes:
            log.info("replayed %d changes in %.2f s", durable.replayed_changes, time.perf_counter() - started)
        if loaded is None or durable.replayed_changes:
            durable.checkpoint()
        else:
            durable.saved_version = sim.index_version
        if start_saver:
            durable.start()
        return sim
    except BaseException:
        os.close(lock_fd)
        raise
