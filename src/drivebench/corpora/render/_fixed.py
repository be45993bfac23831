"""Pinned values embedded in rendered files, so that one spec always gives the same bytes."""

from __future__ import annotations

from datetime import UTC, datetime

#: Every embedded creation/modification time.
FIXED_DATETIME: datetime = datetime(2024, 1, 1, 0, 0, 0, tzinfo=UTC)
#: The same moment as a naive datetime (what python-docx/openpyxl/python-pptx expect).
FIXED_NAIVE: datetime = FIXED_DATETIME.replace(tzinfo=None)
#: Zip entry timestamp (zip stores local time without zone, 2-second resolution, >= 1980).
ZIP_DATE_TIME: tuple[int, int, int, int, int, int] = (2024, 1, 1, 0, 0, 0)
#: Who last modified an office document when no author is given.
DEFAULT_AUTHOR: str = "drivebench"
