"""PDF writer (reportlab canvas) with the built-in CID font STSong-Light, so Chinese needs no font file.

Lines are wrapped by measured glyph width: at spaces when a line holds words, else at any
character (Chinese has no spaces), never inside a character. Pinned: ``invariant=1``
(fixed CreationDate/ModDate and document ID) plus explicit title/author/creator/producer.
"""

from __future__ import annotations

import io

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from drivebench.corpora.render._fixed import DEFAULT_AUTHOR
from drivebench.corpora.render.spec import DocSpec

FONT = "STSong-Light"
_MARGIN = 56.0
_registered = False


def _ensure_font() -> None:
    global _registered
    if not _registered:
        pdfmetrics.registerFont(UnicodeCIDFont(FONT))
        _registered = True


#: Closing punctuation that must not start a line (kinsoku): it may hang past the margin instead.
NO_LINE_START = set("。，、；：！？）」』》〉】”’.,;:!?)]}%")


def wrap_line(text: str, size: float, width: float) -> list[str]:
    """Split ``text`` into lines no wider than ``width`` points: at spaces when the line holds
    words, else at any character; closing punctuation hangs rather than starting a line."""

    def w(s: str) -> float:
        return pdfmetrics.stringWidth(s, FONT, size)

    lines: list[str] = []
    for raw in text.splitlines() or [""]:
        current = ""
        for ch in raw:
            if w(current + ch) <= width or not current or ch in NO_LINE_START:
                current += ch
                continue
            cut = current.rfind(" ")
            if ch != " " and cut > 0 and current[:cut].strip():
                lines.append(current[:cut].rstrip())
                current = current[cut + 1 :] + ch
            else:
                lines.append(current.rstrip())
                current = "" if ch == " " else ch
        lines.append(current.rstrip())
    return lines


class _Writer:
    def __init__(self, c: canvas.Canvas) -> None:
        self.c = c
        self.page_w, self.page_h = A4
        self.y = self.page_h - _MARGIN

    def block(self, text: str, size: float, gap_after: float) -> None:
        leading = size * 1.45
        for line in wrap_line(text, size, self.page_w - 2 * _MARGIN):
            if self.y - leading < _MARGIN:
                self.c.showPage()
                self.y = self.page_h - _MARGIN
            self.y -= leading
            self.c.setFont(FONT, size)
            self.c.drawString(_MARGIN, self.y, line)
        self.y -= gap_after


def render_pdf(spec: DocSpec) -> bytes:
    _ensure_font()
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1, pageCompression=1)
    c.setTitle(spec.title)
    c.setAuthor(spec.author or DEFAULT_AUTHOR)
    c.setCreator("drivebench")
    c.setProducer("drivebench")
    c.setSubject(spec.title)
    out = _Writer(c)
    out.block(spec.title, 18, 8)
    if spec.author:
        out.block(spec.author, 10, 4)
    for key, value in spec.title_block.items():
        out.block(f"{key}: {value}", 10, 2)
    for section in spec.sections:
        out.block(section.heading, 14, 6)
        for para in section.paragraphs:
            out.block(para, 11, 6)
        for row in section.table or []:
            out.block("  ".join(row), 10, 2)
        if section.notes:
            out.block(section.notes, 10, 6)
    c.showPage()
    c.save()
    return buf.getvalue()
