"""Catalog: loaders (manifest, CSV, JSONL), folded lookups, trash at a point in time."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drivebench.evaluator.catalog import Catalog, CatalogDoc, fold
from drivebench.formats.corpus import Manifest

T0 = "2025-01-01T00:00:00+00:00"


def manifest() -> Manifest:
    def version(doc: str, n: int) -> dict:
        return {"version_id": f"{doc}-v{n}", "version": n, "file": f"files/{doc}-v{n}", "created_at": T0}

    return Manifest.model_validate(
        {
            "name": "t",
            "language": "zh",
            "clock": {"start": T0, "now": "2025-06-01T00:00:00+00:00"},
            "departments": [{"id": "rd", "name": "研发"}, {"id": "fin", "name": "财务"}],
            "users": [{"user_id": "u1", "name": "王芳", "department": "rd", "roles": ["engineer"]}],
            "folders": [
                {"path": "/"},
                {"path": "/研发", "owner_department": "rd"},
                {"path": "/研发/项目X"},
                {"path": "/财务", "owner_department": "fin"},
            ],
            "documents": [
                {
                    "doc_id": "d1",
                    "name": "技术方案.docx",
                    "folder": "/研发/项目X",
                    "file_type": "docx",
                    "title": "项目X技术方案",
                    "created_at": T0,
                    "versions": [version("d1", 1), version("d1", 2)],
                },
                {
                    "doc_id": "d2",
                    "name": "报价单.pdf",
                    "folder": "/财务",
                    "file_type": "pdf",
                    "secret_level": "secret",
                    "created_at": T0,
                    "versions": [version("d2", 1)],
                    "trashed_at": "2025-03-01T00:00:00+00:00",
                },
            ],
            "grants": [],
        }
    )


def test_from_manifest() -> None:
    cat = Catalog.from_manifest(manifest())
    d1, d2 = cat.get("d1"), cat.get("d2")
    assert d1.path == "/研发/项目X/技术方案.docx" and d1.department == "rd"  # inherited from /研发
    assert d1.version_ids == ("d1-v1", "d1-v2") and d1.title == "项目X技术方案"
    assert d2.secret_level == "secret" and d2.department == "fin"
    assert cat.now == datetime(2025, 6, 1, tzinfo=UTC)


def test_lookup_by_every_key() -> None:
    cat = Catalog.from_manifest(manifest())
    for key in (
        "d1",
        "技术方案.docx",
        "技术方案.DOCX",
        "技术方案",
        "/研发/项目X/技术方案.docx",
        "研发/项目X/技术方案.docx",
    ):
        assert cat.lookup(key) == ["d1"], key
    assert cat.lookup("项目x技术方案") == ["d1"]
    assert cat.lookup("nothing") == []


def test_fold_nfkc_and_case() -> None:
    assert fold("ＲＥＡＤＭＥ．ＭＤ") == "readme.md"
    assert fold("  A \u3000 b ") == "a b"


def test_ambiguous_keys_return_all_candidates() -> None:
    cat = Catalog([CatalogDoc("a", "README.md", "/x/README.md"), CatalogDoc("b", "README.md", "/y/README.md")])
    assert cat.lookup("readme.md") == ["a", "b"]
    assert cat.lookup("/y/README.md") == ["b"]


def test_trashed_at_query_time() -> None:
    cat = Catalog.from_manifest(manifest())
    assert cat.is_trashed("d2")  # catalog clock (June) is after the trash date (March)
    assert not cat.is_trashed("d2", datetime(2025, 2, 1, tzinfo=UTC))
    assert cat.is_trashed("d2", datetime(2025, 3, 1))  # naive = UTC, boundary inclusive
    assert not cat.is_trashed("d1") and not cat.is_trashed("unknown")


def test_from_csv(tmp_path: Path) -> None:
    p = tmp_path / "cat.csv"
    p.write_text(
        "doc_id,path,title,secret_level,version_ids,trashed_at\n"
        "x1,/共享/合同.pdf,采购合同,confidential,x1-v1|x1-v2,\n"
        "x2,/共享/旧.md,,,,2024-01-01T00:00:00+00:00\n",
        encoding="utf-8",
    )
    cat = Catalog.from_file(p)
    x1 = cat.get("x1")
    assert x1.name == "合同.pdf" and x1.file_type == "pdf" and x1.version_ids == ("x1-v1", "x1-v2")
    assert cat.lookup("采购合同") == ["x1"] and cat.is_trashed("x2")


def test_from_jsonl(tmp_path: Path) -> None:
    p = tmp_path / "cat.jsonl"
    rows = [{"doc_id": "y1", "name": "图纸.dxf", "version_ids": ["y1-v1"], "department": "rd"}, {"doc_id": "y2"}]
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    cat = Catalog.from_file(p)
    assert len(cat) == 2 and cat.get("y1").file_type == "dxf" and cat.lookup("图纸") == ["y1"]


def test_bad_file_row(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"name": "no id"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad catalog row"):
        Catalog.from_file(p)
