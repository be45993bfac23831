"""Text extraction from drive files: ``extract(data, filename, config) -> Extraction``.

``detect_type`` reconciles the extension with the bytes; each format has its own module and
named strategies (``ExtractConfig``, recorded in index metadata); ``chunking`` splits the result.
Every failure is an ``ExtractionError`` with a short ``reason`` code (``REASONS``); no parser
exception escapes. Zip policy (reject hostile archives whole, skip bad members) is in ``zip``.
"""

from __future__ import annotations

from drivebench.extract.base import (
    HOSTILE_REASONS,
    REASONS,
    STRATEGIES,
    ExtractConfig,
    Extraction,
    ExtractionError,
    Part,
)
from drivebench.extract.chunking import Chunk, chunk_extraction
from drivebench.extract.core import extract
from drivebench.extract.detect import detect_type

__all__ = [
    "HOSTILE_REASONS",
    "REASONS",
    "STRATEGIES",
    "Chunk",
    "ExtractConfig",
    "Extraction",
    "ExtractionError",
    "Part",
    "chunk_extraction",
    "detect_type",
    "extract",
]
