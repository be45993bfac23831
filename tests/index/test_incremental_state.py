"""Writes cost what they change: after every kind of write, the incrementally kept per-chunk
arrays of the visibility mask and the snapshot fingerprint equal what a full rebuild computes, the write
did not trigger a full rebuild, and what recall returns follows the write at once."""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import Simulator
from drivebench.simulator.snapshot import SnapshotFingerprint
from drivebench.simulator.visibility import ChunkArrays
from tests.support.decisions import previewable_docs


def _assert_equal_to_a_rebuild(sim: Simulator) -> None:
    engine = sim.engine
    with sim.store.lock:
        doc, start, end, trash = sim._chunk_arrays(engine)
        kept = sim._closed_trash
        fresh = ChunkArrays()
        fresh.sync(sim.drive, sim.store, sim.faults, sim._visibility_key(), engine)
    alive = sim.store.alive
    for got, want in ((doc, fresh.doc), (start, fresh.start), (end, fresh.end), (trash, fresh.trash)):
        np.testing.assert_array_equal(got[alive], want[alive])
    as_set = lambda spans: sorted(zip(*(a.tolist() for a in spans), strict=True))  # noqa: E731
    assert as_set(kept) == as_set(fresh.closed_trash)
    incremental = sim.snapshot()
    from_scratch = SnapshotFingerprint()  # no caches: every document re-hashed
    assert from_scratch.value(sim.policies, sim.store, sim.config.pipeline, sim.embedder.name) == incremental


def test_every_write_keeps_arrays_and_snapshot_equal_to_a_rebuild(module_sim: Simulator) -> None:
    drive = module_sim.drive
    p = module_sim.engine.user_principal("u001")
    module_sim.recall(p, "预算", 10)
    _assert_equal_to_a_rebuild(module_sim)
    arrays = module_sim._masks_for
    assert isinstance(arrays, ChunkArrays)
    rebuilds = arrays.full_rebuilds
    docs = sorted(drive.documents)
    folder = sorted(drive.folders)[1]
    snapshots = {module_sim.snapshot()}
    writes = [
        lambda: drive.add_version(docs[0], "# v2\n\nzqincremental 新内容\n".encode(), "u001"),
        lambda: drive.trash(docs[1]),
        lambda: drive.clock.advance(timedelta(hours=1)),
        lambda: drive.untrash(docs[1]),
        lambda: drive.move_document(docs[2], folder, "moved.md"),
        lambda: drive.create_document(folder, "fresh.md", b"# fresh\n\nzqfresh\n", file_type="md"),
        lambda: drive.add_grant(GrantRec("g-inc", "user:u001", ["preview"], "allow", folder_id=folder)),
        lambda: drive.purge(docs[3]),
    ]
    for write in writes:
        write()
        module_sim.sync_index()
        module_sim.recall(p, "预算", 10)
        _assert_equal_to_a_rebuild(module_sim)
        snapshots.add(module_sim.snapshot())
    assert len(snapshots) == 1 + len(writes) - 1  # the start, then every write but the clock tick: a new fingerprint
    assert arrays is module_sim._masks_for and arrays.full_rebuilds == rebuilds  # updated in place, never rebuilt
    assert arrays.updates >= len(writes) - 1


def test_a_new_version_is_found_by_the_next_recall(module_sim: Simulator) -> None:
    doc_id = next(d for d in sorted(module_sim.drive.documents) if module_sim.drive.documents[d].file_type == "md")
    owner = next(
        u
        for u in sorted(module_sim.drive.users)
        if doc_id in previewable_docs(module_sim.engine, u, module_sim.drive.clock.now())
    )
    p = module_sim.engine.user_principal(owner)
    old = None
    for i in range(3):
        version = module_sim.drive.add_version(doc_id, f"# v\n\nzqnext{i} word\n".encode(), owner)
        module_sim.sync_index()
        hits = module_sim.recall(p, f"zqnext{i}", 5).hits
        assert [(h.doc_id, h.version_id) for h in hits][:1] == [(doc_id, version.version_id)]
        if old is not None:  # the previous version is no longer current: never returned
            assert old not in {h.version_id for h in module_sim.recall(p, f"zqnext{i - 1}", 50).hits}
        old = version.version_id
