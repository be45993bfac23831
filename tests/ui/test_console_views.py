"""The console's views in-process (no server): the withheld list's reasons for each mechanism of the seed corpus,
the trash, and the point-in-time rule of the drive view (a user acting as itself vs the admin viewing as it)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from drivebench.drive.errors import NotFound
from drivebench.server.api.schemas import RecallRequest
from drivebench.server.console import recall_view
from drivebench.simulator import drive_view
from drivebench.simulator.backend import Simulator
from tests.support.decisions import previewable_docs

SEPTEMBER = datetime(2026, 9, 1, tzinfo=UTC)  # before Emily's grant on /finance/budget expired (2026-10-01)


def _withheld(sim: Simulator, user: str, query: str) -> dict[str, recall_view.Withheld]:
    principal = sim.principal_for(sim.tokens.for_subject("svc:admin"), user_id=user)
    out = recall_view.playground(sim, principal, RecallRequest(query=query, top_k=10), "bm25", explain=True)
    assert out.withheld is not None
    got = {r.doc_id for r in out.response.results}
    assert got <= previewable_docs(sim.engine, user, sim.drive.clock.now())
    assert not got & {w.doc_id for w in out.withheld}
    return {w.doc_id: w for w in out.withheld}


@pytest.mark.parametrize(
    ("user", "query", "doc", "reason", "detail"),
    [
        ("u010", "加密模块设计说明", "d0009", "denied", "deny preview to user:u010"),
        ("u001", "核心推荐算法专利技术交底书", "d0008", "clearance", "above the clearance"),
        ("u010", "项目X预算表", "d0018", "no-grant", "expired 2026-10-01"),
        ("u007", "项目X立项书", "d0013", "no-grant", "membership of project"),
        ("u001", "2027年度融资计划", "d0020", "no-grant", "inheritance is broken at /finance/confidential"),
    ],
)
def test_withheld_reasons_come_from_the_explanation(
    ui_sim: Simulator, user: str, query: str, doc: str, reason: str, detail: str
) -> None:
    withheld = _withheld(ui_sim, user, query)
    assert doc in withheld, sorted(withheld)
    assert withheld[doc].reason == reason
    assert any(detail in line for line in withheld[doc].detail), withheld[doc].detail


def test_trash_is_a_reason_and_a_list(ui_sim: Simulator) -> None:
    doc = "d0010"  # Platform Architecture Overview: u001 may preview it
    ui_sim.drive.trash(doc, "svc:admin")
    ui_sim.sync_index()
    try:
        withheld = _withheld(ui_sim, "u001", "Platform Architecture Overview")
        assert withheld[doc].reason == "trash"
        principal = ui_sim.engine.user_principal("u001")
        view = drive_view.drive_view(ui_sim, principal, "/rd/platform", drive_view.instant(ui_sim, None))
        assert doc in {r.doc_id for r in view.trash} and doc not in {r.doc_id for r in view.documents}
        with pytest.raises(NotFound):
            drive_view.document_view(ui_sim, principal, doc, drive_view.instant(ui_sim, None))
    finally:
        ui_sim.drive.untrash(doc, "svc:admin")
        ui_sim.sync_index()


def test_point_in_time_a_user_never_sees_what_was_taken_away_the_admin_replays_it(ui_sim: Simulator) -> None:
    moment = drive_view.instant(ui_sim, SEPTEMBER)
    herself = ui_sim.principal_for(ui_sim.tokens.for_subject("u010"))
    with pytest.raises(NotFound):  # the folder she could list in September but may not now: as if missing
        drive_view.drive_view(ui_sim, herself, "/finance/budget", moment)
    assert "d0018" not in {d.doc_id for d in drive_view.previewable(ui_sim, herself, moment)}
    replay = ui_sim.principal_for(ui_sim.tokens.for_subject("svc:admin"), user_id="u010")
    view = drive_view.drive_view(ui_sim, replay, "/finance/budget", moment)
    existed = {d.doc_id for d in ui_sim.drive.documents.values() if d.version_at(SEPTEMBER) is not None}
    assert "d0018" in {r.doc_id for r in view.documents} <= existed
    doc = drive_view.document_view(ui_sim, replay, "d0018", moment)
    assert doc.parts and all(v.created_at <= SEPTEMBER for v in doc.versions)
    with pytest.raises(NotFound):  # now the grant has expired: not even the admin's view-as shows it
        drive_view.document_view(ui_sim, replay, "d0018", drive_view.instant(ui_sim, None))
