"""Foreign ids map to the corpus: by path (current or past), unique name, or a map file; versions by
number; what maps to nothing is counted and listed, never a hit, never judged for leaks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.evaluator.idmap import IdMapError, IdMapper
from drivebench.evaluator.scoring import score
from drivebench.formats.corpus import Manifest, Move, load_manifest
from drivebench.formats.evalset import RunHit, RunRecord


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    m = load_manifest(resolve_corpus("seed"))
    docs = list(m.documents)
    # d0007 once lived in /archive, d0014 has two versions
    i = next(i for i, d in enumerate(docs) if d.doc_id == "d0007")
    docs[i] = docs[i].model_copy(
        update={"moves": [Move(at=datetime(2026, 1, 1, tzinfo=UTC), from_folder="/archive", to_folder="/rd")]}
    )
    return m.model_copy(update={"documents": docs})


def _map(mapper: IdMapper, *hits: dict) -> list[RunHit]:
    (rec,), _ = mapper.map_records([RunRecord(query_id="q", results=[RunHit(**h) for h in hits])])
    return rec.results


def test_path_current_and_past_with_version_numbers(manifest: Manifest) -> None:
    mapper = IdMapper("path", manifest=manifest)
    out = _map(
        mapper,
        {"doc_id": "/projects/project-x/项目X技术方案.docx", "version_id": "1"},
        {"doc_id": "\\ARCHIVE\\code review guidelines.md"},  # a past path, other case and separators
        {"doc_id": "/projects/project-x/项目X技术方案.docx", "version_id": "v2"},
        {"doc_id": "/projects/project-x/项目X技术方案.docx", "version_id": "7"},  # no version 7
    )
    assert [(h.doc_id, h.version_id) for h in out] == [
        ("d0014", "d0014-v1"),
        ("d0007", None),
        ("d0014", "d0014-v2"),
        ("d0014", None),
    ]
    assert out[0].model_extra["foreign_id"] == "/projects/project-x/项目X技术方案.docx"
    assert out[3].model_extra["foreign_version"] == "7"


def test_unmapped_results_are_listed_never_hits_never_judged(manifest: Manifest, mkq) -> None:
    mapper = IdMapper("path", manifest=manifest)
    run = [
        RunRecord(
            query_id="q1", results=[RunHit(doc_id="/nowhere/x.pdf"), RunHit(doc_id="/rd/Code Review Guidelines.md")]
        )
    ]
    run += [RunRecord(query_id="q2", results=[RunHit(doc_id="/nowhere/y.pdf")])]
    mapped, stats = mapper.map_records(run)
    assert stats.unmapped == 2 and stats.mapped == 1
    assert mapped[0].results[0].doc_id == "unmapped:/nowhere/x.pdf" and mapped[0].error is None
    assert mapped[1].error_kind == "unmapped"  # nothing in q2 maps: a failed query, not an answer
    # the eval set names the unmapped foreign id as gold and as forbidden: still no hit, no leak
    qs = [mkq("q1", ["/nowhere/x.pdf", "d0007"], forbidden=["/nowhere/x.pdf"]), mkq("q2", ["d0007"])]
    out = score(qs, mapped, (1, 10), bootstrap=False, oracle="evalset")
    assert out["per_query"][0]["hit_rate@1"] == 0.0 and out["per_query"][0]["hit_rate@10"] == 1.0
    assert out["per_query"][0]["leaked"] == [] and out["metrics"]["leak_rate@10"] == 0.0
    assert out["unmapped"]["results"] == 2 and out["unmapped"]["queries"] == 2
    assert {s["id"] for s in out["unmapped"]["samples"]} == {"/nowhere/x.pdf", "/nowhere/y.pdf"}
    assert out["errors"]["by_kind"]["unmapped"]["count"] == 1


def test_name_match_needs_a_unique_name(manifest: Manifest) -> None:
    docs = [*manifest.documents, manifest.documents[0].model_copy(update={"doc_id": "d9999", "folder": "/rd"})]
    m = manifest.model_copy(update={"documents": docs})
    out = _map(IdMapper("name", manifest=m), {"doc_id": "x/y/Code Review Guidelines.md"}, {"doc_id": docs[0].name})
    assert out[0].doc_id == "d0007"
    assert out[1].doc_id.startswith("unmapped:") and out[1].model_extra["unmapped_reason"] == "ambiguous (2 documents)"


def test_map_files_csv_and_jsonl(tmp_path: Path, manifest: Manifest) -> None:
    csv_map = tmp_path / "map.csv"
    csv_map.write_text("foreign_id,doc_id\nF-7,d0007\nF-X,d4242\n", encoding="utf-8")
    out = _map(IdMapper(str(csv_map), manifest=manifest), {"doc_id": "F-7"}, {"doc_id": "F-X"}, {"doc_id": "F-?"})
    assert [h.doc_id for h in out] == ["d0007", "unmapped:F-X", "unmapped:F-?"]
    jsonl = tmp_path / "map.jsonl"
    rows = [{"foreign_id": "A1", "doc_id": "d0014"}, {"foreign_version_id": "ver-aa", "version_id": "d0014-v1"}]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = _map(IdMapper(str(jsonl), manifest=manifest), {"doc_id": "A1", "version_id": "ver-aa"})
    assert (out[0].doc_id, out[0].version_id) == ("d0014", "d0014-v1")
    bad = tmp_path / "bad.csv"
    bad.write_text("foreign_id,doc_id\nonly-one,\n", encoding="utf-8")
    with pytest.raises(IdMapError, match=r"bad.csv:2: give foreign_id and doc_id"):
        IdMapper(str(bad), manifest=manifest)


def test_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(IdMapError, match='match = "path" needs the corpus'):
        IdMapper("path")
    with pytest.raises(IdMapError, match="not one of doc_id, path, name and no such map file"):
        IdMapper(str(tmp_path / "missing.csv"))


def test_doc_id_match_with_a_corpus_flags_unknown_ids(manifest: Manifest) -> None:
    out = _map(IdMapper("doc_id", manifest=manifest), {"doc_id": "d0001", "version_id": "d0001-v1"}, {"doc_id": "zz"})
    assert [h.doc_id for h in out] == ["d0001", "unmapped:zz"]
    assert out[1].model_extra["unmapped_reason"] == "not a doc id of the corpus"
