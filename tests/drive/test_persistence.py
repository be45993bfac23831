"""Durable state in-process: SQLite metadata, content-addressed blobs, tagged index snapshots, replay.

A "crash" here drops the process's handles without the final checkpoint (what SIGKILL does to a
server); the real-subprocess SIGKILL tests are in tests/e2e/test_crash_uploads.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from drivebench.api import load_simulator
from drivebench.drive.model import GrantRec
from drivebench.drive.operations import Retention
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.persistence import DataDirLocked, open_durable
from tests.support.milvus import backend_params, index_spec, kind
from tests.support.sims import HASH, client_for, upload

QUERIES = [
    ("u001", "项目X的技术方案审批人", None),
    ("u001", "项目X的技术方案审批人", "2026-08-01T00:00:00+00:00"),
    ("u009", "persist-marker backup", None),
    ("u010", "platform architecture", None),
    ("u004", "budget 预算", "2026-10-15T00:00:00+00:00"),
    ("u003", "renamed design", None),
]


def answers(sim: Simulator) -> list[Any]:
    out: list[Any] = []
    for user, query, as_of in QUERIES:
        when = datetime.fromisoformat(as_of) if as_of else None
        r = sim.recall(sim.engine.user_principal(user), query, 10, as_of=when)
        out.append([(h.doc_id, h.version_id, h.score, h.chunk_id, h.path, h.snippet) for h in r.hits])
    return [*out, sim.snapshot()]


def vectors_agree(sim: Simulator) -> None:
    """With Milvus, after a search the collection holds exactly the live chunks (and no more)."""
    backend = sim.store.vector_backend
    if backend is not None:
        assert backend.row_ids() == set(np.flatnonzero(sim.store.alive).tolist())
        assert backend.counters["id_list_searches"] == 0


def drive_state(sim: Simulator) -> dict[str, Any]:
    d = sim.drive
    return {
        "docs": {k: repr(v) for k, v in sorted(d.documents.items())},
        "folders": {k: repr(v) for k, v in sorted(d.folders.items())},
        "grants": {k: repr(v) for k, v in sorted(d.grants.items())},
        "removed": [repr(g) for g in d.removed_grants],
        "changes": [repr(c) for c in d.changes],
        "users": {k: repr(v) for k, v in sorted(d.users.items())},
        "clock": d.clock.now(),
        "counters": (d.policy_version, d.content_version, d._folder_seq, d._doc_seq),
        "retention": d.retention,
        "children": sorted(d._children.items()),
    }


def crash(sim: Simulator) -> None:
    """Drop the handles without the final index snapshot (as after SIGKILL)."""
    dur = sim.durable
    dur._stop.set()
    dur.store.close()
    os.close(dur._lock_fd)
    dur._lock_fd = -1


def mutate(sim: Simulator) -> None:
    client = client_for(sim)
    d = sim.drive
    up = upload(client, sim, "u009", "/it", "backup.md", "# 备份\npersist-marker backup plan".encode()).json()
    d.add_version(up["doc_id"], "# 备份 v2\npersist-marker backup plan, revised".encode(), author="u009")
    d.clock.advance(timedelta(hours=1))
    d.move_document("d0014", name="renamed design.docx")
    d.move_folder(d.folder_by_path("/legal").folder_id, d.folder_by_path("/it").folder_id)
    d.trash("d0026")
    d.add_grant(GrantRec("gp", "user:u012", ["preview"], "allow", doc_id="d0001"))
    d.clock.advance(timedelta(hours=1))
    d.remove_grant("gp")
    d.restore_version("d0002", "d0002-v1")
    d.set_retention(Retention(versions_kept=3))
    sim.sync_index()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_fresh_data_dir_equals_the_in_memory_load(data_dir: Path) -> None:
    mem = load_simulator("seed", config=HASH)
    sim = open_durable(data_dir, "seed", HASH)
    try:
        assert sim.snapshot() == mem.snapshot()
        assert answers(sim) == answers(mem)
        assert sim.durable.stats()["rebuilt_index_at_start"] is True
        files = sorted(p.name for p in data_dir.iterdir())
        assert files[:3] == ["LOCK", "blobs", "drive.sqlite3"] and "index" in files
        assert (data_dir / "drive.sqlite3-wal").exists()  # WAL mode
        with pytest.raises(DataDirLocked):
            open_durable(data_dir, "seed", HASH)
    finally:
        sim.close()


@pytest.mark.parametrize(("embedder", "index"), [("hash", "faiss"), ("minilm", "faiss"), ("hash", "milvus")])
def test_clean_restart_gives_the_same_state_and_answers(data_dir: Path, embedder: str, index: str) -> None:
    config = SimConfig(embedder=embedder, pipeline="hybrid", vector_store=index)
    sim = open_durable(data_dir, "seed", config)
    mutate(sim)
    state, before = drive_state(sim), answers(sim)
    sim.close()
    again = open_durable(data_dir, "seed", config)
    try:
        assert drive_state(again) == state
        assert answers(again) == before
        stats = again.durable.stats()
        assert stats["rebuilt_index_at_start"] is False and stats["replayed_changes_at_start"] == 0
        assert stats["index_file_seq"] == stats["meta_seq"] == len(again.drive.changes)
    finally:
        again.close()


@backend_params
def test_crash_replays_the_feed_from_the_index_tag(data_dir: Path, index: str) -> None:
    config = replace(HASH, vector_store=index_spec(index))
    sim = open_durable(data_dir, "seed", config, start_saver=False)
    tag = sim.durable.saved_seq
    mutate(sim)
    before, state = answers(sim), drive_state(sim)
    vectors_agree(sim)
    n_changes = len(sim.drive.changes)
    crash(sim)
    again = open_durable(data_dir, "seed", config, start_saver=False)
    try:
        stats = again.durable.stats()
        assert stats["replayed_changes_at_start"] == n_changes - tag > 0
        assert drive_state(again) == state
        assert answers(again) == before  # same chunk ids, scores and snapshot after the replay
        vectors_agree(again)  # rows past the snapshot's tag were deleted and re-written by the replay
    finally:
        again.close()


@backend_params
def test_destructive_changes_checkpoint_first_so_a_replay_is_exact(data_dir: Path, index: str) -> None:
    config = replace(HASH, vector_store=index_spec(index))
    sim = open_durable(data_dir, "seed", config, start_saver=False)
    client = client_for(sim)
    doc = upload(client, sim, "u009", "/it", "gone.md", b"# gone\npersist-marker gone").json()["doc_id"]
    admin = {"Authorization": f"Bearer {sim.tokens.admin_token}"}
    assert client.delete(f"/api/v1/files/{doc}", headers=admin).status_code == 200
    assert client.put("/api/v1/settings/retention", headers=admin, json={"versions_kept": 1}).status_code == 200
    # the index file was written right before each destructive change: after the purge's "created" (1)
    # and after the retention "settings" change (3), before the 4 version deletions it caused
    kinds = [c.kind for c in sim.drive.changes]
    assert kinds == ["created", "purged", "settings"] + ["version_deleted"] * 4
    assert sim.durable.saved_seq == 3
    before = answers(sim)
    crash(sim)
    again = open_durable(data_dir, "seed", config, start_saver=False)
    try:
        assert answers(again) == before
        assert doc not in again.drive.documents
        vectors_agree(again)
    finally:
        again.close()


def test_damaged_or_foreign_index_files_are_rebuilt(data_dir: Path) -> None:
    sim = open_durable(data_dir, "seed", HASH)
    mutate(sim)
    before = answers(sim)
    sim.close()
    current = data_dir / "index" / (data_dir / "index" / "CURRENT").read_text().strip()
    vectors = current / "vectors.faiss"
    raw = bytearray(vectors.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    vectors.write_bytes(bytes(raw))
    again = open_durable(data_dir, "seed", HASH)
    try:
        assert again.durable.stats()["rebuilt_index_at_start"] is True
        rebuilt = answers(again)
        # a rebuild indexes every kept version once, without the dead rows of superseded chunks, so BM25's
        # corpus statistics (and the order of near ties) may move; the same documents and versions come back
        assert [{(d, v) for d, v, *_ in q} for q in rebuilt[:-1]] == [{(d, v) for d, v, *_ in q} for q in before[:-1]]
        assert rebuilt[-1] == before[-1]
    finally:
        again.close()
    # an index snapshot "from the future" (tag ahead of the metadata) or of another generation is not trusted
    manifest_path = data_dir / "index" / (data_dir / "index" / "CURRENT").read_text().strip() / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["meta_seq"] += 5
    manifest_path.write_text(json.dumps(manifest))
    again = open_durable(data_dir, "seed", HASH)
    try:
        assert again.durable.stats()["rebuilt_index_at_start"] is True
    finally:
        again.close()


def test_unreferenced_blobs_and_temp_files_are_collected(data_dir: Path) -> None:
    sim = open_durable(data_dir, "seed", HASH)
    sim.close()
    stray = data_dir / "blobs" / "ab" / ("ab" + "0" * 62)
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"written, never committed")
    tmp = data_dir / "blobs" / "ab" / ".tmp-xyz"
    tmp.write_bytes(b"half")
    again = open_durable(data_dir, "seed", HASH)
    try:
        assert not stray.exists() and not tmp.exists()
        assert all(again.drive.blob(v.blob) for d in again.drive.documents.values() for v in d.versions)
    finally:
        again.close()


@backend_params
def test_durable_reset_and_seed_persist(data_dir: Path, index: str) -> None:
    config = replace(HASH, vector_store=index_spec(index))
    sim = open_durable(data_dir, "seed", config)
    initial, first = sim.snapshot(), answers(sim)
    mutate(sim)
    assert sim.snapshot() != initial
    out = sim.reset()
    assert out["snapshot"] == initial and out["durable"]["meta_seq"] == 0
    assert answers(sim) == first
    vectors_agree(sim)
    sim.close()
    again = open_durable(data_dir, "seed", config)
    try:
        assert again.snapshot() == initial and len(again.drive.changes) == 0
        assert answers(again) == first
        vectors_agree(again)
        if kind(index) == "milvus":  # one collection per data dir: the one from before the reset was dropped
            backend = again.store.vector_backend
            assert [
                c for c in backend.client.list_collections() if c.startswith(f"drivebench_{backend._dir_tag()}_")
            ] == [backend.collection]
        assert again.durable.stats()["rebuilt_index_at_start"] is False  # reset wrote a fresh snapshot
    finally:
        again.close()
