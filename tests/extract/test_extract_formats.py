"""Format-specific extraction behaviour: DXF encodings and entities, Office structure, strategies."""

from __future__ import annotations

import io
import zipfile
from datetime import date

import ezdxf
import pytest

from drivebench.corpora.render import render
from drivebench.extract import STRATEGIES, ExtractConfig, detect_type, extract
from drivebench.extract.pdf import join_wraps
from tests.support.file_builders import make_zip, small_spec


def _dxf_text(doc: ezdxf.document.Drawing) -> str:
    stream = io.StringIO()
    doc.write(stream)
    return stream.getvalue()


# --- config and dispatch ------------------------------------------------------------------------


def test_config_records_strategies_and_limits() -> None:
    cfg = ExtractConfig(dxf="filename-only")
    d = cfg.as_dict()
    assert d["dxf"] == "filename-only" and d["pdf"] == "text-layer" and d["zip_max_depth"] == 3
    assert set(STRATEGIES) <= set(d)
    with pytest.raises(ValueError, match="unknown pdf strategy"):
        ExtractConfig(pdf="ocr")
    with pytest.raises(AttributeError):
        cfg.pdf = "layout"  # type: ignore[misc]


@pytest.mark.parametrize("file_type", ["md", "txt", "docx", "pdf", "xlsx", "pptx", "dxf", "zip"])
def test_detect_type_and_text_is_joined_parts(file_type: str) -> None:
    data = render(small_spec(file_type))
    assert detect_type(data, f"Some.Name.{file_type.upper()}") == file_type
    ex = extract(data, f"x.{file_type}")
    assert ex.text == "\n\n".join(p.text for p in ex.parts if p.text)
    assert ex.strategy == STRATEGIES[file_type][0]
    assert "收入增长百分之十二。" in ex.text


# --- DXF -----------------------------------------------------------------------------------------


def test_dxf_filename_only_strategy_sees_only_the_stem() -> None:
    data = render(small_spec("dxf"))
    ex = extract(data, "图纸/DB-017 轴承座.dxf", ExtractConfig(dxf="filename-only"))
    assert ex.text == "DB-017 轴承座"
    assert [p.label for p in ex.parts] == ["file name"]
    assert ex.strategy == "filename-only"


def test_dxf_r12_unicode_escapes_are_decoded() -> None:
    doc = ezdxf.new("R12")
    doc.modelspace().add_text("R12 中文标注 轴承座", dxfattribs={"layer": "注释"})
    raw = _dxf_text(doc)
    data = doc.encode(raw)
    assert b"\\U+" in data and "中文".encode() not in data
    ex = extract(data, "old.dxf")
    assert "R12 中文标注 轴承座" in ex.text
    assert "layer 注释" in [p.label for p in ex.parts]


def test_dxf_gbk_codepage_is_honoured() -> None:
    doc = ezdxf.new("R2000")
    doc.encoding = "gbk"
    doc.modelspace().add_text("技术要求：未注倒角C1")
    data = _dxf_text(doc).encode("gbk")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    ex = extract(data, "gbk.dxf")
    assert "技术要求：未注倒角C1" in ex.text
    assert any("gbk" in w for w in ex.warnings)


def test_binary_dxf() -> None:
    doc = ezdxf.new("R2010")
    doc.modelspace().add_text("二进制图纸")
    stream = io.BytesIO()
    doc.write(stream, fmt="bin")
    assert stream.getvalue().startswith(b"AutoCAD Binary DXF")
    assert "二进制图纸" in extract(stream.getvalue(), "bin.dxf").text


def test_dxf_entities_blocks_attributes_dimensions_and_title_block() -> None:
    doc = ezdxf.new("R2010", setup=True)
    msp = doc.modelspace()
    doc.layers.add("ANNOTATIONS")
    msp.add_mtext("{\\fSimSun|b1;粗体说明}\\P第二行 %%c20", dxfattribs={"layer": "ANNOTATIONS"})
    msp.add_text("直径 %%c50", dxfattribs={"layer": "ANNOTATIONS"})
    dim = msp.add_linear_dim(base=(0, -5), p1=(0, 0), p2=(40, 0), text="总长 <> mm", dimstyle="EZDXF")
    dim.render()
    part = doc.blocks.new("BOLT")
    part.add_text("螺栓")
    part.add_attdef("SIZE", (0, -3), text="M8", dxfattribs={"prompt": "规格"})
    bolt = msp.add_blockref("BOLT", (10, 10), dxfattribs={"layer": "PARTS"})
    bolt.add_auto_attribs({"SIZE": "M12×40"})
    frame = doc.blocks.new("A3图框")
    frame.add_text("图号")
    frame.add_attdef("DWGNO", (10, 0), dxfattribs={"prompt": "图号"})
    frame.add_attdef("CHK", (10, -5), dxfattribs={"prompt": "审核"})
    msp.add_blockref("A3图框", (100, 0)).add_auto_attribs({"DWGNO": "GB-7788", "CHK": "王工"})
    doc.paperspace().add_text("布局说明文字")
    ex = extract(doc.encode(_dxf_text(doc)), "parts.dxf")
    parts = {p.label: p.text for p in ex.parts}
    assert parts["title block"] == "图号: GB-7788\n审核: 王工"
    assert parts["layer ANNOTATIONS"].split("\n") == ["粗体说明", "第二行 Ø20", "直径 Ø50"]
    assert "总长 40 mm" in parts["layer 0"]
    assert "布局说明文字" in parts["layer 0"]
    assert parts["layer PARTS"] == "M12×40"
    assert parts["block BOLT"] == "螺栓\n规格 M8"
    assert "ANNOTATIONS" in parts["layers"].split("\n")
    assert next(iter(parts)) == "title block"


# --- Office --------------------------------------------------------------------------------------


def test_docx_tables_merged_cells_nested_tables_headers() -> None:
    from docx import Document

    doc = Document()
    doc.add_paragraph("正文第一段")
    table = doc.add_table(rows=2, cols=3)
    merged = table.cell(0, 0).merge(table.cell(0, 1))
    merged.text = "合并单元格"
    table.cell(0, 2).text = "右"
    table.cell(1, 0).text = "下左"
    inner = table.cell(1, 1).add_table(rows=1, cols=1)
    inner.cell(0, 0).text = "嵌套表格"
    doc.sections[0].header.paragraphs[0].text = "页眉：内部资料"
    doc.sections[0].footer.paragraphs[0].text = "第 1 页"
    buf = io.BytesIO()
    doc.save(buf)
    ex = extract(buf.getvalue(), "t.docx")
    body = ex.parts[0].text.split("\n")
    assert body[0] == "正文第一段"
    assert body[1] == "合并单元格 右"
    assert body[2].startswith("下左") and "嵌套表格" in body[2]
    assert ex.parts[1].label == "headers and footers"
    assert ex.parts[1].text == "页眉：内部资料\n第 1 页"
    only_paragraphs = extract(buf.getvalue(), "t.docx", ExtractConfig(docx="paragraphs"))
    assert "合并单元格" not in only_paragraphs.text and "正文第一段" in only_paragraphs.text


def test_xlsx_values_and_oversized_dimensions() -> None:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "预算"
    ws.append(["科目", 12.0, 3.5, date(2024, 3, 1), None, "末列"])
    ws["B5"] = "=B1*2"  # a formula without a cached value: nothing to show
    buf = io.BytesIO()
    wb.save(buf)
    data = buf.getvalue()
    zf = zipfile.ZipFile(io.BytesIO(data))
    sheet = zf.read("xl/worksheets/sheet1.xml").replace(
        b'<dimension ref="A1:F5"/>', b'<dimension ref="A1:XFD1048576"/>'
    )
    patched = make_zip([(n, sheet if n == "xl/worksheets/sheet1.xml" else zf.read(n)) for n in zf.namelist()])
    ex = extract(patched, "t.xlsx")
    assert [p.label for p in ex.parts] == ["sheet 预算"]
    assert ex.parts[0].text == "预算\n科目 12 3.5 2024-03-01 末列"


def test_pptx_strategies_notes_groups_and_tables() -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text_frame.text = "组合内文字"
    table = slide.shapes.add_table(1, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "甲", "乙"
    slide.notes_slide.notes_text_frame.text = "演讲者备注"
    buf = io.BytesIO()
    prs.save(buf)
    ex = extract(buf.getvalue(), "g.pptx")
    assert [(p.label, p.text) for p in ex.parts] == [("slide 1", "组合内文字\n甲 乙"), ("notes 1", "演讲者备注")]
    assert "演讲者备注" not in extract(buf.getvalue(), "g.pptx", ExtractConfig(pptx="slides")).text


# --- PDF, text, markdown, zip names ---------------------------------------------------------------


def test_join_wraps() -> None:
    full = "统一云盘平台" * 8
    assert join_wraps(f"{full}\n继续这一段。\n短标题\n下一段") == f"{full}继续这一段。\n短标题\n下一段"
    words = "alpha beta gamma delta " * 3
    assert join_wraps(f"{words.strip()}\nwrapped tail\nShort\nline") == f"{words.strip()} wrapped tail\nShort\nline"
    assert join_wraps("短\n行") == "短\n行"


def test_pdf_layout_strategy() -> None:
    ex = extract(render(small_spec("pdf")), "a.pdf", ExtractConfig(pdf="layout"))
    assert ex.strategy == "layout" and "收入增长百分之十二。" in ex.text


def test_text_encodings() -> None:
    gbk = "国标编码的文本文件。".encode("gb18030")
    ex = extract(gbk, "a.txt")
    assert ex.text == "国标编码的文本文件。" and ex.warnings == ["decoded as gb18030"]
    assert extract("带BOM的UTF-16".encode("utf-16"), "b.txt").text == "带BOM的UTF-16"
    assert extract(b"line1\r\nline2\r\n", "c.txt").text == "line1\nline2"


def test_markdown_plain_and_raw() -> None:
    md = "# 标题 #\n\n> 引用\n\n| 甲 | 乙\\|丙 |\n|---|---|\n| 1 | 2 |\n\n\\# 不是标题\n".encode()
    assert extract(md, "a.md").text == "标题\n\n引用\n\n甲 乙|丙\n1 2\n\n# 不是标题"
    assert extract(md, "a.md", ExtractConfig(md="raw")).text.startswith("# 标题 #")


def test_zip_gbk_member_names_comment_and_listing() -> None:
    data = bytearray(make_zip([("ABCDEF.md", "中文内容".encode())], comment="压缩包说明".encode()))
    gbk_name = "报告书".encode("gbk")  # 6 bytes, like ABCDEF
    data = bytes(data).replace(b"ABCDEF", gbk_name)
    info = zipfile.ZipFile(io.BytesIO(data)).infolist()[0]
    assert not info.flag_bits & 0x800
    ex = extract(data, "win.zip")
    assert [(p.label, p.text) for p in ex.parts] == [
        ("archive comment", "压缩包说明"),
        ("member 报告书.md", "中文内容"),
    ]
    listing = extract(data, "win.zip", ExtractConfig(zip="names-only"))
    assert listing.parts[-1].label == "listing" and listing.parts[-1].text == "报告书.md"
