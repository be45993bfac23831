"""Excel via openpyxl (read-only, cached values): one part per worksheet, ``sheet <name>``.

A part's text is the sheet name, then one line per non-empty row with its cells joined by
spaces. Declared dimensions are ignored (a sheet claiming XFD1048576 is not padded). The
workbook title, if set, is a part ``document properties``. At most ``MAX_CELLS`` cells are read.
"""

from __future__ import annotations

import io
from datetime import date, datetime, time

from openpyxl import load_workbook

from drivebench.extract.base import ExtractConfig, Part
from drivebench.extract.ooxml import guard_package

MAX_CELLS = 2_000_000


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime) and value.time() == time(0):
        return value.date().isoformat()
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value).strip()


def extract_xlsx(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    guard_package(data, filename, "xlsx", config)
    wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    parts: list[Part] = []
    warnings: list[str] = []
    budget = MAX_CELLS
    try:
        title = (wb.properties.title or "").strip() if wb.properties else ""
        if title:
            parts.append(Part("document properties", title))
        for ws in wb.worksheets:
            if hasattr(ws, "reset_dimensions"):
                ws.reset_dimensions()
            lines = [ws.title]
            for row in ws.iter_rows(values_only=True):
                budget -= len(row)
                if budget < 0:
                    warnings.append(f"stopped after {MAX_CELLS} cells")
                    break
                line = " ".join(t for t in (_cell_text(v) for v in row) if t)
                if line:
                    lines.append(line)
            parts.append(Part(f"sheet {ws.title}", "\n".join(lines)))
            if budget < 0:
                break
    finally:
        wb.close()
    return parts, warnings
