"""Whole-simulator operations behind the control plane (``/_sim``) and the pytest fixture methods:
reset, seed, clock, retention, purge, stats. They work the same in memory and with a data directory.

Destructive changes (purge, version deletion by retention) first checkpoint the index (sync it and,
when durable, write it to disk), so a crash right after them never has to re-create, from a
replay, content that no longer exists: a restart then gives exactly the answers of before.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivebench.drive.operations import Retention
from drivebench.drive.state import Drive
from drivebench.search.index import vector_store
from drivebench.simulator.persistence.durable import blobs_to_disk

if TYPE_CHECKING:
    from drivebench.simulator.persistence.host import SimulatorState

# attributes carried over from a freshly loaded simulator on reset/seed (and a replica's reload)
TRANSPLANT = (
    "policies",  # the drive with its permission engines
    "store",
    "retriever",
    "tokens",
    "ingest_report",
    "_masks_for",
    "fingerprint",
    "_index_cursor",
)


def checkpoint(sim: SimulatorState) -> None:
    """Index up to date with the metadata and, when durable, on disk."""
    if sim.durable is not None:
        sim.durable.checkpoint()
    else:
        sim.sync_index()


def load_corpus(sim: SimulatorState, corpus: str | Path | None = None) -> dict[str, Any]:
    """Replace the whole state with a corpus as loaded (``None``: the corpus loaded now, i.e. reset).
    Tokens are derived from the corpus name: seeding another corpus changes them."""
    from drivebench.corpora.builtin import resolve_corpus

    started = time.perf_counter()
    durable = sim.durable
    if corpus is None:
        spec: str = str(durable.store.kv("corpus")) if durable is not None else str(sim.corpus_dir)
    else:
        spec = str(corpus)
    corpus_dir = resolve_corpus(spec) if corpus is not None or durable is not None else sim.corpus_dir
    if corpus_dir is None:
        raise RuntimeError("this simulator was not loaded from a corpus; seed one by name or path")
    drive = Drive.from_corpus(Path(corpus_dir))
    lock = durable.lock if durable is not None else _NoLock()
    with lock:
        if durable is not None:
            blobs_to_disk(drive, durable.blobs)
            durable.store.write_all(drive, spec)
            durable.files.clear()
            drive = durable.store.load(durable.blobs)
        fresh = sim.fresh(drive)
        with sim.policies.lock, sim._index_lock:
            vector_store.release(sim.store)  # an in-memory Milvus collection of the old store is dropped
            for attr in TRANSPLANT:
                setattr(sim, attr, getattr(fresh, attr))
            sim.corpus_dir = Path(corpus_dir)
            sim.index_version += 1
        if durable is not None:
            durable.blobs.gc(drive.referenced_blobs())
            durable.saved_version = -1
            durable.checkpoint()
    out = stats(sim)
    out["loaded_in_s"] = round(time.perf_counter() - started, 3)
    return out


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def enforce_retention(sim: SimulatorState, actor: str | None = "retention") -> tuple[int, int]:
    """Apply the retention settings now; returns (versions deleted, documents purged)."""
    versions, purge = sim.drive.retention_due()
    if not versions and not purge:
        return 0, 0
    checkpoint(sim)
    result = sim.drive.apply_retention(actor=actor)
    sim.sync_index()
    return result


def set_retention(sim: SimulatorState, retention: Retention, actor: str | None = None) -> dict[str, Any]:
    sim.drive.set_retention(retention, actor=actor)
    deleted, purged = enforce_retention(sim)
    return {"retention": _retention_dict(sim.drive.retention), "deleted_versions": deleted, "purged_documents": purged}


def purge(sim: SimulatorState, doc_id: str, actor: str | None = None) -> None:
    sim.drive.doc(doc_id)  # 404 before the checkpoint
    checkpoint(sim)
    sim.drive.purge(doc_id, actor=actor)
    sim.sync_index()


def set_clock(sim: SimulatorState, now: datetime, actor: str | None = None) -> dict[str, Any]:
    sim.drive.set_clock(now, actor=actor)
    deleted, purged = enforce_retention(sim)
    return {"now": sim.drive.clock.now(), "deleted_versions": deleted, "purged_documents": purged}


def advance_clock(sim: SimulatorState, delta: timedelta, actor: str | None = None) -> dict[str, Any]:
    sim.drive.advance_clock(delta, actor=actor)
    deleted, purged = enforce_retention(sim)
    return {"now": sim.drive.clock.now(), "deleted_versions": deleted, "purged_documents": purged}


def _retention_dict(r: Retention) -> dict[str, Any]:
    return {"versions_kept": r.versions_kept, "days": r.days, "trash_days": r.trash_days}


def stats(sim: SimulatorState) -> dict[str, Any]:
    drive = sim.drive
    with drive.lock:
        docs = list(drive.documents.values())
        out: dict[str, Any] = {
            "corpus": drive.name,
            "clock": drive.clock.now(),
            "documents": len(docs),
            "trashed": sum(1 for d in docs if d.trashed_at is not None),
            "versions": sum(len(d.versions) for d in docs),
            "folders": len(drive.folders),
            "users": len(drive.users),
            "grants": len(drive.grants),
            "removed_grants": len(drive.removed_grants),
            "changes": len(drive.changes),
            "policy_version": drive.policy_version,
            "content_version": drive.content_version,
            "retention": _retention_dict(drive.retention),
        }
    out.update(
        {
            "index_version": sim.index_version,
            "index_cursor": sim._index_cursor,
            "chunks": sim.store.n_alive,
            "chunk_rows": len(sim.store),
            "rejected_versions": len(sim.ingest_report.rejected),
            "snapshot": sim.snapshot(),
            "pipeline": sim.config.pipeline,
            "rerank": sim.reranker,
            "embedder": sim.embedder.name,
            "fusion": sim.fusion_record(),  # the hybrid's fusion constants in force (None otherwise)
            "index_backend": vector_store.describe(sim.store, sim.config.vector_store),  # where dense search runs
            "index_rows_behind": sim.shared_rows_behind is not None,  # Milvus missed a write: caught up later
            "durable": sim.durable.stats() if sim.durable is not None else None,
        }
    )
    return out
