"""Make a spec's strings safe for every format before rendering.

Removed: C0 control characters other than tab and newline, DEL, lone surrogates and the
non-characters U+FFFE/U+FFFF (illegal in XML, so in docx/xlsx/pptx, and line-breaking in DXF).
CR LF and CR become LF. Nothing else changes, so ``plain_text()`` of a clean spec is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def clean(text: str) -> str:
    return _ILLEGAL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _section(s: Section) -> Section:
    return Section(
        heading=clean(s.heading),
        paragraphs=[clean(p) for p in s.paragraphs],
        table=[[clean(c) for c in row] for row in s.table if row] if s.table else None,
        notes=clean(s.notes) if s.notes is not None else None,
    )


def clean_spec(spec: DocSpec) -> DocSpec:
    """A copy of ``spec`` with every string cleaned and empty table rows dropped."""
    return replace(
        spec,
        title=clean(spec.title),
        author=clean(spec.author) if spec.author is not None else None,
        sections=[_section(s) for s in spec.sections],
        title_block={clean(k): clean(v) for k, v in spec.title_block.items()},
        layers=[clean(name) for name in spec.layers],
        members=[ZipMember(m.name, clean_spec(m.spec)) for m in spec.members],
    )
