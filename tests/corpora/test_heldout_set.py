"""The hand-written held-out eval set of acme-zh@3 (``benchmarks/data/heldout/``): it loads and fits the corpus,
every asker may open every gold document now, every answer fact is in a gold document's text, and no question
is (nearly) one of the generated eval set's, so the set stays a check the generated sets were not tuned on."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.evalset_fit import evalset_misfit
from drivebench.drive.permissions import PermissionEngine
from drivebench.extract import extract
from drivebench.formats.corpus import EVALSET_NAME, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery, load_evalset
from tests.support.decisions import user_may_preview

CORPUS = "acme-zh@3"
HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "heldout" / "acme-zh-v3-handwritten.jsonl"
PHRASINGS = {"natural", "colloquial", "abbreviation", "english", "vague", "typo"}
KINDS = {"fact", "locate", "multi-doc"}
# at or above this character 5-gram Jaccard a question reads as a copy of a generated one
NEAR_COPY = 0.6


@pytest.fixture(scope="module")
def corpus_dir() -> Path:
    return resolve_corpus(CORPUS)


@pytest.fixture(scope="module")
def manifest(corpus_dir: Path) -> Manifest:
    return load_manifest(corpus_dir)


@pytest.fixture(scope="module")
def heldout() -> list[EvalQuery]:
    return load_evalset(HELDOUT)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _grams(text: str, n: int = 5) -> set[str]:
    s = re.sub(r"\s+", "", text.lower())
    return {s[i : i + n] for i in range(max(1, len(s) - n + 1))}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_the_set_loads_with_unique_ids_and_enough_questions(heldout: list[EvalQuery]) -> None:
    assert len(heldout) >= 60
    ids = [q.query_id for q in heldout]
    assert len(set(ids)) == len(ids)
    assert len({q.query for q in heldout}) == len(heldout)  # no question written twice
    for q in heldout:
        assert q.gold, q.query_id
        assert q.user_id, q.query_id  # a named asker, whose rights are checked below
        assert q.tags.get("source") == "hand-written", q.query_id
        assert q.tags.get("phrasing") in PHRASINGS, q.query_id
        assert q.tags.get("kind") in KINDS, q.query_id
        if q.tags["kind"] == "multi-doc":
            assert len(q.gold) >= 2, q.query_id


def test_the_composition_the_readme_states(heldout: list[EvalQuery]) -> None:
    phrasing = Counter(q.tags["phrasing"] for q in heldout)
    assert set(phrasing) == PHRASINGS  # every kind of phrasing is there
    assert phrasing["english"] / len(heldout) >= 0.08
    assert sum(bool(q.as_of) for q in heldout) >= 5  # questions about an earlier version
    assert sum(bool(q.answer_facts) for q in heldout) / len(heldout) >= 0.8
    assert len({q.tags["file_type"] for q in heldout}) == 8  # every file type of the corpus is asked about


def test_every_gold_document_and_version_exists_in_the_corpus(
    heldout: list[EvalQuery], corpus_dir: Path, manifest: Manifest
) -> None:
    assert evalset_misfit(heldout, corpus_dir, CORPUS) is None
    docs = {d.doc_id: d for d in manifest.documents}
    for q in heldout:
        for g in q.gold:
            doc = docs[g.doc_id]
            assert doc.trashed_at is None, q.query_id  # a trashed document is never an answer
            # the gold version is the one current when the question is asked (now, or as_of)
            at = q.as_of or manifest.clock.now
            current = [v.version_id for v in doc.versions if v.created_at <= at][-1]
            assert g.version_id == current, q.query_id


def test_every_asker_may_preview_every_gold_document_now(heldout: list[EvalQuery], corpus_dir: Path) -> None:
    manifest = load_manifest(corpus_dir)
    engine = PermissionEngine.from_manifest(manifest, corpus_dir)
    now = manifest.clock.now
    denied = [
        (q.query_id, q.user_id, g.doc_id)
        for q in heldout
        for g in q.gold
        if not user_may_preview(engine, q.user_id or "", g.doc_id, now)
    ]
    assert denied == []


def test_every_answer_fact_is_in_a_gold_document_text(
    heldout: list[EvalQuery], corpus_dir: Path, manifest: Manifest
) -> None:
    files = {v.version_id: v.file for d in manifest.documents for v in d.versions}

    @cache
    def text(version_id: str) -> str:
        path = corpus_dir / files[version_id]
        return _norm(extract(path.read_bytes(), path.name).text)

    missing = []
    for q in heldout:
        texts = [text(g.version_id or "") for g in q.gold]
        for fact in q.answer_facts:
            if not any(_norm(fact) in t for t in texts):
                missing.append((q.query_id, fact))
        if len(q.gold) == 1:  # a single gold document holds every fact itself
            assert all(_norm(f) in texts[0] for f in q.answer_facts), q.query_id
    assert missing == []


def test_no_question_copies_a_generated_one(heldout: list[EvalQuery], corpus_dir: Path) -> None:
    generated = [_grams(q.query) for q in load_evalset(corpus_dir / EVALSET_NAME)]
    assert len(generated) > 100
    too_close = []
    for q in heldout:
        mine = _grams(q.query)
        worst = max(_jaccard(mine, g) for g in generated)
        if worst >= NEAR_COPY:
            too_close.append((q.query_id, round(worst, 2)))
    assert too_close == []


def test_the_near_copy_measure_catches_a_copy(corpus_dir: Path) -> None:
    # the check above must be able to fail: a generated question with one character changed is caught
    generated = load_evalset(corpus_dir / EVALSET_NAME)[0].query
    edited = generated[:-1] + "吗"
    assert _jaccard(_grams(edited), _grams(generated)) >= NEAR_COPY
