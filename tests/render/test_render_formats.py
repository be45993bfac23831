"""Every format renders, round-trips through the extractor, and is byte-for-byte deterministic."""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import ezdxf
import pytest
from pypdf import PdfReader

from drivebench.corpora.render import RENDERERS, DocSpec, Section, render
from drivebench.corpora.render._fixed import ZIP_DATE_TIME
from drivebench.extract import extract
from tests.support.render_specs import FORMATS, en_spec, zh_spec


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _missing(spec: DocSpec, extracted: str) -> list[str]:
    haystack = _squash(extracted)
    return [line for line in spec.plain_text().split("\n") if _squash(line) not in haystack]


def test_every_format_has_a_renderer() -> None:
    assert set(RENDERERS) == set(FORMATS)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="no renderer"):
        render(DocSpec("x", "doc"))


@pytest.mark.parametrize("make", [zh_spec, en_spec], ids=["zh", "en"])
def test_round_trip_contains_every_string(file_type: str, make: object) -> None:
    spec = make(file_type)  # type: ignore[operator]
    data = render(spec)
    ex = extract(data, f"doc.{file_type}")
    assert ex.file_type == file_type
    assert _missing(spec, ex.text) == []
    assert ex.warnings == []


@pytest.mark.parametrize("make", [zh_spec, en_spec], ids=["zh", "en"])
def test_render_is_deterministic(file_type: str, make: object) -> None:
    spec = make(file_type)  # type: ignore[operator]
    assert render(spec) == render(spec)


def test_render_is_deterministic_across_processes() -> None:
    code = (
        "import hashlib,sys; sys.path.insert(0, sys.argv[1]);"
        "from tests.support.render_specs import zh_spec, FORMATS; from drivebench.corpora.render import render;"
        "print(' '.join(hashlib.sha256(render(zh_spec(f))).hexdigest() for f in FORMATS))"
    )
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONHASHSEED": "4242"}  # another set/dict iteration order than ours
    out = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True, check=True, env=env)

    assert out.stdout.split() == [hashlib.sha256(render(zh_spec(f))).hexdigest() for f in FORMATS]


def test_different_specs_give_different_bytes(file_type: str) -> None:
    assert render(zh_spec(file_type)) != render(en_spec(file_type))


@pytest.mark.parametrize("file_type", ["docx", "xlsx", "pptx"])
def test_ooxml_core_properties_and_zip_entries_are_pinned(file_type: str) -> None:
    data = render(zh_spec(file_type))
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.namelist()[0] == "[Content_Types].xml"
    assert {i.date_time for i in zf.infolist()} == {ZIP_DATE_TIME}
    core = zf.read("docProps/core.xml").decode()
    assert re.findall(r"<dcterms:(?:created|modified)[^>]*>([^<]*)<", core) == ["2024-01-01T00:00:00Z"] * 2
    assert "<cp:lastModifiedBy>张伟</cp:lastModifiedBy>" in core


def test_pdf_is_invariant_and_uses_the_cid_font() -> None:
    data = render(zh_spec("pdf"))
    reader = PdfReader(io.BytesIO(data))
    assert reader.metadata is not None and reader.metadata.title == "2024年度研发中心预算报告"
    assert str(reader.metadata.get("/CreationDate")).startswith("D:2000")  # reportlab invariant=1
    fonts = {str(f["/BaseFont"]) for page in reader.pages for f in page["/Resources"]["/Font"].values()}
    assert "/STSong-Light" in fonts
    assert len(reader.pages) >= 1


def test_pdf_wraps_long_chinese_lines_within_the_page() -> None:
    from drivebench.corpora.render.pdf import wrap_line

    lines = wrap_line("统一云盘" * 100 + "。", 11, 200)
    assert len(lines) > 5
    assert "".join(lines) == "统一云盘" * 100 + "。"
    assert not any(line.startswith("。") for line in lines)


def test_pdf_long_document_spans_pages() -> None:
    spec = DocSpec("长文档", "pdf", sections=[Section(f"第{i}节", ["内容。" * 80]) for i in range(12)])
    ex = extract(render(spec), "long.pdf")
    assert [p.label for p in ex.parts][:2] == ["page 1", "page 2"]
    assert _missing(spec, ex.text) == []


def test_dxf_is_a_drawing_with_title_block_layers_and_geometry() -> None:
    spec = zh_spec("dxf")
    doc = ezdxf.read(io.StringIO(render(spec).decode("utf-8")))
    assert doc.dxfversion == "AC1024"  # R2010
    layers = {layer.dxf.name for layer in doc.layers}
    assert {
        "BORDER",
        "TITLEBLOCK",
        "GEOMETRY",
        "S01_第一章 项目概述",
        "S02_第二章 风险与对策",
        "孔位",
        "中心线_辅助",
    } <= layers
    msp = doc.modelspace()
    kinds = {e.dxftype() for e in msp.query("*[layer=='GEOMETRY']")}
    assert {"LWPOLYLINE", "CIRCLE", "LINE", "DIMENSION"} <= kinds
    assert msp.query("CIRCLE[layer=='孔位']")
    (ref,) = msp.query("INSERT[name=='TITLE_BLOCK']")
    values = {a.dxf.tag: a.dxf.text for a in ref.attribs}
    assert values["TITLE"] == spec.title and "DB-2024-017" in values.values()
    assert len(msp.query("MTEXT")) == 6  # 3 + 2 paragraphs + 1 notes
    assert doc.audit().has_errors is False


def test_dxf_header_timestamps_and_guids_are_pinned() -> None:
    from ezdxf.tools.juliandate import juliandate

    from drivebench.corpora.render._fixed import FIXED_NAIVE

    lines = [line.strip() for line in render(en_spec("dxf")).decode("utf-8").splitlines()]

    def var(name: str) -> str:
        return lines[lines.index(name) + 2]

    fixed = juliandate(FIXED_NAIVE)
    for name in ("$TDCREATE", "$TDUCREATE", "$TDUPDATE", "$TDUUPDATE"):
        assert float(var(name)) == pytest.approx(fixed), name
    assert float(var("$TDINDWG")) == 0.0
    assert var("$FINGERPRINTGUID") == "{D81E0B6A-2C3F-4E57-9B1A-000000000001}"
    assert var("$VERSIONGUID") == "{D81E0B6A-2C3F-4E57-9B1A-000000000002}"
    pairs = list(zip(lines[0::2], lines[1::2], strict=False))
    handles = [int(v, 16) for i, (c, v) in enumerate(pairs) if c in ("5", "105") and pairs[i - 1][1] != "$HANDSEED"]
    assert int(var("$HANDSEED"), 16) > max(handles) > 0x80
    assert not [line for line in lines if re.match(r"\d+\.\d+\.\d+ @ 20\d\d-", line) and "2000-01-01" not in line]


def test_zip_members_are_nested_and_pinned() -> None:
    data = render(zh_spec("zip"))
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.namelist() == ["README.md", "方案/技术方案.docx", "图纸/轴承座.dxf", "预算.pdf", "嵌套/内层.zip"]
    assert {i.date_time for i in zf.infolist()} == {ZIP_DATE_TIME}
    assert zf.comment.decode() == "2024年度研发中心预算报告"
    inner = zipfile.ZipFile(io.BytesIO(zf.read("嵌套/内层.zip")))
    assert inner.namelist() == ["说明/readme.md"]
    ex = extract(data, "bundle.zip")
    labels = [p.label for p in ex.parts]
    assert "member 嵌套/内层.zip/说明/readme.md" in labels
    assert "member 图纸/轴承座.dxf | title block" in labels


def test_xlsx_sheet_names_are_made_legal_and_unique() -> None:
    from drivebench.corpora.render.xlsx import sheet_title

    taken: set[str] = set()
    assert sheet_title("预算/汇总[2024]:Q1?", taken) == "预算_汇总_2024__Q1_"
    assert sheet_title("预算/汇总[2024]:Q1?", taken) == "预算_汇总_2024__Q1_ (2)"
    assert len(sheet_title("x" * 40, taken)) == 31


def test_text_cells_are_never_formulas() -> None:
    import openpyxl

    spec = DocSpec("f", "xlsx", sections=[Section("S", ["=SUM(A1:A3)"], table=[["=1+1", "x"]])])
    wb = openpyxl.load_workbook(io.BytesIO(render(spec)))
    cells = [c for row in wb["S"].iter_rows() for c in row if c.value]
    assert [(c.value, c.data_type) for c in cells] == [("=SUM(A1:A3)", "s"), ("=1+1", "s"), ("x", "s")]
