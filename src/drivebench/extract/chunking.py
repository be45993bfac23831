"""Split an ``Extraction`` into retrieval chunks.

Within each part (a chunk never spans two parts and carries the part's label), text is cut at
sentence boundaries: after Chinese 。！？；(and their ASCII cousins ! ? ;), after a newline, and after
English . ! ? followed by whitespace (closing quotes/brackets stay with their sentence). A
sentence longer than ``max_chars`` is cut hard, but never inside a character: not before a
combining mark, variation selector or zero-width joiner, not between a surrogate pair or CR LF.
Consecutive chunks of a part overlap by at most ``overlap`` characters (the overlap starts at a
sentence or word boundary when the window has one). Chunks are stripped of surrounding
whitespace; nothing is prefixed. ``start``/``end`` are offsets of the chunk in its part's text.
Deterministic; empty text gives no chunks.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from drivebench.extract.base import Extraction

_SENTENCE_END = re.compile(r"[。！？；!?;][”’」』）)\]\"']*|[.!?][”’」』）)\]\"']*(?=\s)|\n")
_JOINERS = {"\u200d", "\u200c"}


@dataclass
class Chunk:
    ordinal: int
    text: str
    part: str
    start: int = 0
    end: int = 0


def _is_cut_ok(text: str, i: int) -> bool:
    """May ``text`` be cut between ``text[i-1]`` and ``text[i]``?"""
    if i <= 0 or i >= len(text):
        return True
    ch, prev = text[i], text[i - 1]
    if unicodedata.combining(ch) or ch in _JOINERS or prev in _JOINERS:
        return False
    if "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef" or "\U0001f3fb" <= ch <= "\U0001f3ff":
        return False
    if "\udc00" <= ch <= "\udfff":
        return False
    return not (prev == "\r" and ch == "\n")


def _safe_cut(text: str, i: int, floor: int) -> int:
    """The nearest legal cut at or before ``i`` but after ``floor``; ``i`` itself if there is none
    (a single "character" longer than a chunk, e.g. hundreds of stacked combining marks)."""
    j = i
    while j > floor and not _is_cut_ok(text, j):
        j -= 1
    return j if j > floor else i


def sentence_boundaries(text: str) -> list[int]:
    """Offsets just after each sentence end (ascending), always ending with ``len(text)``."""
    ends = sorted({m.end() for m in _SENTENCE_END.finditer(text)} | {len(text)})
    return [e for e in ends if e > 0]


def _overlap_start(text: str, start: int, end: int, overlap: int, bounds: list[int]) -> int:
    """Where the chunk after ``text[start:end]`` starts: at most ``overlap`` back, never before ``start``."""
    if overlap <= 0:
        return end
    lo = max(end - overlap, start)
    k = bisect_right(bounds, lo)
    if k < len(bounds) and bounds[k] < end:
        return bounds[k]
    window = text[lo:end]
    space = re.search(r"\s", window)
    if space and space.end() < len(window):
        return lo + space.end()
    cut = max(lo, start + 1)  # the next chunk starts after this one's start, or chunking never advances
    while cut < end and not _is_cut_ok(text, cut):
        cut += 1
    return cut


def split_text(text: str, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """Spans ``(start, end)`` covering ``text``; each at most ``max_chars`` long."""
    n = len(text)
    if not text.strip():
        return []
    bounds = sentence_boundaries(text)
    spans: list[tuple[int, int]] = []
    start, covered = 0, 0
    while covered < n:
        limit = start + max_chars
        if limit >= n:
            end = n
        else:
            k = bisect_right(bounds, limit) - 1
            end = bounds[k] if k >= 0 and bounds[k] > covered else _safe_cut(text, limit, covered)
        spans.append((start, end))
        covered = end
        if end >= n:
            break
        start = _overlap_start(text, start, end, overlap, bounds)
    return spans


def chunk_extraction(ex: Extraction, max_chars: int = 500, overlap: int = 60) -> list[Chunk]:
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if not 0 <= overlap < max_chars:
        raise ValueError("overlap must be in [0, max_chars)")
    chunks: list[Chunk] = []
    for part in ex.parts:
        for start, end in split_text(part.text, max_chars, overlap):
            piece = part.text[start:end]
            stripped = piece.strip()
            if not stripped:
                continue
            lead = len(piece) - len(piece.lstrip())
            s = start + lead
            chunks.append(Chunk(len(chunks), stripped, part.label, s, s + len(stripped)))
    return chunks
