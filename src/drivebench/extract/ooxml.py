"""Safety check shared by the docx/xlsx/pptx extractors: an OOXML file is a zip, so it can be a bomb."""

from __future__ import annotations

import io
import zipfile

from drivebench.extract.base import ExtractConfig, ExtractionError
from drivebench.extract.zipguard import Budget, check_archive

#: OOXML packages legitimately hold many parts (a 300-slide deck has over a thousand).
MAX_PACKAGE_PARTS = 20000
#: Spreadsheet XML of repeated styled cells legitimately deflates by several hundred times, so the
#: archive ratio limit would reject real workbooks. Deflate cannot exceed ~1032x; the declared-size
#: budget (``max_file_bytes``) is what bounds a package, and zipfile never inflates past it.
PACKAGE_MAX_RATIO = 1000.0


def guard_package(data: bytes, filename: str, file_type: str, config: ExtractConfig) -> None:
    """Reject a package that is not a zip (``corrupt-<type>``) or is hostile (bomb/traversal)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:
        raise ExtractionError(f"corrupt-{file_type}", f"{filename!r} is not a valid package: {exc}") from exc
    with zf:
        budget = Budget(config.max_file_bytes)
        check_archive(zf, MAX_PACKAGE_PARTS, max(PACKAGE_MAX_RATIO, config.zip_max_ratio), budget, repr(filename))
