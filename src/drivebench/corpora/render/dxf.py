"""DXF writer (ezdxf, R2010): a real drawing sheet.

* ``BORDER``: sheet border and inner frame (A3 landscape, taller if the annotations need it);
* ``TITLEBLOCK``: the title block, a block definition ``TITLE_BLOCK`` (grid lines, field labels as
  TEXT, one ATTDEF per field whose prompt is the field name) inserted at the lower right with one
  ATTRIB per ``spec.title_block`` field plus the drawing title (tag ``TITLE``, prompt ``图名``);
* one layer per section, ``S01_<heading>`` (unsafe characters replaced): the heading as TEXT,
  paragraphs and notes as MTEXT, table cells as TEXT in a grid;
* ``GEOMETRY`` (and every name in ``spec.layers``): lines, circles, center lines and dimensions,
  sized from a hash of the title so drawings differ but stay deterministic.

Pinned: $TDCREATE/$TDUCREATE/$TDUPDATE/$TDUUPDATE (2024-01-01), $TDINDWG/$TDUSRTIMER (0),
$FINGERPRINTGUID/$VERSIONGUID (fixed GUIDs), the ezdxf marker string; handles are allocated in
a fixed order from a fresh document, so $HANDSEED is a function of the spec; the CLASSES section
is sorted (ezdxf fills it from a set, whose order changes between processes).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import ezdxf
from ezdxf.document import Drawing
from ezdxf.layouts import BlockLayout, Modelspace
from ezdxf.tools.juliandate import juliandate

from drivebench.corpora.render._fixed import FIXED_NAIVE
from drivebench.corpora.render.spec import DocSpec, Section

FINGERPRINT_GUID = "{D81E0B6A-2C3F-4E57-9B1A-000000000001}"
VERSION_GUID = "{D81E0B6A-2C3F-4E57-9B1A-000000000002}"
TITLE_BLOCK_NAME = "TITLE_BLOCK"
STYLE = "CJK"
_UNSAFE_LAYER = re.compile(r'[<>/\\":;?*|=`,\x00-\x1f]')
_write_lock = threading.Lock()

SHEET_W = 420.0
SHEET_H = 297.0
_FRAME_L, _FRAME_M = 25.0, 5.0
_COL_X, _COL_W = 32.0, 190.0
_TB_W, _TB_ROW, _TB_LABEL_W = 180.0, 8.0, 40.0


def safe_layer_name(name: str, fallback: str) -> str:
    """A DXF-legal layer name: unsafe characters become ``_``, at most 60 characters."""
    cleaned = _UNSAFE_LAYER.sub("_", name).strip().strip(".")[:60].strip()
    return cleaned or fallback


def escape_mtext(text: str) -> str:
    """Escape MTEXT control characters so that ``MText.plain_text()`` gives ``text`` back."""
    out = text.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}").replace("^", "^ ")
    out = out.replace("\r\n", "\n").replace("\n", "\\P")
    return _escape_percent(out)


def escape_text(text: str) -> str:
    """Escape a single-line TEXT/ATTRIB value (no newlines, literal ``%%``)."""
    return _escape_percent(" ".join(text.split("\n")))


def _escape_percent(text: str) -> str:
    return text.replace("%", "%%%") if "%%" in text else text


def _seed(spec: DocSpec) -> int:
    return int.from_bytes(hashlib.sha256(spec.title.encode("utf-8")).digest()[:4], "big")


def _estimate_lines(text: str, height: float, width: float) -> int:
    lines = 0
    for raw in text.splitlines() or [""]:
        w = sum(height * (1.0 if ord(ch) > 0x2E7F else 0.62) for ch in raw)
        lines += max(1, math.ceil(w / width))
    return lines


def _section_height(section: Section) -> float:
    h = 5.0 * 1.8
    for para in section.paragraphs + ([section.notes] if section.notes else []):
        h += _estimate_lines(para, 3.5, _COL_W) * 3.5 * 1.7 + 3.0
    h += len(section.table or []) * 6.0 + (3.0 if section.table else 0.0)
    return h + 6.0


def _title_block(doc: Drawing, fields: list[tuple[str, str, str]]) -> BlockLayout:
    block = doc.blocks.new(TITLE_BLOCK_NAME)
    rows = len(fields)
    attribs = {"layer": "TITLEBLOCK", "style": STYLE}
    block.add_lwpolyline([(0, 0), (_TB_W, 0), (_TB_W, rows * _TB_ROW), (0, rows * _TB_ROW)], close=True)
    for i in range(1, rows):
        block.add_line((0, i * _TB_ROW), (_TB_W, i * _TB_ROW))
    block.add_line((_TB_LABEL_W, 0), (_TB_LABEL_W, rows * _TB_ROW))
    for i, (tag, prompt, _value) in enumerate(fields):
        y = (rows - 1 - i) * _TB_ROW + 2.2
        block.add_text(escape_text(prompt), height=3.5, dxfattribs=attribs).set_placement((2.0, y))
        block.add_attdef(tag, (_TB_LABEL_W + 2.0, y), text="", dxfattribs={**attribs, "height": 3.5, "prompt": prompt})
    return block


def _geometry(msp: Modelspace, layer: str, x0: float, y0: float, size: float, holes: int) -> None:
    attribs = {"layer": layer}
    w, h = size, size * 0.6
    msp.add_lwpolyline([(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h)], close=True, dxfattribs=attribs)
    r = min(w / (2 * holes + 2), h / 5)
    for k in range(holes):
        cx = x0 + w * (k + 1) / (holes + 1)
        cy = y0 + h / 2
        msp.add_circle((cx, cy), r, dxfattribs=attribs)
        msp.add_line((cx - 1.5 * r, cy), (cx + 1.5 * r, cy), dxfattribs={**attribs, "linetype": "CENTER"})
        msp.add_line((cx, cy - 1.5 * r), (cx, cy + 1.5 * r), dxfattribs={**attribs, "linetype": "CENTER"})
    msp.add_linear_dim(base=(x0, y0 - 8), p1=(x0, y0), p2=(x0 + w, y0), dimstyle="EZDXF", dxfattribs=attribs).render()
    msp.add_linear_dim(
        base=(x0 + w + 8, y0), p1=(x0 + w, y0), p2=(x0 + w, y0 + h), angle=90, dimstyle="EZDXF", dxfattribs=attribs
    ).render()
    cx = x0 + w / (holes + 1)
    msp.add_diameter_dim(
        center=(cx, y0 + h / 2), radius=r, angle=45, dimstyle="EZDXF", override={"dimtad": 0}, dxfattribs=attribs
    ).render()


def _annotate(msp: Modelspace, section: Section, layer: str, y: float) -> float:
    attribs = {"layer": layer, "style": STYLE}
    msp.add_text(escape_text(section.heading), height=5.0, dxfattribs=attribs).set_placement((_COL_X, y - 5.0))
    y -= 5.0 * 1.8
    for para in section.paragraphs + ([section.notes] if section.notes else []):
        mt = msp.add_mtext(escape_mtext(para), dxfattribs={**attribs, "char_height": 3.5, "width": _COL_W})
        mt.set_location((_COL_X, y))
        y -= _estimate_lines(para, 3.5, _COL_W) * 3.5 * 1.7 + 3.0
    if section.table:
        ncols = max(len(r) for r in section.table)
        cw = _COL_W / ncols
        top = y
        for row in section.table:
            for j, cell in enumerate(row):
                msp.add_text(escape_text(cell), height=3.0, dxfattribs=attribs).set_placement(
                    (_COL_X + j * cw + 1.0, y - 4.5)
                )
            y -= 6.0
            msp.add_line((_COL_X, y), (_COL_X + _COL_W, y), dxfattribs={"layer": layer})
        for j in range(ncols + 1):
            msp.add_line((_COL_X + j * cw, top), (_COL_X + j * cw, y), dxfattribs={"layer": layer})
        y -= 3.0
    return y - 6.0


def _pin_header(doc: Drawing) -> None:
    fixed = juliandate(FIXED_NAIVE)
    for var in ("$TDCREATE", "$TDUCREATE", "$TDUPDATE", "$TDUUPDATE"):
        doc.header[var] = fixed
    doc.header["$TDINDWG"] = 0.0
    doc.header["$TDUSRTIMER"] = 0.0
    doc.header["$FINGERPRINTGUID"] = FINGERPRINT_GUID
    doc.header["$VERSIONGUID"] = VERSION_GUID


@contextmanager
def _fixed_metadata() -> Iterator[None]:
    """ezdxf's fixed-metadata mode: no wall-clock "created/written by ezdxf" markers, constant GUIDs."""
    with _write_lock:
        previous = ezdxf.options.write_fixed_meta_data_for_testing
        ezdxf.options.write_fixed_meta_data_for_testing = True
        try:
            yield
        finally:
            ezdxf.options.write_fixed_meta_data_for_testing = previous


def _write(doc: Drawing) -> bytes:
    """Serialize in fixed-metadata mode, then overwrite the header with our pinned values."""
    original = doc._update_metadata

    def pinned() -> None:
        original()
        _pin_header(doc)

    doc._update_metadata = pinned  # type: ignore[method-assign]  # pins ezdxf's metadata timestamps (reproducible files)
    # ezdxf adds CLASS entries while iterating a set of entity types in use: fix their order.
    doc.classes.add_required_classes(doc.dxfversion)
    doc.classes.classes = OrderedDict(sorted(doc.classes.classes.items()))
    stream = io.StringIO()
    with _fixed_metadata():
        doc.write(stream)
    return stream.getvalue().encode("utf-8")


def render_dxf(spec: DocSpec) -> bytes:
    with _fixed_metadata():
        doc = ezdxf.new("R2010", setup=True, units=4)  # millimetres
    _pin_header(doc)
    doc.styles.new(STYLE, dxfattribs={"font": "simsun.ttc", "width": 1.0})
    doc.layers.add("BORDER", color=7)
    doc.layers.add("TITLEBLOCK", color=7)
    doc.layers.add("GEOMETRY", color=1)
    section_layers: list[str] = []
    for i, section in enumerate(spec.sections, start=1):
        name = f"S{i:02d}_" + safe_layer_name(section.heading, "SECTION")
        section_layers.append(name)
        doc.layers.add(name, color=(i % 6) + 2)
    geometry_layers = ["GEOMETRY"]
    for j, raw in enumerate(spec.layers, start=1):
        name = safe_layer_name(raw, f"LAYER{j}")
        # a name the document holds already (ezdxf's "0" and "Defpoints", ours; DXF layer names are
        # case-insensitive) is not added twice
        if name not in doc.layers:
            geometry_layers.append(name)
            doc.layers.add(name, color=(j % 6) + 1)

    fields = [("TITLE", "图名", spec.title)]
    fields += [(f"F{k:02d}", key, value) for k, (key, value) in enumerate(spec.title_block.items(), start=1)]
    tb_h = len(fields) * _TB_ROW
    needed = sum(_section_height(s) for s in spec.sections) + 2 * _FRAME_M + 10.0
    sheet_h = max(SHEET_H, needed)
    msp = doc.modelspace()

    border = {"layer": "BORDER"}
    msp.add_lwpolyline([(0, 0), (SHEET_W, 0), (SHEET_W, sheet_h), (0, sheet_h)], close=True, dxfattribs=border)
    frame = [
        (_FRAME_L, _FRAME_M),
        (SHEET_W - _FRAME_M, _FRAME_M),
        (SHEET_W - _FRAME_M, sheet_h - _FRAME_M),
        (_FRAME_L, sheet_h - _FRAME_M),
    ]
    msp.add_lwpolyline(frame, close=True, dxfattribs={**border, "const_width": 0.7})

    _title_block(doc, fields)
    ref = msp.add_blockref(TITLE_BLOCK_NAME, (SHEET_W - _FRAME_M - _TB_W, _FRAME_M), dxfattribs={"layer": "TITLEBLOCK"})
    ref.add_auto_attribs({tag: escape_text(value) for tag, _prompt, value in fields})

    y = sheet_h - _FRAME_M - 5.0
    for section, layer in zip(spec.sections, section_layers, strict=True):
        y = _annotate(msp, section, layer, y)

    seed = _seed(spec)
    gx0, gx1 = _COL_X + _COL_W + 15.0, SHEET_W - _FRAME_M - 20.0
    gy_top = sheet_h - _FRAME_M - 20.0
    slot = (gy_top - (_FRAME_M + tb_h + 25.0)) / len(geometry_layers)
    for n, layer in enumerate(geometry_layers):
        size = min(gx1 - gx0, slot / 0.6 - 25.0) * (0.6 + ((seed >> (3 * n)) % 5) / 12.5)
        size = max(size, 20.0)
        holes = 1 + (seed >> (2 * n)) % 4
        _geometry(msp, layer, gx0, gy_top - (n + 1) * slot + 12.0, size, holes)

    doc.header["$EXTMIN"] = (0.0, 0.0, 0.0)
    doc.header["$EXTMAX"] = (SHEET_W, sheet_h, 0.0)
    doc.header["$LIMMIN"] = (0.0, 0.0)
    doc.header["$LIMMAX"] = (SHEET_W, sheet_h)
    return _write(doc)
