"""The evaluator extracts a corpus's files once per process: a second corpus oracle (each evaluate builds one) and a
second probe's queries reuse what the first read, and a rewritten file is read again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from drivebench.evaluator import corpus_terms
from drivebench.evaluator.corpus_terms import CorpusTerms
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.extract import core as extract_core
from drivebench.simulator.backend import Simulator


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[str]:
    """Every file name ``module``'s ``extract`` is asked to read from now on."""
    calls: list[str] = []
    real = module.extract

    def extract(data: bytes, name: str, *args: object, **kwargs: object) -> object:
        calls.append(name)
        return real(data, name, *args, **kwargs)

    monkeypatch.setattr(module, "extract", extract)
    return calls


def test_a_second_oracle_of_the_same_corpus_extracts_no_file_again(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sim.corpus_dir is not None
    query = "budget approval policy"
    first = CorpusTerms(sim.corpus_dir).distinctive(query)  # reads every version's terms (the document frequency)
    calls = _counting(monkeypatch, corpus_terms)
    second = CorpusTerms(sim.corpus_dir)
    assert second.distinctive(query) == first
    doc = next(iter(second._documents))
    assert second.document_terms(doc, second._documents[doc].versions[-1].created_at)
    assert calls == []


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_text("# Note\n\nalpha bravo\n", encoding="utf-8")
    assert {"alpha", "bravo"} <= corpus_terms._file_terms(path, "note.md", "Note note.md")
    path.write_text("# Note\n\ncharlie delta echo\n", encoding="utf-8")
    again = corpus_terms._file_terms(path, "note.md", "Note note.md")
    assert {"charlie", "delta", "echo"} <= again and "alpha" not in again


def test_a_second_probe_of_the_same_documents_extracts_none_again(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = sorted(sim.drive.documents)[:12]
    first = QueryBuilder(sim.drive, docs)
    calls = _counting(monkeypatch, extract_core)
    second = QueryBuilder(sim.drive, docs)
    assert second.texts == first.texts and any(first.texts.values())
    assert calls == []
