"""Word writer (python-docx): Title, Heading 1 per section, paragraphs, a grid table, notes in italics.

Pinned: core properties (author, created, modified, lastModifiedBy, revision) and every zip
entry's date_time, via ``pin_package``.
"""

from __future__ import annotations

import io

from docx import Document
from docx.oxml.ns import qn
from docx.shared import Pt

from drivebench.corpora.render._fixed import DEFAULT_AUTHOR, FIXED_NAIVE
from drivebench.corpora.render._ooxml import pin_package
from drivebench.corpora.render.spec import DocSpec

_EAST_ASIA_FONT = "SimSun"


def render_docx(spec: DocSpec) -> bytes:
    doc = Document()
    normal = doc.styles["Normal"]
    normal.font.size = Pt(11)
    rpr = normal.element.get_or_add_rPr()
    rfonts = rpr.get_or_add_rFonts()
    rfonts.set(qn("w:eastAsia"), _EAST_ASIA_FONT)

    who = spec.author or DEFAULT_AUTHOR
    props = doc.core_properties
    props.title = spec.title
    props.author = who
    props.last_modified_by = who
    props.created = FIXED_NAIVE
    props.modified = FIXED_NAIVE
    props.revision = 1
    props.language = spec.language
    props.comments = ""

    doc.add_heading(spec.title, level=0)
    if spec.author:
        doc.add_paragraph(spec.author)
    for key, value in spec.title_block.items():
        doc.add_paragraph(f"{key}: {value}")
    for section in spec.sections:
        doc.add_heading(section.heading, level=1)
        for para in section.paragraphs:
            doc.add_paragraph(para)
        if section.table:
            width = max(len(r) for r in section.table)
            table = doc.add_table(rows=len(section.table), cols=width)
            table.style = "Table Grid"
            for i, row in enumerate(section.table):
                for j, value in enumerate(row):
                    table.cell(i, j).text = value
        if section.notes:
            doc.add_paragraph().add_run(section.notes).italic = True

    buf = io.BytesIO()
    doc.save(buf)
    return pin_package(buf.getvalue(), who)
