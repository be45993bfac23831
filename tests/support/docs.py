"""The documentation as tests read it: a section of README.md or of a docs/ page, found by its heading, and the
fenced code blocks in it. Tests that execute or check documented commands read them through here, so that a
section can move between README.md and docs/ by changing one path in the test."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def page_path(page: str) -> Path:
    """``README.md``, or a docs page by its file name (``mcp.md``, ``docs/mcp.md``)."""
    if page == "README.md":
        return REPO / page
    path = DOCS / page.removeprefix("docs/")
    if not path.is_file():
        raise FileNotFoundError(f"no docs page {path}")
    return path


def page_text(page: str) -> str:
    return page_path(page).read_text(encoding="utf-8")


def _lines_outside_fences(text: str) -> list[tuple[str, bool]]:
    """Each line with whether it lies inside a fenced code block (fence lines count as inside)."""
    out, fence = [], ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence:
            out.append((line, True))
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = ""
        elif match:
            fence = match.group(1)
            out.append((line, True))
        else:
            out.append((line, False))
    return out


def section(page: str, heading: str) -> str:
    """The section of ``page`` under the heading whose text is ``heading`` (any level, not inside a code block),
    up to the next heading of the same or a higher level; the heading line included."""
    lines = _lines_outside_fences(page_text(page))
    start = level = None
    for i, (line, fenced) in enumerate(lines):
        match = None if fenced else _HEADING.match(line)
        if not match:
            continue
        if start is None:
            if match.group(2) == heading:
                start, level = i, len(match.group(1))
        elif len(match.group(1)) <= level:  # type: ignore[operator]
            return "\n".join(line for line, _ in lines[start:i]) + "\n"
    if start is None:
        raise LookupError(f"{page} has no heading {heading!r}")
    return "\n".join(line for line, _ in lines[start:]) + "\n"


def code_blocks(page: str, heading: str, language: str | None = None) -> list[str]:
    """The fenced code blocks of a section, in order, each without its fences (and ending in a newline); only
    those in ``language`` when it is given."""
    blocks, current, lang = [], None, ""
    for line, fenced in _lines_outside_fences(section(page, heading)):
        if not fenced:
            continue
        if current is None:
            match = _FENCE.match(line)
            assert match, line
            current, lang = [], match.group(2)
        elif _FENCE.match(line) and not line.strip().strip("`~"):
            if language is None or lang == language:
                blocks.append("".join(f"{x}\n" for x in current))
            current = None
        else:
            current.append(line)
    return blocks


NOT_TESTED = re.compile(r"^<!--\s*not-tested:\s*(?P<reason>.+?)\s*-->$")


def marked_code_blocks(page: str, heading: str, language: str) -> list[tuple[str, str | None]]:
    """The section's code blocks in ``language``, each with the reason it is not run by the suite: the text of a
    ``<!-- not-tested: REASON -->`` comment on the last non-blank line before its fence, else None (it runs)."""
    reasons: list[str | None] = []
    previous, fenced_before = "", False
    for line, fenced in _lines_outside_fences(section(page, heading)):
        opening = fenced and not fenced_before
        if opening and (match := _FENCE.match(line)) and match.group(2) == language:
            marker = NOT_TESTED.match(previous.strip())
            reasons.append(marker.group("reason") if marker else None)
        if fenced or line.strip():  # a block's own lines stand between it and a marker above it
            previous = "" if fenced else line
        fenced_before = fenced
    blocks = code_blocks(page, heading, language)
    assert len(blocks) == len(reasons), (page, heading)
    return list(zip(blocks, reasons, strict=True))
