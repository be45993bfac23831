"""No timing oracle on lookups: a user looking up a document or folder they may not list does exactly the work
of looking up one that does not exist. Structural, nothing is timed: every surface answers a hidden and a
missing id or path of the same shape alike, and neither reaches Casbin (a Casbin call costs 1-3 ms, which
made a hidden object measurably slower than a missing one); an object the user may list still does (so the
counter is live). ``benchmarks/bench_timing_oracles.py`` measures the remaining difference over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import casbin
import pytest
from fastapi.testclient import TestClient

from drivebench.drive.model import DocumentRec, GrantRec
from drivebench.drive.state import Drive
from drivebench.simulator.backend import Simulator
from tests.support.security import h, mcp_call

WHO = "u001"  # internal clearance, in rd: may not list d0008 (secret) nor /finance-secret
HIDDEN_DOC, MISSING_DOC, VISIBLE_DOC = "d0008", "d9998", "d0007"
HIDDEN_PATH = "/rd/核心推荐算法专利技术交底书.pdf"  # d0008's path
MISSING_PATH = "/rd/核心推荐算法专利技术交底书.pdx"
VISIBLE_PATH = "/rd/Code Review Guidelines.md"
HIDDEN_FOLDER, MISSING_FOLDER, VISIBLE_FOLDER = "/finance-secret", "/finance-nothin", "/rd"
HIDDEN_GRANT, MISSING_GRANT, VISIBLE_GRANT = "g07", "g99", "g02"  # g07: on a finance folder; g02: on /rd


class EnforceCounter:
    """Counts Casbin decisions made by any enforcer while active (``enforce`` is ``enforce_ex``'s first half,
    so every decision goes through ``enforce_ex`` once)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(casbin.Enforcer, "enforce_ex", self._counting(casbin.Enforcer.enforce_ex))

    def _counting(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(enforcer: casbin.Enforcer, *args: Any) -> Any:
            self.calls += 1
            return real(enforcer, *args)

        return counted

    def during(self, call: Callable[[], Any]) -> tuple[int, Any]:
        before = self.calls
        out = call()
        return self.calls - before, out


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[EnforceCounter]:
    yield EnforceCounter(monkeypatch)


def _same(hidden: str, missing: str, hidden_key: str, missing_key: str) -> None:
    assert hidden.replace(hidden_key, "X") == missing.replace(missing_key, "X")


def _http_cases(sim: Simulator) -> dict[str, Callable[[TestClient, str], Any]]:
    """surface -> (client, what) -> response, ``what`` an id, a path or a folder of the case's kind."""
    past = (sim.drive.clock.now() - timedelta(hours=1)).isoformat()
    user = h(sim, WHO)

    def recall(c: TestClient, folder: str) -> Any:
        return c.post("/api/mcp/recall", headers=user, json={"query": "预算", "filters": {"folder": folder}})

    return {
        "files get": lambda c, x: c.get(f"/api/v1/files/{x}", headers=user),
        "files versions": lambda c, x: c.get(f"/api/v1/files/{x}/versions", headers=user),
        "files download": lambda c, x: c.get(f"/api/v1/files/{x}/content", headers=user),
        "files trash": lambda c, x: c.post(f"/api/v1/files/{x}/trash", headers=user),
        "console doc": lambda c, x: c.get(f"/ui/doc/{x}", headers=user),
        "effective by path": lambda c, x: c.get("/api/permissions/effective", params={"path": x}, headers=user),
        "effective by path as of": lambda c, x: c.get(
            "/api/permissions/effective", params={"path": x, "as_of": past}, headers=user
        ),
        "grants by path": lambda c, x: c.get("/api/permissions/grants", params={"path": x}, headers=user),
        "effective by folder": lambda c, x: c.get("/api/permissions/effective", params={"path": x}, headers=user),
        "list folder": lambda c, x: c.get("/api/v1/files", params={"folder": x}, headers=user),
        "upload into folder": lambda c, x: c.post(
            "/api/v1/files", headers=user, files={"file": ("n.md", b"# n\n")}, data={"folder": x}
        ),
        "recall filters.folder": recall,
        "remove grant": lambda c, x: c.delete(f"/api/permissions/grants/{x}", headers=user),
    }


KIND = {
    "files get": "doc",
    "files versions": "doc",
    "files download": "doc",
    "files trash": "doc",
    "console doc": "doc",
    "effective by path": "path",
    "effective by path as of": "path",
    "grants by path": "path",
    "effective by folder": "folder",
    "list folder": "folder",
    "upload into folder": "folder",
    "recall filters.folder": "folder",
    "remove grant": "grant",
}
TRIPLES = {
    "doc": (HIDDEN_DOC, MISSING_DOC, VISIBLE_DOC),
    "path": (HIDDEN_PATH, MISSING_PATH, VISIBLE_PATH),
    "folder": (HIDDEN_FOLDER, MISSING_FOLDER, VISIBLE_FOLDER),
    "grant": (HIDDEN_GRANT, MISSING_GRANT, VISIBLE_GRANT),
}


@pytest.mark.parametrize("surface", list(KIND))
def test_a_hidden_and_a_missing_lookup_make_no_casbin_call_and_answer_alike(
    surface: str, module_client: TestClient, module_sim: Simulator, counter: EnforceCounter
) -> None:
    ask = _http_cases(module_sim)[surface]
    hidden, missing, visible = TRIPLES[KIND[surface]]
    ask(module_client, visible)  # warm: engines, enforcers, masks built before counting
    n_hidden, r_hidden = counter.during(lambda: ask(module_client, hidden))
    n_missing, r_missing = counter.during(lambda: ask(module_client, missing))
    assert r_hidden.status_code == r_missing.status_code and r_hidden.status_code in (400, 404), r_hidden.text
    _same(r_hidden.text, r_missing.text, hidden, missing)
    assert n_hidden == n_missing == 0, (n_hidden, n_missing)
    n_visible, r_visible = counter.during(lambda: ask(module_client, visible))
    assert n_visible > 0, (surface, r_visible.status_code)  # a lookup the user may see is decided by Casbin


@pytest.mark.parametrize("as_of", [False, True])
def test_mcp_get_document_of_a_hidden_and_a_missing_id_makes_no_casbin_call(
    as_of: bool, module_sim: Simulator, counter: EnforceCounter
) -> None:
    args = {"as_of": (module_sim.drive.clock.now() - timedelta(hours=1)).isoformat()} if as_of else {}

    def get(doc_id: str) -> tuple[bool, str, Any]:
        return mcp_call(module_sim, WHO, "get_document", {"doc_id": doc_id, **args})

    get(VISIBLE_DOC)
    n_hidden, (err_h, text_h, _) = counter.during(lambda: get(HIDDEN_DOC))
    n_missing, (err_m, text_m, _) = counter.during(lambda: get(MISSING_DOC))
    assert err_h and err_m and "not-found (404)" in text_h, text_h
    _same(text_h, text_m, HIDDEN_DOC, MISSING_DOC)
    assert n_hidden == n_missing == 0, (n_hidden, n_missing)
    n_visible, (err_v, text_v, _) = counter.during(lambda: get(VISIBLE_DOC))
    assert not err_v and n_visible > 0, text_v


def test_an_upload_beside_a_hidden_namesake_makes_no_casbin_call_for_it(
    module_client: TestClient, module_sim: Simulator, counter: EnforceCounter
) -> None:
    """The name-conflict check of a write reads the masks: a name only a hidden document holds costs what a
    free name costs (the upload's own folder check is the same Casbin work for both)."""
    rd = module_sim.drive.folder_by_path("/rd").folder_id
    module_sim.drive.add_grant(GrantRec("g-up", "user:u001", ["upload"], "allow", folder_id=rd))

    def up(name: str) -> Any:
        return module_client.post(
            "/api/v1/files", headers=h(module_sim, WHO), files={"file": (name, b"# n\n")}, data={"folder": "/rd"}
        )

    up("warm.md")
    n_hidden, r_hidden = counter.during(lambda: up(HIDDEN_PATH.rsplit("/", 1)[1]))
    n_free, r_free = counter.during(lambda: up(MISSING_PATH.rsplit("/", 1)[1]))
    assert r_hidden.status_code == r_free.status_code == 201, (r_hidden.text, r_free.text)
    assert n_hidden == n_free, (n_hidden, n_free)


@pytest.mark.parametrize("as_of", [False, True])
@pytest.mark.parametrize(
    ("hidden", "missing"),
    [
        (f"{HIDDEN_FOLDER}/notes.md", f"{MISSING_FOLDER}/notes.md"),  # under a hidden / a missing folder
        (HIDDEN_FOLDER, MISSING_FOLDER),  # a hidden folder does not stop the lookup early
        (HIDDEN_PATH, MISSING_PATH),
    ],
)
def test_a_path_lookup_reads_the_same_tree_for_a_hidden_and_a_missing_path(
    hidden: str,
    missing: str,
    as_of: bool,
    module_client: TestClient,
    module_sim: Simulator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Resolving a path reads every document (and, in the past, every folder) whether its folder exists,
    is hidden or is missing: the work does not depend on what the caller may not see."""
    reads = {"placement_at": 0, "folder_path_at": 0}
    for cls, name in ((DocumentRec, "placement_at"), (Drive, "folder_path_at")):
        real = getattr(cls, name)

        def counted(*args: Any, _real: Callable[..., Any] = real, _name: str = name) -> Any:
            reads[_name] += 1
            return _real(*args)

        monkeypatch.setattr(cls, name, counted)
    params = {"as_of": (module_sim.drive.clock.now() - timedelta(hours=1)).isoformat()} if as_of else {}

    def ask(path: str) -> tuple[dict[str, int], Any]:
        before = dict(reads)
        r = module_client.get("/api/permissions/effective", params={"path": path, **params}, headers=h(module_sim, WHO))
        return {k: reads[k] - before[k] for k in reads}, r

    ask(VISIBLE_PATH)
    n_hidden, r_hidden = ask(hidden)
    n_missing, r_missing = ask(missing)
    assert r_hidden.status_code == r_missing.status_code == 404, r_hidden.text
    assert n_hidden == n_missing, (n_hidden, n_missing)
    assert n_hidden["placement_at"] >= len(module_sim.drive.documents)  # every document was read
