"""Markdown: ``plain`` strips heading/quote markers and table pipes (cells joined by spaces, the
separator row dropped, ``\\|`` unescaped); ``raw`` keeps the file as it is. One part, ``body``."""

from __future__ import annotations

import re

from drivebench.extract.base import ExtractConfig, ExtractionError, Part
from drivebench.extract.textcodec import decode_text

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ESCAPED_START = re.compile(r"^(\s{0,3})\\([#>|])")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _table_row(line: str) -> str:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    cells = [c.strip().replace("\\|", "|").replace("\\\\", "\\") for c in _CELL_SPLIT.split(inner)]
    return " ".join(c for c in cells if c)


def markdown_to_plain(text: str) -> str:
    out: list[str] = []
    for line in text.split("\n"):
        while _QUOTE.match(line):
            line = _QUOTE.sub("", line, count=1)
        heading = _HEADING.match(line)
        if heading:
            out.append(heading.group(1))
        elif _SEPARATOR.match(line) and "-" in line:
            continue
        elif line.lstrip().startswith("|"):
            out.append(_table_row(line))
        else:
            out.append(_ESCAPED_START.sub(r"\1\2", line))
    return "\n".join(out).strip("\n")


def extract_md(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    decoded = decode_text(data)
    if decoded is None:
        raise ExtractionError("corrupt-text", f"{filename!r} is not decodable text")
    text, encoding = decoded
    warnings = [] if encoding.startswith("utf-8") else [f"decoded as {encoding}"]
    body = text.strip("\n") if strategy == "raw" else markdown_to_plain(text)
    return [Part("body", body)], warnings
