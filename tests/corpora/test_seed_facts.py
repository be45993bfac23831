"""The seed corpus's owned facts (``corpora/seed/facts.toml`` -> ``facts.jsonl``): every fact is stated by exactly
its owners' versions, as the evaluator reads them (the text extracted from the built files, after its
normalisation), so the answer-leak oracle can trust the owners."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from drivebench.corpora import builtin
from drivebench.corpora.builtin import lookup_builtin, resolve_corpus
from drivebench.corpora.seed.facts import FACTS_DATA, facts_data, seed_facts
from drivebench.evaluator.fact_text import fact_forms, normalise
from drivebench.extract import extract
from drivebench.formats.corpus import load_manifest
from drivebench.formats.facts import CorpusFact, load_facts


@pytest.fixture(scope="module")
def seed() -> tuple[list[CorpusFact], dict[str, str]]:
    """The built seed's facts and every version's extracted text (normalised), by version id."""
    corpus = resolve_corpus("seed")
    manifest = load_manifest(corpus)
    texts = {
        v.version_id: normalise(extract((corpus / v.file).read_bytes(), Path(v.file).name).text)
        for d in manifest.documents
        for v in d.versions
    }
    facts = load_facts(corpus)
    assert facts is not None
    return facts, texts


def test_every_seed_fact_is_stated_by_exactly_its_owners_versions(
    seed: tuple[list[CorpusFact], dict[str, str]],
) -> None:
    facts, texts = seed
    wrong: list[str] = []
    for fact in facts:
        owned = {vid for owner in fact.owners for vid in owner.version_ids}
        stating = {vid for vid, text in texts.items() if any(form in text for form in fact_forms(fact.text))}
        if stating != owned:
            wrong.append(f"{fact.fact_id} {fact.text!r}: owners {sorted(owned)}, stated by {sorted(stating)}")
    assert wrong == []


def test_the_seed_facts_cover_every_document_and_follow_its_versions(
    seed: tuple[list[CorpusFact], dict[str, str]],
) -> None:
    facts, texts = seed
    data = facts_data()
    assert len(facts) == sum(len(table["facts"]) for table in data.values()) == 108
    first_owners = {f.owners[0].doc_id for f in facts}
    assert first_owners == {vid.rsplit("-v", 1)[0] for vid in texts} and len(first_owners) == 29
    assert len({f.fact_id for f in facts}) == len(facts)
    by_text = {f.text: f for f in facts}
    # a value a revision replaced belongs to the old version only and is no longer current
    assert [(o.doc_id, o.version_ids) for o in by_text["500元/晚"].owners] == [("d0002", ["d0002-v1"])]
    assert not by_text["500元/晚"].current and by_text["600元/晚"].current
    # a value two documents state is owned by both, each with the versions that state it
    assert [(o.doc_id, o.version_ids) for o in by_text["110万元"].owners] == [
        ("d0013", ["d0013-v1"]),
        ("d0018", ["d0018-v2"]),
    ]
    # an author's name is in its files' extracted text (document properties): no name of an author is a fact
    assert not {"陈静", "周杰", "赵敏"} & set(by_text)


def test_a_fact_its_owner_does_not_state_fails_the_build() -> None:
    texts = {"d0001-v1": "员工手册 compliance@xingchen.example 12% 3 月 31 日 200 元以上"}
    with pytest.raises(ValueError, match=r"\[d0002\] .*is no seed document"):
        seed_facts(texts)
    texts = {f"{doc}-v1": "" for doc in facts_data()}
    with pytest.raises(ValueError, match=r"\[d0001\] compliance_mailbox = 'compliance@xingchen.example': not stated"):
        seed_facts(texts)


def test_the_seed_fingerprint_covers_its_facts_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached seed is rebuilt when ``facts.toml`` changes: its fingerprint covers the data file (and what
    the owners are checked with)."""
    sources = lookup_builtin("seed").sources
    assert "formats/facts.py" in sources and "extract" in sources
    for source in sources:  # the sources, copied: the fingerprint is computed over the copy
        if (builtin._HERE / source).is_dir():
            shutil.copytree(builtin._HERE / source, tmp_path / source, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(builtin._HERE / source, tmp_path / source)
    monkeypatch.setattr(builtin, "_HERE", tmp_path)
    before = builtin._source_fingerprint(sources)
    data = tmp_path / FACTS_DATA.relative_to(FACTS_DATA.parents[2])
    data.write_text(data.read_text(encoding="utf-8").replace("1.86亿元", "1.87亿元"), encoding="utf-8")
    assert builtin._source_fingerprint(sources) != before
