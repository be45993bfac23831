"""acme@2: distractors, questions asked the way people ask, graded gold with a rationale, real chains.

Soundness checks run on small builds (both languages); the audit's acceptance figures on the default
builds are in ``test_acme_v2_audit.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from drivebench.corpora.acme2.build import GENERATION_REPORT, build_acme2, generate
from drivebench.corpora.acme2.distractors import perturb
from drivebench.corpora.acme2.scenario import SCENARIO_DIR, fields, load
from drivebench.corpora.builtin import corpus_version
from drivebench.corpora.checksums import tree_checksums
from drivebench.corpora.validate import DUPLICATE_PATH, validate_corpus
from drivebench.formats.corpus import EVALSET_NAME, load_manifest
from drivebench.formats.evalset import load_evalset


@pytest.fixture(scope="module", params=["zh", "en"])
def small(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"acme-{request.param}-2-small")
    build_acme2(out, language=request.param, scale="small")
    return out


# Paths two live documents share in the small builds, as measured: acme@2 is frozen, so they stay (the default
# builds' counts are asserted in test_validate.py). Every other check passes.
SMALL_DUPLICATE_PATHS = {"zh": 5, "en": 6}


def test_valid_versioned_and_reported(small: Path) -> None:
    m = load_manifest(small)
    problems = [p for p in validate_corpus(small) if p.level == "error"]
    assert [str(p) for p in problems if p.kind != DUPLICATE_PATH] == []
    assert len([p for p in problems if p.kind == DUPLICATE_PATH]) == SMALL_DUPLICATE_PATHS[m.language]
    assert m.corpus_version == 2 and corpus_version(small) == f"{m.name}@2"
    report = json.loads((small / GENERATION_REPORT).read_text(encoding="utf-8"))
    assert report["contradictions"] == 0
    assert report["distractor_documents"] > 0
    assert report["chains_checked"] == report["chains_rejected"] + (
        report["chains_checked"] - report["chains_rejected"]
    )


def test_same_seed_same_bytes(small: Path, tmp_path: Path) -> None:
    language = load_manifest(small).language
    build_acme2(tmp_path, language=language, scale="small")  # type: ignore[arg-type]
    assert tree_checksums(tmp_path) == tree_checksums(small)


def test_questions_do_not_name_their_gold(small: Path) -> None:
    """Outside known-item lookups and chains, no gold document's title, file name stem, document number or id
    is in the question; known-item lookups stay at most 15% of the set."""
    m = load_manifest(small)
    docs = {d.doc_id: d for d in m.documents}
    queries = load_evalset(small / EVALSET_NAME)
    number = re.compile(r"[A-Z]{2,4}-\d{4}-\d{3}")
    for q in queries:
        if q.tags["phrasing"] in ("known_item", "chain"):
            continue
        text = q.query.lower()
        for g in q.gold:
            d = docs[g.doc_id]
            assert d.title.lower() not in text, (q.query_id, d.title)
            assert d.name.rsplit(".", 1)[0].lower() not in text
            assert g.doc_id not in q.query
            assert not (set(number.findall(d.title)) & set(number.findall(q.query))), (q.query_id, d.title)
    phrasing = Counter(q.tags["phrasing"] for q in queries)
    assert phrasing["known_item"] <= 0.15 * len(queries)
    assert {"paraphrase", "vague", "cross_language", "known_item", "chain"} <= set(phrasing)


def test_gold_is_authoritative_with_rationale(small: Path) -> None:
    m = load_manifest(small)
    kinds = {d.doc_id: d.tags["kind"] for d in m.documents}
    distractors = {d for d, k in kinds.items() if k.endswith(("_draft", "_copy", "_minutes"))}
    assert distractors
    queries = load_evalset(small / EVALSET_NAME)
    for q in queries:
        assert q.tags.get("rationale"), q.query_id
        assert not (set(q.gold_ids) & distractors), q.query_id  # a distractor is never gold
        grades = sorted(g.grade for g in q.gold)
        if len(grades) > 1 and q.tags["kind"] != "multi_hop":
            assert grades[-1] == 2 and grades.count(2) == 1  # one authoritative document
    assert any(len(q.gold) > 1 for q in queries if q.tags["kind"] != "multi_hop")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_every_answer_fact_is_in_the_pinned_gold_version(language: str) -> None:
    """In the text the generator wrote (the spec of the pinned version); ``corpus audit`` checks the same on
    the text the simulator extracts from the files."""
    _, queries, docs, _, _ = generate(language, scale="small")  # type: ignore[arg-type]
    versions = {d.version_id(n): v for d in docs for n, v in enumerate(d.versions, 1)}
    for q in queries:
        if not q.answer_facts:
            continue
        pinned = [g for g in q.gold if not q.hops or g.doc_id == q.hops[-1]]
        text = "\n".join(versions[g.version_id].spec.plain_text() for g in pinned if g.version_id)
        for fact in q.answer_facts:
            assert fact in text, (q.query_id, fact)


def test_no_negative_amounts_and_distractors_disagree() -> None:
    _, queries, docs, _, _ = generate("zh", scale="small")
    for d in docs:
        for v in d.versions:
            assert not any(re.match(r"^-\d", x) for x in v.facts.values()), d.title
    by_id = {d.doc_id: d for d in docs}
    versions = {d.version_id(n): v for d in docs for n, v in enumerate(d.versions, 1)}
    compared = 0
    for q in queries:
        if not q.answer_facts or q.tags["kind"] == "multi_hop" or q.as_of is not None:
            continue
        gold_doc = by_id[q.gold[0].doc_id]
        gold_text = versions[q.gold[0].version_id].spec.plain_text()  # type: ignore[index]
        for d in docs:
            if d.kind.endswith(("_draft", "_copy")) and gold_doc.title in d.title:
                # a draft or an outdated copy of the gold document states the answer less often than it does
                text = d.versions[-1].spec.plain_text()
                assert all(text.count(f) < gold_text.count(f) for f in q.answer_facts), (q.query_id, d.title)
                compared += 1
    assert compared > 5


def test_perturb_keeps_the_shape() -> None:
    import random

    rng = random.Random(1)
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", perturb("570,000", rng, []) or "")
    assert perturb("570,000", rng, []) != "570,000"
    assert re.fullmatch(r"2026年3月\d{1,2}日", perturb("2026年3月7日", rng, []) or "")
    assert perturb("张伟", rng, ["张伟", "王芳"]) == "王芳"
    assert perturb("合格", rng, []) is None


def test_scenario_data_is_complete() -> None:
    """Both languages define the same kinds and question sets; every template's placeholders are known."""
    zh, en = load("zh"), load("en")
    assert set(zh["kinds"]) == set(en["kinds"]) and set(zh["questions"]) == set(en["questions"])
    assert sorted(p.name for p in SCENARIO_DIR.glob("*.toml")) == ["en.toml", "story.toml", "zh.toml"]
    for data in (zh, en):
        for name, templates in data["questions"].items():
            for t in templates:
                assert fields(t) <= {"subject", "attr", "q", "when", "title"}, (name, t)
    with pytest.raises(ValueError, match="no acme@2 scenario data"):
        load("fr")


def test_five_percent_of_questions_have_a_typo(small: Path) -> None:
    """``noisy`` rolls 5% per single and version question, ``typos_to_share`` tops up to round(5%) of the set;
    every typo is one of the data file's substitutions (the question without it is a question of the set's
    language, not a second copy of another question)."""
    queries = load_evalset(small / EVALSET_NAME)
    typos = [q for q in queries if q.tags.get("noise") == "typo"]
    assert len(typos) >= round(0.05 * len(queries)) >= 3
    assert len(typos) / len(queries) <= 0.08
    assert {q.tags["kind"] for q in typos} <= {"single", "version"}
    subs = load(load_manifest(small).language)["typos"]
    for q in typos:
        assert any(b in q.query for b in subs.values()), q.query
    assert len({(q.user_id, q.query) for q in queries}) == len(queries)
