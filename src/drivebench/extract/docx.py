"""Word via python-docx: the body in document order (paragraphs, tables row by row with cells
joined by spaces, content controls, nested tables), then headers and footers.

Parts: ``body`` and, if any, ``headers and footers``. ``paragraphs`` skips tables.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from docx import Document
from docx.oxml.ns import qn
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph
from lxml.etree import _Element

from drivebench.extract.base import ExtractConfig, Part
from drivebench.extract.ooxml import guard_package

_P, _TBL, _SDT, _SDT_CONTENT = qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent")


def _blocks(container: _Element, parent: object, tables: bool) -> Iterator[str]:
    for child in container.iterchildren():
        if child.tag == _P:
            yield Paragraph(child, parent).text  # type: ignore[arg-type]  # python-docx wants its story-part protocol; any parent works
        elif child.tag == _TBL and tables:
            yield from _table(Table(child, parent), tables)  # type: ignore[arg-type]  # python-docx wants its story-part protocol; any parent works
        elif child.tag == _SDT:
            content = child.find(_SDT_CONTENT)
            if content is not None:
                yield from _blocks(content, parent, tables)


def _table(table: Table, tables: bool) -> Iterator[str]:
    for row in table.rows:
        seen: set[int] = set()
        cells: list[str] = []
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell repeats
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(t for t in _cell_lines(cell, tables) if t.strip()))
        line = " ".join(c for c in cells if c)
        if line:
            yield line


def _cell_lines(cell: _Cell, tables: bool) -> Iterator[str]:
    yield from _blocks(cell._tc, cell, tables)


def extract_docx(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    guard_package(data, filename, "docx", config)
    doc = Document(io.BytesIO(data))
    tables = strategy == "paragraphs+tables"
    body = [line for line in _blocks(doc.element.body, doc, tables) if line.strip()]
    parts = [Part("body", "\n".join(body))]
    extra: list[str] = []
    for section in doc.sections:
        for hf in (section.header, section.footer):
            if hf.is_linked_to_previous:
                continue
            for line in _blocks(hf._element, hf, tables):
                if line.strip() and line not in extra:
                    extra.append(line)
    if extra:
        parts.append(Part("headers and footers", "\n".join(extra)))
    return parts, []
