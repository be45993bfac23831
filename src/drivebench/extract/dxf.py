"""DXF via ezdxf, read from bytes (never from a path).

Decoding: binary DXF goes through ezdxf's binary tag loader; ASCII DXF is decoded as UTF-8
(R2007+ and most writers), else with the codepage named by ``$DWGCODEPAGE`` (e.g. ANSI_936 =
GBK). Every string also goes through ``ezdxf.decode_dxf_unicode`` (R12 ``\\U+XXXX`` escapes).

``entities+titleblock`` parts, in this order:

* ``title block``: ATTRIBs of INSERTs whose block or layer name looks like a title block
  (TITLE, 图框, 图签, 标题栏, ...), one ``prompt: value`` line each (prompt from the block's ATTDEF,
  else the tag), plus the block's own static texts that are not a prompt;
* ``layer <name>``: per layer, in order of first appearance, the TEXT, MTEXT (plain text, formatting
  codes stripped), MULTILEADER text, dimension text overrides and the ATTRIBs of other INSERTs,
  from model space and every paper space layout;
* ``block <name>``: TEXT/MTEXT/ATTDEF (prompt and default) of inserted blocks (named, or anonymous
  dynamic-block copies ``*U``), nested inserts included;
* ``layers``: the layer names other than ``0`` and ``Defpoints``.

``filename-only``: one part ``file name`` with the file name stem (what a CAD-blind pipeline sees).
"""

from __future__ import annotations

import io
import re
from pathlib import PurePosixPath
from typing import cast

import ezdxf
from ezdxf.document import Drawing
from ezdxf.entities import AttDef, Dimension, DXFEntity, Insert, MText, MultiLeader, Text
from ezdxf.lldxf.tagger import binary_tags_loader
from ezdxf.tools.codepage import toencoding
from ezdxf.tools.text import plain_mtext

from drivebench.extract.base import ExtractConfig, Part

TITLE_BLOCK_NAME = re.compile(r"title|^tb[_-]|border|frame|图框|图签|标题栏|标题|签署", re.IGNORECASE)
_CODEPAGE = re.compile(rb"\$DWGCODEPAGE\s*\r?\n\s*3\s*\r?\n\s*([A-Za-z0-9_\-]+)")
_SKIP_LAYERS = {"0", "defpoints"}
_MAX_BLOCK_DEPTH = 8
_NO_TEXT_BLOCKS = ("*D", "*MODEL_SPACE", "*PAPER_SPACE", "*T")  # dimension/table graphics, layouts


def _u(text: str) -> str:
    return ezdxf.decode_dxf_unicode(text).strip() if text else ""


def _plain(mtext: str) -> str:
    """MTEXT without its formatting codes, as one string (``split=False``; ezdxf types the result as str | list)."""
    return cast(str, plain_mtext(mtext, split=False))


def load_dxf(data: bytes) -> tuple[Drawing, list[str]]:
    """Parse DXF bytes; returns the document and decoding warnings."""
    if data.startswith(b"AutoCAD Binary DXF"):
        return Drawing.load(binary_tags_loader(data)), []
    warnings: list[str] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        match = _CODEPAGE.search(data[:65536])
        encoding = toencoding(match.group(1).decode("ascii").upper()) if match else "cp1252"
        text = data.decode(encoding, errors="replace")
        warnings.append(f"decoded with {encoding}")
        if "\ufffd" in text:
            warnings.append(f"undecodable bytes replaced ({encoding})")
    return ezdxf.read(io.StringIO(text)), warnings


def _entity_text(entity: DXFEntity) -> str:
    kind = entity.dxftype()
    if kind == "TEXT":
        return _u(cast(Text, entity).plain_text())
    if kind == "MTEXT":
        return _u(cast(str, cast(MText, entity).plain_text(split=False)))  # split=False: one string
    if kind == "ATTDEF":
        return " ".join(t for t in (_u(entity.dxf.get("prompt", "")), _u(cast(AttDef, entity).plain_text())) if t)
    if kind == "DIMENSION" or kind == "ARC_DIMENSION" or kind.endswith("DIMENSION"):
        override = entity.dxf.get("text", "")
        if override and override not in ("<>", " "):
            if "<>" in override:
                try:
                    override = override.replace("<>", f"{cast(Dimension, entity).get_measurement():g}")
                except Exception:
                    override = override.replace("<>", "")
            return _u(_plain(override))
        return ""
    if kind in ("MULTILEADER", "MLEADER"):
        try:
            mtext = cast(MultiLeader, entity).context.mtext
        except AttributeError:
            return ""
        content = mtext.default_content if mtext is not None else ""
        return _u(_plain(content)) if content else ""
    return ""


def _is_title_block(insert: DXFEntity) -> bool:
    return bool(TITLE_BLOCK_NAME.search(insert.dxf.name) or TITLE_BLOCK_NAME.search(insert.dxf.layer))


class _Collector:
    def __init__(self, doc: Drawing) -> None:
        self.doc = doc
        self.title: list[str] = []
        self.layers: dict[str, list[str]] = {}
        self.blocks: dict[str, list[str]] = {}

    def add(self, layer: str, text: str) -> None:
        if text:
            self.layers.setdefault(_u(layer), []).append(text)

    def block_texts(self, name: str, depth: int) -> list[str]:
        """Static texts of a block definition (nested inserts included), computed once per block."""
        if name in self.blocks:
            return self.blocks[name]
        self.blocks[name] = []
        block = self.doc.blocks.get(name)
        texts: list[str] = []
        if block is not None and depth < _MAX_BLOCK_DEPTH:
            for entity in block:
                if entity.dxftype() == "INSERT":
                    texts += [_u(a.dxf.text) for a in cast(Insert, entity).attribs if _u(a.dxf.text)]
                    texts += self.block_texts(entity.dxf.name, depth + 1)
                else:
                    text = _entity_text(entity)
                    if text:
                        texts.append(text)
        self.blocks[name] = texts
        return texts

    def insert(self, entity: DXFEntity) -> None:
        name = entity.dxf.name
        prompts: dict[str, str] = {}
        block = self.doc.blocks.get(name)
        if block is not None:
            for item in block:
                if item.dxftype() == "ATTDEF":
                    prompts[item.dxf.tag] = _u(item.dxf.get("prompt", ""))
        attribs = [(a.dxf.tag, _u(a.dxf.text)) for a in cast(Insert, entity).attribs]
        if _is_title_block(entity):
            for tag, value in attribs:
                if value:
                    self.title.append(f"{prompts.get(tag) or _u(tag)}: {value}")
            shown = set(prompts.values())
            static = [t for t in self.block_texts(name, 0) if t not in shown]
            self.title += [t for t in static if t not in self.title]
            return
        for _tag, value in attribs:
            self.add(entity.dxf.layer, value)
        if not name.upper().startswith(_NO_TEXT_BLOCKS):  # dynamic-block copies (*U) keep their text
            self.block_texts(name, 0)


def extract_dxf(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    if strategy == "filename-only":
        return [Part("file name", PurePosixPath(filename.replace("\\", "/")).stem)], []
    doc, warnings = load_dxf(data)
    collector = _Collector(doc)
    for layout in doc.layouts:
        for entity in layout:
            if entity.dxftype() == "INSERT":
                collector.insert(entity)
            else:
                collector.add(entity.dxf.get("layer", "0"), _entity_text(entity))
    parts: list[Part] = []
    if collector.title:
        parts.append(Part("title block", "\n".join(collector.title)))
    for layer, texts in collector.layers.items():
        parts.append(Part(f"layer {layer}", "\n".join(texts)))
    for name, texts in collector.blocks.items():
        if texts and not TITLE_BLOCK_NAME.search(name):
            parts.append(Part(f"block {_u(name)}", "\n".join(texts)))
    names = [_u(layer.dxf.name) for layer in doc.layers if layer.dxf.name.lower() not in _SKIP_LAYERS]
    if names:
        parts.append(Part("layers", "\n".join(names)))
    return parts, warnings
