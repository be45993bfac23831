"""What to ask the target about a document: its title, and one distinctive sentence of its text (read
through the drive's content endpoint and drivebench's own parsers, so any file type works)."""

from __future__ import annotations

import re

from drivebench.extract.core import extract

_SPLIT = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")


def title_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def distinctive_sentence(data: bytes, name: str) -> str | None:
    """The longest sentence of 12 to 160 characters that is not the title (None when the file yields none)."""
    try:
        text = extract(data, name).text
    except Exception:  # a file the parsers refuse: the title alone is asked
        return None
    title = title_of(name)
    sentences = [s.strip(" #*-\t") for s in _SPLIT.split(text) if s and s.strip()]
    fits = [s for s in sentences if 12 <= len(s) <= 160 and s != title]
    return max(fits, key=len) if fits else None
