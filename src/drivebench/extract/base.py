"""Data types shared by every extractor."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The strategies each file type accepts; the first one is the default.
STRATEGIES: dict[str, tuple[str, ...]] = {
    "pdf": ("text-layer", "layout"),
    "docx": ("paragraphs+tables", "paragraphs"),
    "xlsx": ("cells-per-sheet",),
    "pptx": ("slides+notes", "slides"),
    "dxf": ("entities+titleblock", "filename-only"),
    "zip": ("recurse", "names-only"),
    "md": ("plain", "raw"),
    "txt": ("plain",),
}


@dataclass(frozen=True)
class ExtractConfig:
    """Named preprocessing strategy per file type plus the safety limits; recorded in index metadata.

    Strategies: pdf ``text-layer`` (pypdf's text layer, CJK line wraps re-joined) or ``layout``;
    docx ``paragraphs+tables`` or ``paragraphs``; xlsx ``cells-per-sheet``; pptx ``slides+notes`` or
    ``slides``; dxf ``entities+titleblock`` or ``filename-only`` (the file name stem only: what a
    CAD-blind pipeline sees); zip ``recurse`` or ``names-only``; md ``plain`` (heading/quote markers
    and table pipes stripped) or ``raw``; txt ``plain``.
    """

    pdf: str = "text-layer"
    docx: str = "paragraphs+tables"
    xlsx: str = "cells-per-sheet"
    pptx: str = "slides+notes"
    dxf: str = "entities+titleblock"
    zip: str = "recurse"
    md: str = "plain"
    txt: str = "plain"
    zip_max_depth: int = 3
    zip_max_members: int = 200
    zip_max_total_bytes: int = 50 * 2**20
    zip_max_ratio: float = 200.0
    max_file_bytes: int = 100 * 2**20

    def __post_init__(self) -> None:
        for file_type, allowed in STRATEGIES.items():
            value = getattr(self, file_type)
            if value not in allowed:
                raise ValueError(f"unknown {file_type} strategy {value!r}; expected one of {allowed}")

    def strategy(self, file_type: str) -> str:
        return str(getattr(self, file_type))

    def as_dict(self) -> dict[str, object]:
        return dict(asdict(self))

    @classmethod
    def from_pairs(cls, pairs: list[str]) -> ExtractConfig:
        """``["dxf=filename-only"]`` -> a config with those strategies; ValueError names an unknown type or strategy."""
        values: dict[str, Any] = {}  # each a strategy of STRATEGIES (checked): the field's literal type
        for pair in pairs:
            file_type, sep, strategy = pair.partition("=")
            if not sep or file_type not in STRATEGIES:
                raise ValueError(f"--extract {pair!r}: use TYPE=STRATEGY with TYPE one of {', '.join(STRATEGIES)}")
            if strategy not in STRATEGIES[file_type]:
                raise ValueError(f"--extract {pair!r}: {file_type} strategies are {', '.join(STRATEGIES[file_type])}")
            values[file_type] = strategy
        return cls(**values)


@dataclass
class Part:
    """One labelled unit of a document: ``page 2``, ``sheet 预算``, ``slide 3``, ``notes 3``,
    ``layer ANNOTATIONS``, ``title block``, ``member plans/a.docx``..."""

    label: str
    text: str


@dataclass
class Extraction:
    text: str
    parts: list[Part]
    file_type: str
    strategy: str
    warnings: list[str] = field(default_factory=list)


class ExtractionError(Exception):
    """Extraction refused or failed; ``reason`` is a short stable code (see ``REASONS``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


REASONS: tuple[str, ...] = (
    "empty-file",
    "too-large",
    "unsupported-type",
    "type-mismatch",
    "encrypted",
    "corrupt-pdf",
    "corrupt-docx",
    "corrupt-xlsx",
    "corrupt-pptx",
    "corrupt-dxf",
    "corrupt-zip",
    "corrupt-text",
    "zip-bomb",
    "path-traversal",
    "zip-too-deep",
    "zip-too-many-members",
)

#: Reasons that make a whole archive hostile: raised from inside a zip they reject the archive.
HOSTILE_REASONS: frozenset[str] = frozenset({"zip-bomb", "path-traversal", "zip-too-deep", "zip-too-many-members"})


def join_parts(parts: list[Part]) -> str:
    return "\n\n".join(p.text for p in parts if p.text)
