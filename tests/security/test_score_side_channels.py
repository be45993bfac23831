"""No score tells a user what they may not see. The attack: an ordinary user uploads a probe document
holding control words and a candidate word, then recalls each word: over statistics of every chunk, the
candidate scores below the controls exactly when a hidden document holds it. Every score a principal sees
must be what a drive holding only the documents they may preview would give."""

from __future__ import annotations

import re

import numpy as np
from fastapi.testclient import TestClient

from drivebench.drive.model import GrantRec
from drivebench.search.index.tokenize import tokenize
from drivebench.server.api.schemas import RecallRequest
from drivebench.server.console import recall_view
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.security import h
from tests.support.sims import HASH, client_for, fresh_sim

USER = "u001"
CONTROLS = ("zqprobeone", "zqprobetwo", "zqprobethree")
_PLAIN = re.compile(r"^[a-z][a-z0-9]{3,}$|^[\u4e00-\u9fff]{2,}$")


def _visible_docs(sim: Simulator, user: str) -> set[str]:
    mask = sim.visible_chunks(sim.engine.user_principal(user), sim.drive.clock.now())
    return {sim.store.doc_ids[i] for i in np.flatnonzero(mask)}


def _hidden_only_words(sim: Simulator, user: str, limit: int = 20) -> list[str]:
    """Words that occur in documents ``user`` may not preview and in none they may."""
    visible = _visible_docs(sim, user)
    seen: set[str] = set()
    hidden: set[str] = set()
    for cid in np.flatnonzero(sim.store.alive):
        words = set(tokenize(sim.store.texts[cid]))
        (seen if sim.store.doc_ids[cid] in visible else hidden).update(words)
    return sorted(w for w in hidden - seen if _PLAIN.match(w))[:limit]


def _probe(client: TestClient, sim: Simulator, words: list[str]) -> str:
    sim.drive.add_grant(
        GrantRec("g-probe", f"user:{USER}", ["edit"], "allow", folder_id=sim.drive.folder_by_path("/rd").folder_id)
    )
    sim.sync_index()
    body = ("# probe\n\n" + " ".join([*CONTROLS, *words]) + "\n").encode()
    r = client.post("/api/v1/files", headers=h(sim, USER), files={"file": ("probe.md", body)}, data={"folder": "/rd"})
    assert r.status_code == 201, r.text
    return r.json()["doc_id"]


def _probe_score(hits, probe: str) -> float:
    scores = [x.score for x in hits if x.doc_id == probe]
    assert scores, "the probe document must answer its own word"
    return scores[0]


def test_a_probe_document_cannot_tell_hidden_words_from_unused_ones(
    module_client: TestClient, module_sim: Simulator
) -> None:
    words = _hidden_only_words(module_sim, USER)
    assert len(words) >= 10, words  # the attack has material to work on in the seed corpus
    probe = _probe(module_client, module_sim, words)
    principal = module_sim.engine.user_principal(USER)

    def bm25(word: str) -> float:
        return _probe_score(module_sim.recall(principal, word, 10, pipeline="bm25").hits, probe)

    def console(word: str) -> float:
        req = RecallRequest.model_validate({"query": word, "top_k": 10})
        return next(
            x.score for x in recall_view.run_recall(module_sim, principal, req, "bm25").results if x.doc_id == probe
        )

    for surface in (bm25, console):
        control = surface(CONTROLS[0])
        assert {surface(c) for c in CONTROLS} == {control}
        told = [w for w in words if surface(w) != control]
        assert told == [], f"{surface.__name__}: scores single out hidden words {told}"


def _upload(client: TestClient, sim: Simulator, name: str, words: list[str]) -> None:
    body = ("# note\n\n" + " ".join(words) + "\n").encode()
    r = client.post("/api/v1/files", headers=h(sim, USER), files={"file": (name, body)}, data={"folder": "/rd"})
    assert r.status_code == 201, r.text


def test_hybrid_recall_over_http_scores_as_if_hidden_documents_did_not_exist(
    module_client: TestClient, module_sim: Simulator
) -> None:
    """The hybrid endpoint, against a drive from which everything the user may not preview is
    purged and re-indexed: the same documents with the same scores. Pairs of probes of equal length, one
    holding a hidden word, one an unused word, and a query naming both: over statistics of every chunk the
    hidden word's lower idf reorders the pair's BM25 ranks, and the fused scores show it."""
    _same_answers_as_without_hidden_documents(module_sim, module_client, HASH)


def test_the_default_recall_over_http_scores_as_if_hidden_documents_did_not_exist() -> None:
    """The same with every default (deep, then the reranker, over e5): the follow-up codes, the reranker's
    BM25, dense and folder-path features are all taken from what the user may see, so neither the documents
    nor their scores move when the hidden documents are gone."""
    config = SimConfig()
    sim = fresh_sim(config)
    assert sim.reranker == "ltr-first-round" and sim.config.pipeline == "deep"
    with client_for(sim) as client:
        _same_answers_as_without_hidden_documents(sim, client, config)


def _same_answers_as_without_hidden_documents(sim: Simulator, client: TestClient, config: SimConfig) -> None:
    hidden = set(sim.drive.documents) - _visible_docs(sim, USER)
    assert hidden
    words = _hidden_only_words(sim, USER, limit=5)
    queries = [
        "预算 审批",
        "budget approval report",
        "项目X 技术方案",
        *(f"{w} {c}" for w, c in zip(words, CONTROLS, strict=False)),
    ]

    bare = fresh_sim()
    for doc_id in hidden:
        bare.drive.purge(doc_id)
    alone = Simulator(bare.drive, config)
    alone.ingest_all()
    for world, http in ((sim, client), (alone, client_for(alone))):
        world.drive.add_grant(
            GrantRec(
                "g-probe", f"user:{USER}", ["edit"], "allow", folder_id=world.drive.folder_by_path("/rd").folder_id
            )
        )
        world.sync_index()
        # equal lengths: only idf tells the two probes of a pair apart
        for i, (word, control) in enumerate(zip(words, CONTROLS, strict=False)):
            _upload(http, world, f"probe-a{i}.md", [word])
            _upload(http, world, f"probe-b{i}.md", [control])

    def answer(world: Simulator, http: TestClient, query: str) -> list[tuple[str, float]]:
        r = http.post("/api/mcp/recall", json={"query": query, "top_k": 10}, headers=h(world, USER))
        assert r.status_code == 200, r.text
        return [(x["path"], x["score"]) for x in r.json()["results"]]

    bare_client = client_for(alone)
    for query in queries:
        assert answer(sim, client, query) == answer(alone, bare_client, query), query
