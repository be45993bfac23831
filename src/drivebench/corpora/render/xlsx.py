"""Excel writer (openpyxl): one sheet per section.

The sheet name is the heading made legal (no ``[]:*?/\\``, at most 31 characters, unique); if that
changed the heading, the heading itself is written in A1. Paragraphs follow in column A, then the
table rows, then the notes. ``spec.title_block`` (if any) gets a leading sheet ``图签`` of ``key:`` | value rows.
The title goes to the workbook's core properties. Cells are always strings (a leading ``=`` is
not a formula). Pinned: core properties and zip entries via ``pin_package``.
"""

from __future__ import annotations

import io
import re

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.worksheet.worksheet import Worksheet

from drivebench.corpora.render._fixed import DEFAULT_AUTHOR, FIXED_NAIVE
from drivebench.corpora.render._ooxml import pin_package
from drivebench.corpora.render.spec import DocSpec

_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_MAX_CELL = 32767
TITLE_BLOCK_SHEET = "图签"


def sheet_title(heading: str, taken: set[str]) -> str:
    """A legal, unique (case-insensitive) sheet name for ``heading``."""
    base = _BAD_SHEET_CHARS.sub("_", ILLEGAL_CHARACTERS_RE.sub("", heading)).strip().strip("'")[:31] or "Sheet"
    name, n = base, 1
    while name.casefold() in taken or name.casefold() == "history":
        n += 1
        suffix = f" ({n})"
        name = base[: 31 - len(suffix)] + suffix
    taken.add(name.casefold())
    return name


def _put(ws: Worksheet, row: int, col: int, value: str, bold: bool = False) -> None:
    cell = ws.cell(row=row, column=col)
    cell.value = ILLEGAL_CHARACTERS_RE.sub("", value)[:_MAX_CELL]
    cell.data_type = "s"
    if bold:
        cell.font = Font(bold=True)


def render_xlsx(spec: DocSpec) -> bytes:
    wb = Workbook()
    wb.remove(wb.active)
    who = spec.author or DEFAULT_AUTHOR
    props = wb.properties
    props.title = spec.title
    props.creator = who
    props.lastModifiedBy = who
    props.created = FIXED_NAIVE
    props.modified = FIXED_NAIVE
    props.language = spec.language

    taken: set[str] = set()
    if spec.title_block:
        ws = wb.create_sheet(sheet_title(TITLE_BLOCK_SHEET, taken))
        for r, (key, value) in enumerate(spec.title_block.items(), start=1):
            _put(ws, r, 1, f"{key}:", bold=True)
            _put(ws, r, 2, value)
    for section in spec.sections:
        ws = wb.create_sheet(sheet_title(section.heading, taken))
        row = 1
        if ws.title != section.heading:
            _put(ws, row, 1, section.heading, bold=True)
            row += 1
        for para in section.paragraphs:
            _put(ws, row, 1, para)
            row += 1
        for i, cells in enumerate(section.table or []):
            for j, value in enumerate(cells, start=1):
                _put(ws, row, j, value, bold=i == 0)
            row += 1
        if section.notes:
            _put(ws, row, 1, section.notes)
        ws.column_dimensions["A"].width = 40
    if not wb.worksheets:
        wb.create_sheet(sheet_title(spec.title, taken))

    buf = io.BytesIO()
    wb.save(buf)
    return pin_package(buf.getvalue(), who)
