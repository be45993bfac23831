"""The hand-written eval sets (``benchmarks/data/heldout/``, never tuned on, and ``benchmarks/data/dev/``, tuning
sets): each loads and fits its corpus, every asker may open every gold document now, every answer fact is in a gold
document's text, and no question is (nearly) one of the generated eval set's, so a held-out set stays a check the
generated sets were not tuned on and a dev set adds questions the generated sets do not already have."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
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

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
KINDS = {"fact", "locate", "multi-doc"}
# at or above this character 5-gram Jaccard a question reads as a copy of a generated one
NEAR_COPY = 0.6


@dataclass(frozen=True)
class HandWrittenSet:
    name: str
    path: Path
    corpus: str  # the built-in corpus label it was written on
    seed: int | None  # None: the default seed
    split: str  # "heldout" (never tuned on) or "dev" (may be tuned on)
    phrasings: frozenset[str]


SETS = [
    HandWrittenSet(
        "acme-zh-v3-heldout",
        DATA / "heldout" / "acme-zh-v3-handwritten.jsonl",
        "acme-zh@3",
        None,
        "heldout",
        frozenset({"natural", "colloquial", "abbreviation", "english", "vague", "typo"}),
    ),
    HandWrittenSet(
        "acme-en-v3-dev",
        DATA / "dev" / "acme-en-v3-handwritten-dev.jsonl",
        "acme-en@3",
        None,
        "dev",
        frozenset({"natural", "colloquial", "abbreviation", "vague", "typo", "terse"}),
    ),
]


@pytest.fixture(scope="module", params=SETS, ids=lambda s: s.name)
def hand_set(request: pytest.FixtureRequest) -> HandWrittenSet:
    return request.param


@pytest.fixture(scope="module")
def corpus_dir(hand_set: HandWrittenSet) -> Path:
    return resolve_corpus(hand_set.corpus, seed=hand_set.seed)


@pytest.fixture(scope="module")
def manifest(corpus_dir: Path) -> Manifest:
    return load_manifest(corpus_dir)


@pytest.fixture(scope="module")
def queries(hand_set: HandWrittenSet) -> list[EvalQuery]:
    return load_evalset(hand_set.path)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _grams(text: str, n: int = 5) -> set[str]:
    s = re.sub(r"\s+", "", text.lower())
    return {s[i : i + n] for i in range(max(1, len(s) - n + 1))}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_the_set_loads_with_unique_ids_and_enough_questions(hand_set: HandWrittenSet, queries: list[EvalQuery]) -> None:
    assert len(queries) >= 60
    ids = [q.query_id for q in queries]
    assert len(set(ids)) == len(ids)
    assert len({q.query for q in queries}) == len(queries)  # no question written twice
    for q in queries:
        assert q.gold, q.query_id
        assert q.user_id, q.query_id  # a named asker, whose rights are checked below
        assert q.tags.get("source") == "hand-written", q.query_id
        # a dev set says so on every question; the held-out set predates the tag
        assert q.tags.get("split", "heldout") == hand_set.split, q.query_id
        assert q.tags.get("phrasing") in hand_set.phrasings, q.query_id
        assert q.tags.get("kind") in KINDS, q.query_id
        if q.tags["kind"] == "multi-doc":
            assert len(q.gold) >= 2, q.query_id


def test_the_composition_the_readme_states(
    hand_set: HandWrittenSet, queries: list[EvalQuery], manifest: Manifest
) -> None:
    phrasing = Counter(q.tags["phrasing"] for q in queries)
    assert set(phrasing) == hand_set.phrasings  # every kind of phrasing is there
    if "english" in hand_set.phrasings:  # a Chinese set asks a share of its questions in English or mixed
        assert phrasing["english"] / len(queries) >= 0.08
    assert sum(bool(q.as_of) for q in queries) >= 5  # questions about an earlier version
    assert sum(len(q.gold) >= 2 for q in queries) >= 6  # questions several documents answer
    assert sum(bool(q.answer_facts) for q in queries) / len(queries) >= 0.8
    # every file type of the corpus is asked about
    assert {q.tags["file_type"] for q in queries} == {d.file_type for d in manifest.documents}


def test_every_gold_document_and_version_exists_in_the_corpus(
    hand_set: HandWrittenSet, queries: list[EvalQuery], corpus_dir: Path, manifest: Manifest
) -> None:
    assert evalset_misfit(queries, corpus_dir, hand_set.corpus) is None
    docs = {d.doc_id: d for d in manifest.documents}
    for q in queries:
        for g in q.gold:
            doc = docs[g.doc_id]
            assert doc.trashed_at is None, q.query_id  # a trashed document is never an answer
            # the gold version is the one current when the question is asked (now, or as_of)
            at = q.as_of or manifest.clock.now
            current = [v.version_id for v in doc.versions if v.created_at <= at][-1]
            assert g.version_id == current, q.query_id


def test_every_asker_may_preview_every_gold_document_now(queries: list[EvalQuery], corpus_dir: Path) -> None:
    manifest = load_manifest(corpus_dir)
    engine = PermissionEngine.from_manifest(manifest, corpus_dir)
    now = manifest.clock.now
    denied = [
        (q.query_id, q.user_id, g.doc_id)
        for q in queries
        for g in q.gold
        if not user_may_preview(engine, q.user_id or "", g.doc_id, now)
    ]
    assert denied == []


def test_every_answer_fact_is_in_a_gold_document_text(
    queries: list[EvalQuery], corpus_dir: Path, manifest: Manifest
) -> None:
    files = {v.version_id: v.file for d in manifest.documents for v in d.versions}

    @cache
    def text(version_id: str) -> str:
        path = corpus_dir / files[version_id]
        return _norm(extract(path.read_bytes(), path.name).text)

    missing = []
    for q in queries:
        texts = [text(g.version_id or "") for g in q.gold]
        for fact in q.answer_facts:
            if not any(_norm(fact) in t for t in texts):
                missing.append((q.query_id, fact))
        if len(q.gold) == 1:  # a single gold document holds every fact itself
            assert all(_norm(f) in texts[0] for f in q.answer_facts), q.query_id
    assert missing == []


def test_no_question_copies_a_generated_one(queries: list[EvalQuery], corpus_dir: Path) -> None:
    generated = [_grams(q.query) for q in load_evalset(corpus_dir / EVALSET_NAME)]
    assert len(generated) > 100
    too_close = []
    for q in queries:
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
