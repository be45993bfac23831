"""``facts.jsonl``: the facts a corpus's documents own, written by acme@3 and the seed, absent (not measured) in
the frozen acme@1 and acme@2, carried by ``export-drive``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.export_drive import export_drive
from drivebench.formats.facts import FACTS_NAME, load_facts


@pytest.mark.parametrize("label", ["acme-en@1", "acme-zh@2"])
def test_corpora_without_owned_facts_say_so(label: str) -> None:
    """The frozen versions write no facts file: None (not measured), never []."""
    corpus = resolve_corpus(label)
    assert not (corpus / FACTS_NAME).exists()
    assert load_facts(corpus) is None


@pytest.mark.parametrize("label", ["acme-zh@3", "seed"])
def test_export_drive_carries_the_facts(label: str, tmp_path: Path) -> None:
    corpus = resolve_corpus(label)
    counts = export_drive(corpus, tmp_path / "export")
    facts = load_facts(tmp_path / "export")
    assert facts is not None and counts["facts"] == len(facts) > 0
    assert (tmp_path / "export" / FACTS_NAME).read_bytes() == (corpus / FACTS_NAME).read_bytes()


def test_export_drive_of_a_corpus_without_facts_writes_none(tmp_path: Path) -> None:
    corpus = tmp_path / "seed"
    shutil.copytree(resolve_corpus("seed"), corpus)
    (corpus / FACTS_NAME).unlink()
    counts = export_drive(corpus, tmp_path / "export")
    assert "facts" not in counts and not (tmp_path / "export" / FACTS_NAME).exists()


def test_a_malformed_facts_file_names_its_line_and_fails_the_export(tmp_path: Path) -> None:
    corpus = tmp_path / "seed"
    shutil.copytree(resolve_corpus("seed"), corpus)
    good = '{"fact_id": "f1", "text": "120万元", "entity": "PO-1", "attribute": "contract.total", '
    good += '"owners": [{"doc_id": "d0001", "version_ids": ["d0001-v1"]}]}'
    (corpus / FACTS_NAME).write_text(good + "\n" + '{"fact_id": "f2", "text": ""}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"facts.jsonl:2"):
        load_facts(corpus)
    with pytest.raises(ValueError, match=r"facts.jsonl:2"):
        export_drive(corpus, tmp_path / "export")
    assert not (tmp_path / "export").exists()
    (corpus / FACTS_NAME).write_text(good + "\n", encoding="utf-8")
    (facts,) = load_facts(corpus) or []
    assert facts.owner_doc_ids == ["d0001"] and facts.current
