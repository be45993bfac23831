"""File type detection: the extension says what a file claims to be, the bytes what it is.

``sniff`` classifies the bytes: ``pdf``, ``docx``/``xlsx``/``pptx`` (a zip with
``[Content_Types].xml`` and the part folder), ``zip`` (any other zip), ``broken-zip`` (zip magic
that does not open), ``ole`` (legacy Office or an encrypted OOXML package), ``dxf``
(ASCII group-code structure), ``dxf-binary``, ``dwg``, ``text`` or ``binary``.

``detect_type`` reconciles the two and raises ``ExtractionError``:

* ``empty-file`` for no bytes (or only whitespace for a text format);
* ``unsupported-type`` for an extension no extractor handles;
* ``encrypted`` for an OLE container holding an ``EncryptedPackage`` under an OOXML extension;
* ``type-mismatch`` when the bytes are positively another known format (a PDF named ``.docx``,
  plain text named ``.pdf``); unrecognised binary under a format's extension is instead left to
  the parser, which reports ``corrupt-<type>``.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

from drivebench.extract.base import ExtractionError
from drivebench.extract.textcodec import decode_text

EXTENSIONS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".dxf": "dxf",
    ".zip": "zip",
    ".md": "md",
    ".markdown": "md",
    ".txt": "txt",
    ".text": "txt",
    ".csv": "txt",
    ".log": "txt",
}
OOXML = ("docx", "xlsx", "pptx")
_OOXML_DIRS = {"word/": "docx", "xl/": "xlsx", "ppt/": "pptx"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_BINARY_DXF = b"AutoCAD Binary DXF\r\n\x1a\x00"


def claimed_type(filename: str) -> str | None:
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    return EXTENSIONS.get(suffix)


def _sniff_zip(data: bytes) -> str:
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except Exception:
        return "broken-zip"
    if "[Content_Types].xml" in names:
        for prefix, kind in _OOXML_DIRS.items():
            if any(n.startswith(prefix) for n in names):
                return kind
    return "zip"


def _looks_like_dxf(text: str) -> bool:
    lines = [ln.strip() for ln in text[:4096].split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    if len(lines) < 2 or lines[0] not in ("0", "999"):
        return False
    return "SECTION" in lines[:64] or lines[0] == "999"


def _decode_prefix(data: bytes, limit: int = 65536) -> str | None:
    if len(data) <= limit:
        decoded = decode_text(data)
        return decoded[0] if decoded else None
    for cut in range(4):  # do not judge a multi-byte character cut in half
        decoded = decode_text(data[: limit - cut])
        if decoded is not None:
            return decoded[0]
    return None


def sniff(data: bytes) -> str:
    """Classify ``data`` by its bytes alone (see the module docstring)."""
    at = data[:1024].find(b"%PDF-")
    if at == 0 or (at > 0 and _decode_prefix(data[:at]) is None):
        return "pdf"
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _sniff_zip(data)
    if data.startswith(_OLE_MAGIC):
        return "ole"
    if data.startswith(_BINARY_DXF):
        return "dxf-binary"
    if data[:6] in {b"AC1015", b"AC1018", b"AC1021", b"AC1024", b"AC1027", b"AC1032", b"AC1014", b"AC1012"}:
        return "dwg"
    text = _decode_prefix(data)
    if text is not None:
        return "dxf" if _looks_like_dxf(text) else "text"
    return "binary"


def _is_encrypted_ooxml(data: bytes) -> bool:
    return "EncryptedPackage".encode("utf-16-le") in data


_COMPATIBLE: dict[str, set[str]] = {
    "pdf": {"pdf", "binary"},
    "docx": {"docx", "zip", "broken-zip", "binary"},
    "xlsx": {"xlsx", "zip", "broken-zip", "binary"},
    "pptx": {"pptx", "zip", "broken-zip", "binary"},
    "zip": {"zip", "broken-zip", "binary"},
    "dxf": {"dxf", "dxf-binary", "binary"},
    "md": {"text", "dxf"},
    "txt": {"text", "dxf"},
}


def detect_type(data: bytes, filename: str) -> str:
    """The file type to parse ``data`` as, or ``ExtractionError`` (see the module docstring)."""
    claimed = claimed_type(filename)
    if claimed is None:
        suffix = PurePosixPath(filename.replace("\\", "/")).suffix or "(none)"
        raise ExtractionError("unsupported-type", f"no extractor for extension {suffix} of {filename!r}")
    if not data or (claimed in ("md", "txt") and not data.strip()):
        raise ExtractionError("empty-file", f"{filename!r} is empty")
    actual = sniff(data)
    if actual == "ole" and claimed in OOXML and _is_encrypted_ooxml(data):
        raise ExtractionError("encrypted", f"{filename!r} is a password-protected Office document")
    if actual not in _COMPATIBLE[claimed]:
        raise ExtractionError("type-mismatch", f"{filename!r} is named .{claimed} but its bytes are {actual}")
    return claimed
