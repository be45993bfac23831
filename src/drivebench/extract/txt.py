"""Plain text: decoded (UTF-8, UTF-16 with BOM, else GB18030), newlines normalised. One part, ``body``."""

from __future__ import annotations

from drivebench.extract.base import ExtractConfig, ExtractionError, Part
from drivebench.extract.textcodec import decode_text


def extract_txt(data: bytes, filename: str, strategy: str, config: ExtractConfig) -> tuple[list[Part], list[str]]:
    decoded = decode_text(data)
    if decoded is None:
        raise ExtractionError("corrupt-text", f"{filename!r} is not decodable text")
    text, encoding = decoded
    warnings = [] if encoding.startswith("utf-8") else [f"decoded as {encoding}"]
    return [Part("body", text.strip("\n"))], warnings
