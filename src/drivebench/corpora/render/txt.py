"""Plain-text writer: title, underlined headings, paragraphs, tab-separated table rows, notes."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec


def render_txt(spec: DocSpec) -> bytes:
    lines: list[str] = [spec.title, "=" * 20, ""]
    if spec.author:
        lines += [spec.author, ""]
    if spec.title_block:
        lines += [f"{k}: {v}" for k, v in spec.title_block.items()] + [""]
    for section in spec.sections:
        lines += [section.heading, "-" * 20, ""]
        for para in section.paragraphs:
            lines += [para, ""]
        if section.table:
            lines += ["\t".join(row) for row in section.table] + [""]
        if section.notes:
            lines += [section.notes, ""]
    return ("\n".join(lines).rstrip("\n") + "\n").encode("utf-8")
