"""Ground truth, reasons, sampling and attack queries of the leak probe, on the seed corpus (real Casbin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.evaluator.probe.groundtruth import REASONS, GroundTruth
from drivebench.evaluator.probe.pairs import forbidden_pairs, sample_pairs
from drivebench.evaluator.probe.queries import QueryBuilder, document_text
from drivebench.formats.corpus import load_manifest


@pytest.fixture(scope="module")
def gt() -> GroundTruth:
    corpus = Path(resolve_corpus("seed"))
    manifest = load_manifest(corpus)
    return GroundTruth(Drive.from_manifest(manifest, corpus), manifest)


@pytest.mark.parametrize(
    ("user", "doc", "reason", "grant"),
    [
        ("u010", "d0009", "deny", "g13"),  # seed: an explicit user deny on the crypto design
        ("u007", "d0015", "expired-membership", "g04"),  # u007 left project X on 2026-10-01
        ("u010", "d0018", "expired-grant", "g14"),  # u010's budget grant ended 2026-10-01
        ("u005", "d0020", "broken-inheritance", "g06"),  # /finance/confidential breaks inheritance
    ],
)
def test_reason_and_grant_path(gt: GroundTruth, user: str, doc: str, reason: str, grant: str) -> None:
    assert gt.forbidden(user, doc) and not gt.may_preview(user, doc)
    why = gt.why(user, doc)
    assert why.reason == reason
    assert grant in {step.get("grant_id") for step in why.path}
    assert why.as_dict()["meaning"] == REASONS[reason]


def test_clearance_reason_names_both_levels(gt: GroundTruth) -> None:
    why = gt.why("u011", "d0023")  # a secret document, an internal-cleared user
    assert why.reason == "clearance"
    assert why.path[0] == {"fact": "clearance", "secret_level": "secret", "clearance": "internal"}


def test_an_allowed_pair_is_not_explained_as_forbidden(gt: GroundTruth) -> None:
    allowed = next((u, d) for u in gt.users() for d in gt.docs() if not gt.forbidden(u, d))
    assert gt.may_preview(*allowed)
    with pytest.raises(ValueError, match="not a forbidden pair"):
        gt.why(*allowed)


def test_every_sampled_pair_is_forbidden_by_enforce(gt: GroundTruth) -> None:
    pairs, summary = sample_pairs(gt, 10_000, seed=3)
    assert len(pairs) == summary["forbidden_pairs"] == len(forbidden_pairs(gt)) > 150
    assert len({(p.user_id, p.doc_id) for p in pairs}) == len(pairs)
    for p in pairs:
        assert not gt.may_preview(p.user_id, p.doc_id) or gt.trashed(p.doc_id)


def test_sampling_is_seeded_and_stratified(gt: GroundTruth) -> None:
    a, summary = sample_pairs(gt, 12, seed=1)
    b, _ = sample_pairs(gt, 12, seed=1)
    c, _ = sample_pairs(gt, 12, seed=2)
    key = [(p.user_id, p.doc_id) for p in a]
    assert key == [(p.user_id, p.doc_id) for p in b]
    assert key != [(p.user_id, p.doc_id) for p in c]
    # round-robin over reasons: the first picks cover every reason the corpus has, rare ones included
    present = set(summary["by_reason_explained"])
    assert {"deny", "clearance", "expired-membership", "expired-grant", "broken-inheritance"} <= present
    assert {p.reason for p in a[: len(present)]} == present
    assert summary["by_reason_explained"]["no-grant"] > 100 > summary["by_reason_explained"]["deny"]


def test_queries_come_from_the_document_itself(gt: GroundTruth) -> None:
    builder = QueryBuilder(gt.drive, ["d0009", "d0018", "d0021"])
    queries = dict(builder.queries_for("d0018", 6))
    assert queries["title"] == gt.drive.documents["d0018"].title
    assert "filename" not in queries  # its file name is its title: asked once
    assert dict(builder.queries_for("d0009", 6))["filename"] == "加密模块设计说明"
    text = document_text(gt.drive, "d0018")
    assert queries["sentence"] in " ".join(text.split())
    assert "150" in queries["identifiers"].split()
    assert len(builder.queries_for("d0018", 2)) == 2
    english = dict(QueryBuilder(gt.drive, ["d0021"]).queries_for("d0021", 6))
    assert english["title"] == "Tax Audit Settlement Memo" and "transfer pricing" in english["sentence"]
