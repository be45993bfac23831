"""The dispatcher: size limit, type detection, the per-type extractor, fail-closed error mapping."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from drivebench.extract.base import ExtractConfig, Extraction, ExtractionError, Part, join_parts
from drivebench.extract.detect import detect_type
from drivebench.extract.zipguard import Budget

Extractor = Callable[[bytes, str, str, ExtractConfig], tuple[list[Part], list[str]]]

# Each format's module is imported on first use: the parsers (ezdxf, pypdf, python-pptx, openpyxl) take over a
# second to import, which every command and server start would pay whether or not it reads a file.
EXTRACTOR_MODULES: dict[str, str] = {
    "pdf": "drivebench.extract.pdf:extract_pdf",
    "docx": "drivebench.extract.docx:extract_docx",
    "xlsx": "drivebench.extract.xlsx:extract_xlsx",
    "pptx": "drivebench.extract.pptx:extract_pptx",
    "dxf": "drivebench.extract.dxf:extract_dxf",
    "md": "drivebench.extract.md:extract_md",
    "txt": "drivebench.extract.txt:extract_txt",
    "zip": "drivebench.extract.zip:extract_zip",
}
EXTRACTORS: dict[str, Extractor] = {}  # filled as formats are first read (tests may put their own in)


def _extractor(file_type: str) -> Callable[..., tuple[list[Part], list[str]]]:
    found = EXTRACTORS.get(file_type)
    if found is None:
        module, name = EXTRACTOR_MODULES[file_type].split(":")
        found = EXTRACTORS[file_type] = getattr(importlib.import_module(module), name)
    return found


_CORRUPT = {"md": "corrupt-text", "txt": "corrupt-text"}

_DEFAULT = ExtractConfig()


def extract(data: bytes, filename: str, config: ExtractConfig = _DEFAULT) -> Extraction:
    """Extract the text of one file. Raises ``ExtractionError`` (never anything else) when it cannot."""
    return _extract(data, filename, config, depth=0, budget=Budget(config.zip_max_total_bytes))


def _extract(data: bytes, filename: str, config: ExtractConfig, depth: int, budget: Budget) -> Extraction:
    if len(data) > config.max_file_bytes:
        raise ExtractionError("too-large", f"{filename!r} has {len(data)} bytes (limit {config.max_file_bytes})")
    file_type = detect_type(data, filename)
    strategy = config.strategy(file_type)
    extractor = _extractor(file_type)  # outside the try: a parser that cannot be imported is no corrupt file
    try:
        if file_type == "zip":
            parts, warnings = extractor(data, filename, strategy, config, depth + 1, budget, _member(config))
        else:
            parts, warnings = extractor(data, filename, strategy, config)
    except ExtractionError:
        raise
    except Exception as exc:  # fail closed: any parser failure becomes a reason
        reason = _CORRUPT.get(file_type, f"corrupt-{file_type}")
        raise ExtractionError(reason, f"{filename!r}: {type(exc).__name__}: {exc}") from exc
    return Extraction(join_parts(parts), parts, file_type, strategy, warnings)


def _member(config: ExtractConfig) -> Callable[[bytes, str, int, Budget], Extraction]:
    def run(data: bytes, name: str, depth: int, budget: Budget) -> Extraction:
        return _extract(data, name, config, depth, budget)

    return run
