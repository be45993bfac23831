"""Render a ``DocSpec`` to real file bytes: ``render(spec) -> bytes``.

One module per format; ``render`` dispatches on ``spec.file_type``. Output is
deterministic: the same spec gives identical bytes. Every embedded timestamp or
identifier is pinned (``_fixed.FIXED_DATETIME`` = 2024-01-01T00:00:00Z):

==========  ==================================================  =================================================
format      embeds                                              pinned by
==========  ==================================================  =================================================
md, txt     nothing                                             -
docx        docProps/core.xml created/modified/lastModifiedBy/  core properties set explicitly, then
            revision; zip entry date_time                       ``_ooxml.pin_package`` rewrites core.xml and every
                                                                zip entry (fixed date_time, stable order)
xlsx        same as docx (openpyxl stamps modified at save)     same as docx
pptx        same as docx                                        same as docx
pdf         CreationDate, ModDate, trailer /ID                  reportlab ``invariant=1`` (dates 2000-01-01, /ID
                                                                from content); fixed creator/producer
dxf         $TDCREATE/$TDUPDATE (+UTC), $TDINDWG, $TDUSRTIMER,  header vars overwritten while writing (ezdxf's
            $FINGERPRINTGUID, $VERSIONGUID, $HANDSEED, ezdxf    fixed-metadata mode + our values); fixed GUIDs;
            "created/written by" marker, CLASSES order          handles allocated in spec order from a fresh
                                                                document; CLASSES section sorted
zip         member date_time, external attributes               fixed ``ZipInfo.date_time`` and attributes,
                                                                members in spec order
==========  ==================================================  =================================================

Strings are cleaned first (``_clean``: XML-illegal control characters removed, CR LF -> LF,
empty table rows dropped). Chinese round-trips in every format (PDF uses reportlab's built-in CID font STSong-Light).
"""

from __future__ import annotations

from collections.abc import Callable

from drivebench.corpora.render._clean import clean_spec
from drivebench.corpora.render.docx import render_docx
from drivebench.corpora.render.dxf import render_dxf
from drivebench.corpora.render.md import render_md
from drivebench.corpora.render.pdf import render_pdf
from drivebench.corpora.render.pptx import render_pptx
from drivebench.corpora.render.spec import DocSpec, Section, ZipMember
from drivebench.corpora.render.txt import render_txt
from drivebench.corpora.render.xlsx import render_xlsx
from drivebench.corpora.render.zip import render_zip


def _render_zip(spec: DocSpec) -> bytes:
    return render_zip(spec, render)  # members go through ``render`` (and its cleaning) again


RENDERERS: dict[str, Callable[[DocSpec], bytes]] = {
    "md": render_md,
    "txt": render_txt,
    "docx": render_docx,
    "pdf": render_pdf,
    "xlsx": render_xlsx,
    "pptx": render_pptx,
    "dxf": render_dxf,
    "zip": _render_zip,
}


def render(spec: DocSpec) -> bytes:
    """Return the bytes of ``spec`` in the format ``spec.file_type``; ``ValueError`` for an unknown format."""
    try:
        writer = RENDERERS[spec.file_type]
    except KeyError:
        raise ValueError(f"no renderer for file type {spec.file_type!r}") from None
    return writer(clean_spec(spec))


__all__ = ["RENDERERS", "DocSpec", "Section", "ZipMember", "render"]
