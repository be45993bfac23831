"""The corpus's own move history on every ``as_of`` surface: acme-zh@2 moved 18 documents before its clock,
and an ``as_of`` before a move judges the document in the folder it was in then (recall, answer, MCP
``get_document``, effective permissions, the console's document page), for a service token replaying a user.

The expected verdicts come from the generator's rules (``corpora.generator.access``), not from the simulator:
pairs where the old folder and the final folder give different answers, so judging in today's folder (what
the loader did when it dropped ``moves``) fails both ways: a leak and a missed document.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from drivebench.api import load_simulator
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.common.access import AccessModel
from drivebench.formats.corpus import Manifest, load_manifest
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.security import h, mcp_calls
from tests.support.sims import client_for

CORPUS = "acme-zh@2"


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest(resolve_corpus(CORPUS))


@pytest.fixture(scope="module")
def acme() -> Iterator[tuple[Simulator, TestClient]]:
    sim = load_simulator(CORPUS, config=SimConfig(embedder="hash", pipeline="bm25"))
    with client_for(sim) as client:
        yield sim, client


def _pairs(manifest: Manifest) -> list[tuple[str, str, datetime, bool, str]]:
    """(user, doc, instant before its first move, may preview then, path then) where the old and the final
    folder disagree."""
    model = AccessModel.from_manifest(manifest)
    out = []
    for d in manifest.documents:
        if not d.moves:
            continue
        first = min(d.moves, key=lambda m: m.at)
        before = first.at - timedelta(hours=1)
        if d.versions[0].created_at > before:
            continue
        for u in manifest.users:
            then = model.decide(u.user_id, d.doc_id, before)
            if then != model.decide(u.user_id, d.doc_id, before, folder=d.folder):
                out.append((u.user_id, d.doc_id, before, then, f"{first.from_folder}/{d.name}"))
    return out


def test_the_corpus_has_moves_that_change_who_could_see(manifest: Manifest) -> None:
    pairs = _pairs(manifest)
    assert len(pairs) >= 10 and {p[3] for p in pairs} == {True, False}, len(pairs)
    assert ("u026", "d0154") in {(u, d) for u, d, _, then, _ in pairs if not then}  # the reported leak


def test_every_surface_judges_the_document_where_it_was(manifest: Manifest, acme: tuple[Simulator, TestClient]) -> None:
    sim, client = acme
    titles = {d.doc_id: d.title or d.name for d in manifest.documents}
    wrong = []
    pairs = _pairs(manifest)
    calls = [("get_document", {"doc_id": d, "user_id": u, "as_of": before.isoformat()}) for u, d, before, _, _ in pairs]
    documents = mcp_calls(sim, "eval", calls)  # one MCP session for every pair's call
    for (user, doc_id, before, then, path_then), (err, text, got) in zip(pairs, documents, strict=True):
        as_of = before.isoformat()
        for route in ("/api/mcp/recall", "/api/mcp/answer"):
            body = {"query": titles[doc_id], "top_k": 100, "user_id": user, "as_of": as_of}
            r = client.post(route, headers=h(sim, "eval"), json=body)
            assert r.status_code == 200, r.text
            if (doc_id in {x["doc_id"] for x in r.json()["results"]}) != then:
                wrong.append((route, user, doc_id, then))
        if then and (err or got["path"] != path_then):
            wrong.append(("get_document", user, doc_id, then, text[:80]))
        if not then and not (err and "not-found (404):" in text):
            wrong.append(("get_document", user, doc_id, then, text[:80]))
        r = client.get(
            "/api/permissions/effective",
            params={"path": path_then, "as_of": as_of, "user_id": user},
            headers=h(sim, "eval"),
        )
        allowed = r.status_code == 200 and "preview" in r.json()["allowed"]
        if allowed != then:
            wrong.append(("effective", user, doc_id, then, r.status_code))
        page = client.get(f"/ui/doc/{doc_id}", params={"as": user, "as_of": as_of}, headers=h(sim, "admin"))
        shown = page.status_code == 200 and path_then.rsplit("/", 1)[0] in page.text
        if shown != then or (not then and page.status_code != 404):
            wrong.append(("console", user, doc_id, then, page.status_code))
    assert wrong == []


def test_a_users_own_token_before_a_move_sees_only_what_it_could_then_and_may_now(
    manifest: Manifest, acme: tuple[Simulator, TestClient]
) -> None:
    """u026 may preview d0154 now (its final folder) but could not before the move: its own token with that
    ``as_of`` must not return it."""
    sim, client = acme
    model = AccessModel.from_manifest(manifest)
    leaks, checked = [], 0
    for user, doc_id, before, then, _ in _pairs(manifest):
        if then or not model.decide(user, doc_id, manifest.clock.now):
            continue
        checked += 1
        body = {"query": next(d.title or d.name for d in manifest.documents if d.doc_id == doc_id), "top_k": 100}
        r = client.post("/api/mcp/recall", headers=h(sim, user), json={**body, "as_of": before.isoformat()})
        assert r.status_code == 200, r.text
        if doc_id in {x["doc_id"] for x in r.json()["results"]}:
            leaks.append((user, doc_id))
    assert checked >= 1 and leaks == [], (checked, leaks)
