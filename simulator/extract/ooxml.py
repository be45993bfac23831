"""Safety check shared by the docx/xlsx/pptx extractors: an OOXML file is a zip, so it can be a bomb."""

from __future__ import annotations

import io
import zipfile

from drivebench.simulator.extract.base import ExtractConfig, ExtractionError
from drivebench.simulator.extract.zipguard import Budget, check_archive

#: OOXML packages legitimately hold many parts (a 300-slide deck has over a thousand).
MAX_PACKAGE_PARTS = 20000


def guard_package(data: bytes, filename: str, file_type: str, config: ExtractConfig) -> None:
    """Reject a package that is not a zip (``corrupt-<type>``) or is hostile (bomb/traversal)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:
        raise ExtractionError(f"corrupt-{file_type}", f"{filename!r} is not a valid package: {exc}") from exc
    with zf:
        check_archive(zf, MAX_PACKAGE_PARTS, config.zip_max_ratio, Budget(config.max_file_bytes), repr(filename))
