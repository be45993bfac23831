"""Checks that make reading an untrusted zip (an archive, or an OOXML package) safe, in memory.

``check_archive`` inspects the central directory BEFORE anything is decompressed:
member count, path traversal (``..``, absolute paths, drive letters, backslash tricks, NUL),
declared uncompressed sizes against the byte budget, per-member and whole-archive compression
ratios, and overlapping entries (the non-recursive "overlapped files" bomb). ``read_member``
then decompresses in bounded chunks and counts the real bytes, because headers can lie:
more bytes than declared, than the ratio allows, or than the budget left is a ``zip-bomb``.
"""

from __future__ import annotations

import itertools
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass

from drivebench.extract.base import ExtractionError

#: The compression-ratio limit applies to members at least this large; tiny files of one repeated
#: byte legitimately compress by more than 200x and cannot hurt.
RATIO_MIN_BYTES = 1 << 20
_CHUNK = 1 << 16
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class Budget:
    """Decompressed bytes still allowed, shared by an archive and every archive nested in it."""

    remaining: int


def unsafe_name_reason(name: str) -> str | None:
    """Why a member name is a path-traversal risk, or None if it is safe."""
    if "\x00" in name:
        return "contains NUL"
    normalized = name.replace("\\", "/")
    if normalized.startswith("/"):
        return "absolute path"
    if _DRIVE.match(normalized):
        return "drive letter"
    if any(piece == ".." for piece in normalized.split("/")):
        return "parent directory (..)"
    return None


def check_archive(zf: zipfile.ZipFile, max_members: int, max_ratio: float, budget: Budget, what: str) -> None:
    infos = zf.infolist()
    if len(infos) > max_members:
        raise ExtractionError("zip-too-many-members", f"{what} has {len(infos)} members (limit {max_members})")
    for info in infos:
        reason = unsafe_name_reason(info.orig_filename) or unsafe_name_reason(info.filename)
        if reason:
            raise ExtractionError("path-traversal", f"{what} member {info.filename!r}: {reason}")
    declared = sum(i.file_size for i in infos)
    if declared > budget.remaining:
        raise ExtractionError("zip-bomb", f"{what} declares {declared} uncompressed bytes (budget {budget.remaining})")
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= RATIO_MIN_BYTES and ratio > max_ratio:
            raise ExtractionError("zip-bomb", f"{what} member {info.filename!r} ratio {ratio:.0f} > {max_ratio}")
    compressed = sum(i.compress_size for i in infos)
    if declared >= RATIO_MIN_BYTES and declared > max_ratio * max(compressed, 1):
        raise ExtractionError("zip-bomb", f"{what} overall ratio {declared / max(compressed, 1):.0f} > {max_ratio}")
    spans = sorted((i.header_offset, i.header_offset + 30 + _raw_name_len(i) + i.compress_size) for i in infos)
    for (_start, end), (next_start, _next_end) in itertools.pairwise(spans):
        if next_start < end:
            raise ExtractionError("zip-bomb", f"{what} has overlapping members (overlapped-files bomb)")


def _raw_name_len(info: zipfile.ZipInfo) -> int:
    encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
    try:
        return len(info.orig_filename.encode(encoding))
    except UnicodeEncodeError:
        return len(info.orig_filename.encode("utf-8"))


def is_encrypted(info: zipfile.ZipInfo) -> bool:
    return bool(info.flag_bits & 0x1)


def _inflate(raw: bytes, info: zipfile.ZipInfo, cap: int, what: str) -> bytes:
    """Raw-deflate ``raw`` producing at most ``cap`` bytes; more is a bomb."""
    inflater = zlib.decompressobj(-15)
    out = bytearray()
    pending = raw
    while pending and not inflater.eof:
        out += inflater.decompress(pending, _CHUNK)
        pending = inflater.unconsumed_tail
        if len(out) > cap:
            raise ExtractionError("zip-bomb", f"{what} member {info.filename!r} inflates past its limit")
    out += inflater.flush()
    if len(out) > cap:
        raise ExtractionError("zip-bomb", f"{what} member {info.filename!r} inflates past its limit")
    return bytes(out)


def _local_data(archive: bytes, info: zipfile.ZipInfo) -> bytes:
    start = info.header_offset
    header = archive[start : start + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    data_start = start + 30 + name_len + extra_len
    return archive[data_start : data_start + info.compress_size]


def read_member(
    zf: zipfile.ZipFile, archive: bytes, info: zipfile.ZipInfo, max_ratio: float, budget: Budget, what: str
) -> bytes:
    """Decompress one member in memory, counting real bytes (headers can lie).

    More bytes than declared, than ``max_ratio`` times the compressed size (members from
    ``RATIO_MIN_BYTES`` up), or than the budget left is a ``zip-bomb``. Deflated members are
    inflated here with a bounded output; other methods go through ``zipfile`` in bounded reads.
    A CRC mismatch is ``zipfile.BadZipFile`` (corruption, not hostility).
    """
    ratio_cap = max(RATIO_MIN_BYTES, int(max_ratio * max(info.compress_size, 1)))
    cap = min(info.file_size, budget.remaining, ratio_cap)
    if info.compress_type == zipfile.ZIP_DEFLATED:
        out = _inflate(_local_data(archive, info), info, cap, what)
        if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 or size for {info.filename!r}")
    else:
        buf = bytearray()
        with zf.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                buf += chunk
                if len(buf) > cap:
                    raise ExtractionError("zip-bomb", f"{what} member {info.filename!r} inflates past its limit")
        out = bytes(buf)
    budget.remaining -= len(out)
    return out
