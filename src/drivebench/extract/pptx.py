"""PowerPoint via python-pptx: ``slide N`` parts (text frames in shape order, groups recursed,
tables row by row) and, with ``slides+notes``, ``notes N`` parts for speaker notes."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import cast

from pptx import Presentation
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape

from drivebench.extract.base import ExtractConfig, Part
from drivebench.extract.ooxml import guard_package


def _clean(text: str) -> str:
    return text.replace("\v", "\n").replace("\r", "\n").strip()


def _shape_texts(shapes: Iterable[BaseShape]) -> Iterator[str]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes)
            continue
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = _clean(cast(Shape, shape).text_frame.text)
            if text:
                yield text
        if getattr(shape, "has_table", False) and shape.has_table:
            for row in cast(GraphicFrame, shape).table.rows:
                line = " ".join(t for t in (_clean(c.text) for c in row.cells) if t)
                if line:
                    yield line


def extract_pptx(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    guard_package(data, filename, "pptx", config)
    prs = Presentation(io.BytesIO(data))
    parts: list[Part] = []
    for number, slide in enumerate(prs.slides, start=1):
        texts = list(_shape_texts(slide.shapes))
        if texts:
            parts.append(Part(f"slide {number}", "\n".join(texts)))
        if strategy == "slides+notes" and slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = _clean(frame.text) if frame is not None else ""
            if notes:
                parts.append(Part(f"notes {number}", notes))
    return parts, []
