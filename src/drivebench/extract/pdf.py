"""PDF via pypdf: one part per page with text (``page N``, 1-based).

``text-layer`` uses pypdf's plain extraction and re-joins lines the writer wrapped (see
``join_wraps``: Chinese has no spaces, so a writer wraps mid-word; the break is layout, not content);
``layout`` uses pypdf's layout mode as it is. A file without ``%%EOF`` near its end is truncated
(``corrupt-pdf``); an encrypted file that does not open with the empty password is ``encrypted``.
"""

from __future__ import annotations

import io
import re
import unicodedata

from pypdf import PdfReader

from drivebench.extract.base import ExtractConfig, ExtractionError, Part

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
#: A line at least this share of the page's widest line is "full": the next line continues it.
FULL_LINE = 0.85
_MIN_WIDTH = 20


def _width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in line)


def join_wraps(text: str) -> str:
    """Re-join lines a writer wrapped: a full-width line followed by more text on the next line.

    Between two CJK characters the break is dropped (Chinese has no spaces); otherwise it becomes
    a space. Short lines (headings, table rows, paragraph ends) keep their line breaks.
    """
    lines = text.split("\n")
    widest = max((_width(line.rstrip()) for line in lines), default=0)
    if widest < _MIN_WIDTH:
        return text
    out = [lines[0]]
    last = lines[0].rstrip()  # the previous physical line, not what it was joined into
    for line in lines[1:]:
        prev = out[-1].rstrip()
        body = line.strip()
        if prev and body and _width(last) >= FULL_LINE * widest:
            joint = "" if _CJK.match(prev[-1]) and _CJK.match(body[0]) else " "
            out[-1] = prev + joint + line.lstrip()
        else:
            out.append(line)
        last = line.rstrip()
    return "\n".join(out)


def extract_pdf(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    if b"%%EOF" not in data[-2048:]:
        raise ExtractionError("corrupt-pdf", f"{filename!r} is truncated (no %%EOF trailer)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception as exc:
                raise ExtractionError("encrypted", f"{filename!r} is encrypted: {exc}") from exc
            if not opened:
                raise ExtractionError("encrypted", f"{filename!r} needs a password")
        pages = list(reader.pages)
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError("corrupt-pdf", f"{filename!r}: {type(exc).__name__}: {exc}") from exc
    parts: list[Part] = []
    warnings: list[str] = []
    for number, page in enumerate(pages, start=1):
        try:
            if strategy == "layout":
                text = page.extract_text(extraction_mode="layout")
            else:
                text = join_wraps(page.extract_text())
        except Exception as exc:
            warnings.append(f"page {number} unreadable: {type(exc).__name__}: {exc}")
            continue
        text = text.strip()
        if text:
            parts.append(Part(f"page {number}", text))
    if not parts:
        warnings.append("no text layer (scanned or image-only PDF?)")
    return parts, warnings
