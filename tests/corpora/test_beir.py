"""BEIR export and import round trip; TREC qrels agree with the eval set."""

from __future__ import annotations

import json
from pathlib import Path

from drivebench.corpora.beir import IMPORT_USER, export_beir, import_beir
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.validate import validate_corpus
from drivebench.formats.corpus import EVALSET_NAME, load_manifest
from drivebench.formats.evalset import load_evalset


def test_export_then_import_round_trip(tmp_path: Path) -> None:
    seed = resolve_corpus("seed")
    queries = load_evalset(seed / EVALSET_NAME)
    counts = export_beir(seed, tmp_path / "beir")
    assert counts["documents"] == len(load_manifest(seed).documents)
    assert counts["queries"] == len(queries)
    corpus_rows = [json.loads(x) for x in (tmp_path / "beir" / "corpus.jsonl").read_text().splitlines()]
    by_id = {r["_id"]: r for r in corpus_rows}
    # the extracted text carries the facts the eval set asks about
    q = next(q for q in queries if q.answer_facts and q.gold)
    assert any(q.answer_facts[0] in by_id[g]["text"] for g in q.gold_ids)
    trec = (tmp_path / "beir" / "qrels.trec").read_text().splitlines()
    assert len(trec) == counts["qrels"] == sum(len(set(q.gold_ids)) for q in queries)
    assert all(len(line.split()) == 4 and line.split()[1] == "0" for line in trec)

    manifest = import_beir(tmp_path / "beir", tmp_path / "imported", name="seed-beir")
    assert len(manifest.documents) == counts["documents"]
    imported = load_evalset(tmp_path / "imported" / EVALSET_NAME)
    with_gold = [q for q in queries if q.gold]
    assert len(imported) == len(with_gold)
    assert {q.query_id: set(q.gold_ids) for q in imported} == {q.query_id: set(q.gold_ids) for q in with_gold}
    assert all(q.user_id == IMPORT_USER for q in imported)
    assert [p for p in validate_corpus(tmp_path / "imported") if p.level == "error"] == []
