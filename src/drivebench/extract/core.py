"""The dispatcher: size limit, type detection, the per-type extractor, fail-closed error mapping."""

from __future__ import annotations

from collections.abc import Callable

from drivebench.extract.base import ExtractConfig, Extraction, ExtractionError, Part, join_parts
from drivebench.extract.detect import detect_type
from drivebench.extract.docx import extract_docx
from drivebench.extract.dxf import extract_dxf
from drivebench.extract.md import extract_md
from drivebench.extract.pdf import extract_pdf
from drivebench.extract.pptx import extract_pptx
from drivebench.extract.txt import extract_txt
from drivebench.extract.xlsx import extract_xlsx
from drivebench.extract.zip import extract_zip
from drivebench.extract.zipguard import Budget

Extractor = Callable[[bytes, str, str, ExtractConfig], tuple[list[Part], list[str]]]

EXTRACTORS: dict[str, Extractor] = {
    "pdf": extract_pdf,
    "docx": extract_docx,
    "xlsx": extract_xlsx,
    "pptx": extract_pptx,
    "dxf": extract_dxf,
    "md": extract_md,
    "txt": extract_txt,
}

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
    try:
        if file_type == "zip":
            parts, warnings = extract_zip(data, filename, strategy, config, depth + 1, budget, _member(config))
        else:
            parts, warnings = EXTRACTORS[file_type](data, filename, strategy, config)
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
