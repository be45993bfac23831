"""Decode bytes that should be text: UTF-8 (with or without BOM), UTF-16 with BOM, then GB18030."""

from __future__ import annotations

import codecs

_CONTROL = {c for c in range(32) if c not in (9, 10, 12, 13)}


def decode_text(data: bytes) -> tuple[str, str] | None:
    """Return ``(text, encoding)`` or ``None`` if ``data`` does not look like text."""
    if data.startswith(codecs.BOM_UTF8):
        candidates = ["utf-8-sig"]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        candidates = ["utf-16"]
    else:
        if b"\x00" in data[:8192]:
            return None
        candidates = ["utf-8", "gb18030"]
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        sample = text[:8192]
        if sample and sum(ord(ch) in _CONTROL for ch in sample) / len(sample) > 0.02:
            return None
        return text.replace("\r\n", "\n").replace("\r", "\n"), encoding
    return None
