"""The drive's own semantics: history for as_of, change feed, retention, clock, ids (no HTTP, no index)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.errors import Conflict, InvalidRequest, NotFound
from drivebench.drive.history import PolicyView, effective_grant, history_grants
from drivebench.drive.model import GrantRec
from drivebench.drive.operations import Retention
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.state import Drive
from tests.support.decisions import enforce_doc


@pytest.fixture
def drive() -> Drive:
    return Drive.from_corpus(resolve_corpus("seed"))


def test_versions_restore_copy_forward_keeps_history(drive: Drive) -> None:
    d = drive.doc("d0014")
    v3 = drive.restore_version("d0014", "d0014-v1", author="u003")
    assert [v.version_id for v in d.versions] == ["d0014-v1", "d0014-v2", "d0014-v3"]
    assert v3.restored_from == "d0014-v1" and v3.blob == d.versions[0].blob
    assert d.version_at(v3.created_at - timedelta(microseconds=1)).version_id == "d0014-v2"
    assert [c.kind for c in drive.changes] == ["restored"]  # one change per operation
    with pytest.raises(NotFound):
        drive.restore_version("d0014", "d0014-v9")


def test_move_and_rename_keep_placements(drive: Drive) -> None:
    before = drive.clock.now()
    fin = drive.folder_by_path("/finance").folder_id
    drive.move_document("d0014", folder_id=fin, name="方案.docx")
    d = drive.doc("d0014")
    assert drive.doc_path(d) == "/finance/方案.docx"
    assert drive.doc_path_at(d, before) == "/projects/project-x/项目X技术方案.docx"
    assert d.placement_at(before)[1] == "项目X技术方案.docx"
    assert [c.kind for c in drive.changes] == ["moved", "renamed"]
    assert drive.placement_times() == [d.placements[-1].since]
    n = len(drive.changes)
    drive.move_document("d0014", folder_id=fin, name="方案.docx")  # no-op: no change recorded
    assert len(drive.changes) == n


def test_folder_moves_keep_history_and_refuse_cycles(drive: Drive) -> None:
    before = drive.clock.now()
    px = drive.folder_by_path("/projects/project-x")
    fin = drive.folder_by_path("/finance")
    drive.move_folder(px.folder_id, fin.folder_id)
    assert drive.folder_path(px.folder_id) == "/finance/project-x"
    assert drive.folder_path_at(px.folder_id, before) == "/projects/project-x"
    assert drive.doc_path_at(drive.doc("d0014"), before).startswith("/projects/project-x/")
    with pytest.raises(InvalidRequest):
        drive.move_folder(fin.folder_id, px.folder_id)
    view = PolicyView(drive, before)
    assert view.folders[px.folder_id].parent_id == drive.folder_by_path("/projects").folder_id
    assert PolicyView(drive).folders[px.folder_id].parent_id == fin.folder_id


def test_trash_spans(drive: Drive) -> None:
    d = drive.doc("d0001")
    t0 = drive.clock.now()
    drive.trash("d0001")
    drive.untrash("d0001")
    drive.trash("d0001")
    assert [(s.start is not None, s.end is not None) for s in d.trash_spans] == [(True, True), (True, False)]
    assert not d.trashed_at_time(t0)
    assert d.trashed_at_time(d.trash_spans[0].start)
    assert not d.trashed_at_time(d.trash_spans[0].end)  # [start, end)
    assert d.trashed_at_time(drive.clock.now())
    with pytest.raises(Conflict):
        drive.trash("d0001")
    with pytest.raises(Conflict):
        drive.add_version("d0001", b"x")


def test_grant_history_bounds(drive: Drive) -> None:
    t_add = drive.clock.now()
    fin = drive.folder_by_path("/finance").folder_id
    drive.add_grant(GrantRec("gx", "user:u011", ["preview"], "allow", folder_id=fin))
    drive.clock.advance(timedelta(days=1))
    drive.remove_grant("gx")
    removed = drive.removed_grants[-1]
    assert removed.created_at == t_add and removed.removed_at == t_add + timedelta(days=1)
    eff = effective_grant(removed)
    assert eff is not None and eff.valid_from == t_add and eff.valid_until == removed.removed_at
    assert "gx" not in drive.grants and drive.next_grant_id() != "gx"
    assert any(k.startswith("gx~removed") for k in history_grants(drive))
    # a grant added and removed at the same instant was never in force
    drive.add_grant(GrantRec("gy", "user:u011", ["preview"], "allow", folder_id=fin))
    drive.remove_grant("gy")
    assert not any(k.startswith("gy") for k in history_grants(drive))
    # the history engine allows u011 inside the window only; the live engine never (now)
    hist = PermissionEngine(PolicyView(drive))
    u = hist.user_principal("u011")
    assert enforce_doc(hist, u, "d0017", "preview", t_add + timedelta(hours=1))
    assert not enforce_doc(hist, u, "d0017", "preview", t_add - timedelta(hours=1))
    assert not enforce_doc(hist, u, "d0017", "preview", drive.clock.now())
    assert not enforce_doc(PermissionEngine(drive), u, "d0017", "preview", t_add + timedelta(hours=1))


def test_change_feed_cursor(drive: Drive) -> None:
    drive.trash("d0001")
    drive.untrash("d0001")
    batch, cursor = drive.changes_since(0, limit=1)
    assert [c.seq for c in batch] == [1] and cursor == 1
    batch, cursor = drive.changes_since(cursor)
    assert [c.kind for c in batch] == ["untrashed"] and cursor == 2
    assert drive.changes_since(2) == ([], 2)
    with pytest.raises(Conflict, match="start again from 0") as past_the_end:
        drive.changes_since(3)
    assert not re.search(r"\d", str(past_the_end.value).replace("from 0", ""))  # no length of the feed
    with pytest.raises(InvalidRequest):
        drive.changes_since(-1)


def test_uploaded_ids_never_reused_after_purge(drive: Drive) -> None:
    fid = drive.folder_by_path("/it").folder_id
    a = drive.create_document(fid, "a.md", b"# a", file_type="md")
    drive.purge(a.doc_id)
    b = drive.create_document(fid, "b.md", b"# b", file_type="md")
    assert a.doc_id != b.doc_id
    assert a.versions[0].blob not in drive.blobs  # purge releases the bytes


def test_retention_versions_kept_days_and_trash(drive: Drive) -> None:
    d = drive.doc("d0014")
    for i in range(3):
        drive.add_version("d0014", f"v{i + 3}".encode())
    assert len(d.versions) == 5
    drive.set_retention(Retention(versions_kept=2))
    assert drive.apply_retention() == (3, 0)
    assert [v.version for v in d.versions] == [4, 5]
    assert [c.kind for c in drive.changes[-3:]] == ["version_deleted"] * 3
    with pytest.raises(Conflict):
        drive.delete_version("d0014", d.head.version_id)
    drive.set_retention(Retention(days=30))
    drive.advance_clock(timedelta(days=31))
    superseded = sum(len(x.versions) - 1 for x in drive.documents.values())
    assert superseded == 4  # d0002, d0004, d0018 (corpus) and d0014 v4
    assert drive.apply_retention() == (superseded, 0)
    assert all(len(x.versions) == 1 for x in drive.documents.values())
    drive.trash("d0001")
    drive.set_retention(Retention(trash_days=7))
    assert drive.apply_retention() == (0, 0)
    drive.advance_clock(timedelta(days=7))
    assert drive.apply_retention() == (0, 1)
    assert "d0001" not in drive.documents
    with pytest.raises(InvalidRequest):
        drive.set_retention(Retention(versions_kept=0))


def test_clock_only_moves_back_to_the_latest_change(drive: Drive) -> None:
    now = drive.clock.now()
    hwm = drive.high_water_mark()
    assert hwm <= now
    drive.set_clock(hwm)  # allowed: down to the latest change
    with pytest.raises(Conflict):
        drive.set_clock(hwm - timedelta(seconds=1))
    drive.set_clock(datetime(2027, 1, 1, tzinfo=UTC))
    drive.trash("d0001")
    with pytest.raises(Conflict):
        drive.set_clock(datetime(2026, 12, 31, tzinfo=UTC))
    with pytest.raises(InvalidRequest):
        drive.advance_clock(timedelta(seconds=-1))


def test_failed_journal_commit_makes_the_drive_read_only(drive: Drive) -> None:
    class Broken:
        def commit(self, drive: Drive, dirty: object) -> None:
            raise OSError("disk full")

    from drivebench.drive.errors import Unavailable

    drive.journal = Broken()
    with pytest.raises(Unavailable):
        drive.trash("d0001")
    with pytest.raises(Unavailable, match="read-only"):
        drive.trash("d0002")
