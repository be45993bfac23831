"""What a document says, independent of its file format.

Writers in this package turn a ``DocSpec`` into real file bytes of one format; the
extractors in ``drivebench.extract`` read them back. Each format maps the
spec onto its own natural units:

* ``md``/``txt``/``docx``/``pdf``: title, then each section as a heading, paragraphs and an optional table;
* ``xlsx``: one sheet per section (sheet name = heading), paragraphs in column A, then the table rows;
* ``pptx``: one slide per section (title = heading, paragraphs = bullets, ``notes`` = speaker notes);
* ``dxf``: ``title_block`` fields drawn in a title block, one layer per section holding its paragraphs as
  MTEXT annotations, plus ``layers`` of geometry;
* ``zip``: ``members`` written as files inside the archive.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Section:
    heading: str
    paragraphs: list[str] = field(default_factory=list)
    table: list[list[str]] | None = None
    notes: str | None = None


@dataclass
class ZipMember:
    name: str
    spec: DocSpec


@dataclass
class DocSpec:
    title: str
    file_type: str
    language: str = "zh"
    sections: list[Section] = field(default_factory=list)
    author: str | None = None
    title_block: dict[str, str] = field(default_factory=dict)
    layers: list[str] = field(default_factory=list)
    members: list[ZipMember] = field(default_factory=list)

    def plain_text(self) -> str:
        """Every string of the spec, in order: what a perfect extractor would find."""
        parts = [self.title]
        parts += [f"{k}: {v}" for k, v in self.title_block.items()]
        for s in self.sections:
            parts.append(s.heading)
            parts += s.paragraphs
            for row in s.table or []:
                parts.append(" ".join(row))
            if s.notes:
                parts.append(s.notes)
        for m in self.members:
            parts.append(m.spec.plain_text())
        return "\n".join(p for p in parts if p)
