"""PowerPoint writer (python-pptx): a title slide, then one slide per section.

Title slide: ``spec.title`` and a subtitle with the author and ``title_block`` lines. Section
slides: title = heading, paragraphs = bullets; a table is placed below the bullets;
``notes`` become the speaker notes. Pinned: core properties and zip entries via ``pin_package``.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from pptx import Presentation

if TYPE_CHECKING:  # the class; pptx.Presentation is the function that opens one
    from pptx.presentation import Presentation as PresentationFile
    from pptx.text.text import TextFrame
from pptx.util import Emu, Pt

from drivebench.corpora.render._fixed import DEFAULT_AUTHOR, FIXED_NAIVE
from drivebench.corpora.render._ooxml import pin_package
from drivebench.corpora.render.spec import DocSpec, Section

_TITLE, _TITLE_AND_CONTENT, _TITLE_ONLY = 0, 1, 5


def _section_slide(prs: PresentationFile, section: Section) -> None:
    layout = prs.slide_layouts[_TITLE_ONLY if section.table else _TITLE_AND_CONTENT]
    slide = prs.slides.add_slide(layout)
    slide.shapes.title.text = section.heading
    width, height = prs.slide_width, prs.slide_height
    assert width is not None and height is not None  # python-pptx's default template sets the slide size
    left, top = Emu(int(width * 0.06)), Emu(int(height * 0.24))
    inner_w = Emu(int(width * 0.88))
    if section.table:
        text_h = Emu(int(height * 0.30)) if section.paragraphs else Emu(0)
        if section.paragraphs:
            frame = slide.shapes.add_textbox(left, top, inner_w, text_h).text_frame
            frame.word_wrap = True
            _fill(frame, section.paragraphs, Pt(16))
        rows, cols = len(section.table), max(len(r) for r in section.table)
        tbl_top = Emu(top + text_h + int(height * 0.02))
        tbl_h = Emu(min(int(height * 0.06) * rows, height - tbl_top - int(height * 0.04)))
        table = slide.shapes.add_table(rows, cols, left, tbl_top, inner_w, tbl_h).table
        for i, row in enumerate(section.table):
            for j, value in enumerate(row):
                table.cell(i, j).text = value
    else:
        _fill(slide.placeholders[1].text_frame, section.paragraphs, None)
    if section.notes:
        slide.notes_slide.notes_text_frame.text = section.notes


def _fill(frame: TextFrame, paragraphs: list[str], size: Pt | None) -> None:
    for i, text in enumerate(paragraphs):
        para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        para.text = text
        if size is not None:
            for run in para.runs:
                run.font.size = size


def render_pptx(spec: DocSpec) -> bytes:
    prs = Presentation()
    who = spec.author or DEFAULT_AUTHOR
    props = prs.core_properties
    props.title = spec.title
    props.author = who
    props.last_modified_by = who
    props.created = FIXED_NAIVE
    props.modified = FIXED_NAIVE
    props.revision = 1
    props.language = spec.language

    first = prs.slides.add_slide(prs.slide_layouts[_TITLE])
    first.shapes.title.text = spec.title
    subtitle = [spec.author] if spec.author else []
    subtitle += [f"{k}: {v}" for k, v in spec.title_block.items()]
    if subtitle:
        first.placeholders[1].text = "\n".join(subtitle)
    else:  # an empty placeholder would show "Click to add subtitle"
        element = first.placeholders[1].element
        element.getparent().remove(element)
    for section in spec.sections:
        _section_slide(prs, section)

    buf = io.BytesIO()
    prs.save(buf)
    return pin_package(buf.getvalue(), who)
