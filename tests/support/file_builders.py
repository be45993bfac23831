"""Builders of well-formed and hostile inputs for the extractor tests (all in memory)."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from drivebench.corpora.render import DocSpec, Section
from drivebench.extract import ExtractConfig, ExtractionError, extract


def small_spec(file_type: str, title: str = "季度报告") -> DocSpec:
    return DocSpec(
        title,
        file_type,
        sections=[
            Section("概述", ["收入增长百分之十二。", "Revenue grew 12%."], table=[["项目", "金额"], ["设备", "80"]])
        ],
    )


def make_zip(members: list[tuple[str, bytes]], comment: bytes = b"", compress: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=compress)
        zf.comment = comment
    return buf.getvalue()


def patch_sizes(archive: bytes, fake_size: int) -> bytes:
    """Make every header lie: declared uncompressed size ``fake_size`` (local and central), CRC kept."""
    out = bytearray(archive)
    pos = 0
    while (pos := out.find(b"PK\x03\x04", pos)) != -1:
        struct.pack_into("<I", out, pos + 22, fake_size)
        pos += 4
    pos = 0
    while (pos := out.find(b"PK\x01\x02", pos)) != -1:
        struct.pack_into("<I", out, pos + 24, fake_size)
        pos += 4
    return bytes(out)


def duplicate_central_entry(archive: bytes, new_name: bytes) -> bytes:
    """Add a second central-directory entry pointing at the first member's data (overlapped files)."""
    eocd = archive.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack("<II", archive[eocd + 12 : eocd + 20])
    first = archive[cd_offset : cd_offset + 46]
    name_len, extra_len, comment_len = struct.unpack("<HHH", first[28:34])
    entry = bytearray(archive[cd_offset : cd_offset + 46 + name_len + extra_len + comment_len])
    struct.pack_into("<H", entry, 28, len(new_name))
    entry = entry[:46] + new_name + entry[46 + name_len :]
    central = archive[cd_offset : cd_offset + cd_size] + bytes(entry)
    count = struct.unpack("<H", archive[eocd + 10 : eocd + 12])[0] + 1
    tail = bytearray(archive[eocd:])
    struct.pack_into("<HHII", tail, 8, count, count, len(central), cd_offset)
    return archive[:cd_offset] + central + bytes(tail)


def reason_of(data: bytes, name: str, config: ExtractConfig | None = None) -> str:
    with pytest.raises(ExtractionError) as info:
        extract(data, name, config or ExtractConfig())
    return info.value.reason
