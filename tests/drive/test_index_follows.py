"""The index follows the drive's change feed: a change re-extracts and re-embeds only what changed,
and the snapshot fingerprint changes with every content or policy change."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.model import GrantRec
from drivebench.drive.operations import Retention
from drivebench.drive.state import Drive
from drivebench.search import ingest as ingest_module
from drivebench.search.index.embedders import HashEmbedder
from drivebench.simulator.backend import SimConfig, Simulator


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.texts = 0

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        if kind == "passage":
            self.texts += len(texts)
        return super().encode(texts, kind=kind)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> tuple[Simulator, CountingEmbedder, list[str]]:
    extracted: list[str] = []
    real = ingest_module.extract

    def counting_extract(data: bytes, name: str, config: object) -> object:
        extracted.append(name)
        return real(data, name, config)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest_module, "extract", counting_extract)
    emb = CountingEmbedder()
    sim = Simulator(Drive.from_corpus(resolve_corpus("seed")), SimConfig(embedder="hash", use_cache=False), emb)
    sim.ingest_all()
    return sim, emb, extracted


def test_only_what_changed_is_reextracted_and_reembedded(
    counted: tuple[Simulator, CountingEmbedder, list[str]],
) -> None:
    sim, emb, extracted = counted
    assert emb.texts == len(sim.store) and len(extracted) == 33  # every version of the corpus once

    def step(action: object) -> tuple[int, int]:
        e0, x0 = emb.texts, len(extracted)
        sim.sync_index()
        return emb.texts - e0, len(extracted) - x0

    drive = sim.drive
    v = drive.add_version("d0003", b"# Information Security Policy v2\nPasswords rotate every 90 days.")
    assert step(v) == (len(sim.store.by_version[v.version_id]), 1)
    assert step(None) == (0, 0)  # nothing new: nothing done
    drive.trash("d0005")
    drive.untrash("d0005")
    assert step(None) == (0, 0)  # trash is a time mask, not an index change
    drive.move_document("d0007", folder_id=drive.folder_by_path("/it").folder_id)
    drive.add_grant(GrantRec("gz", "everyone", ["preview"], "allow", doc_id="d0007"))
    drive.set_clearance("u012", 1)
    assert step(None) == (0, 0)  # placement and policy changes: masks only
    drive.move_document("d0007", name="Code Review Guide.md")
    assert step(None) == (len(sim.store.by_version["d0007-v1"]), 1)  # a rename re-indexes the head only
    assert sim.store.texts[sim.store.by_version["d0007-v1"][0]].startswith(
        "Code Review Guidelines · Code Review Guide.md"
    )
    r = drive.restore_version("d0003", "d0003-v1")
    assert step(r) == (len(sim.store.by_version[r.version_id]), 1)
    old = list(sim.store.by_version["d0003-v1"])
    drive.set_retention(Retention(versions_kept=1))
    drive.apply_retention()
    assert step(None) == (0, 0)
    assert "d0003-v1" not in sim.store.by_version and not sim.store.alive[old].any()
    alive = sim.store.n_alive
    drive.purge("d0001")
    assert step(None) == (0, 0)
    assert sim.store.n_alive < alive and not any(
        sim.store.alive[i] for i, d in enumerate(sim.store.doc_ids) if d == "d0001"
    )


def test_index_is_current_when_a_write_returns_through_the_api(
    counted: tuple[Simulator, CountingEmbedder, list[str]],
) -> None:
    from tests.support.sims import auth, client_for, upload

    sim, _, _ = counted
    client = client_for(sim)
    r = upload(client, sim, "u009", "/it", "x.md", b"# x\nomega-marker-9")
    assert r.status_code == 201 and sim._index_cursor == len(sim.drive.changes)
    assert r.json()["version_id"] in sim.store.by_version
    client.post(f"/api/v1/files/{r.json()['doc_id']}/trash", headers=auth(sim, "u009"))
    assert sim._index_cursor == len(sim.drive.changes)


def test_snapshot_changes_with_every_change_and_is_deterministic() -> None:
    def run() -> list[str]:
        sim = Simulator(Drive.from_corpus(resolve_corpus("seed")), SimConfig(embedder="hash"))
        sim.ingest_all()
        d = sim.drive
        fid = d.folder_by_path("/it").folder_id
        ops = [
            lambda: d.create_document(fid, "a.md", b"# a", file_type="md"),
            lambda: d.add_version("d0001", b"# handbook v2"),
            lambda: d.restore_version("d0001", "d0001-v1"),
            lambda: d.move_document("d0001", name="员工手册.docx"),
            lambda: d.move_document("d0001", folder_id=fid),
            lambda: d.trash("d0002"),
            lambda: d.untrash("d0002"),  # back to the same content, but the history differs
            lambda: d.add_grant(GrantRec("gq", "user:u012", ["preview"], "allow", doc_id="d0003")),
            lambda: d.remove_grant("gq"),
            lambda: d.set_clearance("u012", 2),
            lambda: d.move_folder(d.folder_by_path("/legal").folder_id, fid),
            lambda: d.delete_version("d0004", "d0004-v1"),
            lambda: d.purge("d0005"),
        ]
        prints = [sim.snapshot()]
        for op in ops:
            d.clock.advance(timedelta(seconds=1))
            op()
            sim.sync_index()
            prints.append(sim.snapshot())
        return prints

    first = run()
    assert len(set(first)) == len(first), "every change yields a new fingerprint"
    assert run() == first, "the same history yields the same fingerprints"
