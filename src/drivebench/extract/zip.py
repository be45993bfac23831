"""Zip archives, entirely in memory (no member is ever written to disk).

Policy: the ARCHIVE is judged first, then each MEMBER.

* Hostile archive -> the whole archive is rejected: too many members (``zip-too-many-members``),
  a traversal name anywhere (``path-traversal``), declared sizes/ratios over the limits, overlapping
  entries or a member inflating past its declared size/ratio/budget (``zip-bomb``), nesting deeper
  than ``zip_max_depth`` archives (``zip-too-deep``). These reasons propagate out of nested
  archives too. Rationale: these are attacks, not accidents; an archive built to exhaust or escape
  the extractor should not be half-indexed, and a partial result would hide the attack.
* Bad member -> skipped with a warning, the rest extracted: corrupt or mismatched content,
  unsupported types, empty or oversized files, encrypted entries, CRC errors. These are common in
  real archives (one broken attachment) and say nothing about the others. An archive whose content
  members are all encrypted is ``encrypted``.

Depth: the outermost archive is depth 1; an archive nested at depth > ``zip_max_depth`` is rejected.
The decompressed-byte budget (``zip_max_total_bytes``) is shared by an archive and all its nested ones.

Part labels: ``member <path>`` when the member yields one part, else ``member <path> | <part>``;
members of a nested zip read ``member outer.zip/inner.md``. A non-empty archive comment is a part
``archive comment``. ``names-only`` gives one part ``listing`` with the member names.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

from drivebench.extract.base import (
    HOSTILE_REASONS,
    ExtractConfig,
    Extraction,
    ExtractionError,
    Part,
)
from drivebench.extract.detect import claimed_type
from drivebench.extract.textcodec import decode_text
from drivebench.extract.zipguard import Budget, check_archive, is_encrypted, read_member

#: ``(data, name, depth, budget) -> Extraction`` for one member; raises ``ExtractionError``.
MemberExtractor = Callable[[bytes, str, int, Budget], Extraction]


def member_name(info: zipfile.ZipInfo) -> str:
    """The member's name, re-decoded as UTF-8 or GB18030 when the UTF-8 flag is unset (Windows zips)."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        raw = info.filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return info.filename


def _comment(zf: zipfile.ZipFile) -> str:
    decoded = decode_text(zf.comment) if zf.comment else None
    return decoded[0].strip() if decoded else ""


def _member_parts(name: str, ex: Extraction) -> list[Part]:
    if ex.file_type == "zip":
        out = []
        for part in ex.parts:
            if part.label.startswith("member "):
                out.append(Part(f"member {name}/{part.label[len('member ') :]}", part.text))
            else:
                out.append(Part(f"member {name} | {part.label}", part.text))
        return out
    if len(ex.parts) == 1:
        return [Part(f"member {name}", ex.parts[0].text)]
    return [Part(f"member {name} | {p.label}", p.text) for p in ex.parts]


def extract_zip(
    data: bytes,
    filename: str,
    strategy: str,
    config: ExtractConfig,
    depth: int,
    budget: Budget,
    extract_member: MemberExtractor,
) -> tuple[list[Part], list[str]]:
    if depth > config.zip_max_depth:
        raise ExtractionError(
            "zip-too-deep", f"{filename!r} is nested {depth} archives deep (limit {config.zip_max_depth})"
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:
        raise ExtractionError("corrupt-zip", f"{filename!r}: {exc}") from exc
    with zf:
        check_archive(zf, config.zip_max_members, config.zip_max_ratio, budget, repr(filename))
        infos = [i for i in zf.infolist() if not i.is_dir()]
        parts: list[Part] = []
        comment = _comment(zf)
        if comment:
            parts.append(Part("archive comment", comment))
        if strategy == "names-only":
            parts.append(Part("listing", "\n".join(member_name(i) for i in infos)))
            return parts, []
        warnings: list[str] = []
        encrypted = 0
        for info in infos:
            name = member_name(info)
            skip = _precheck(info, name, config)
            if skip:
                encrypted += skip == "encrypted"
                warnings.append(f"member {name} skipped: {skip}")
                continue
            try:
                raw = read_member(zf, data, info, config.zip_max_ratio, budget, repr(filename))
            except ExtractionError:
                raise
            except Exception as exc:
                warnings.append(f"member {name} skipped: corrupt-zip: {type(exc).__name__}: {exc}")
                continue
            try:
                ex = extract_member(raw, name, depth, budget)
            except ExtractionError as exc:
                if exc.reason in HOSTILE_REASONS:
                    raise ExtractionError(exc.reason, f"{filename!r} member {name!r}: {exc.message}") from exc
                warnings.append(f"member {name} skipped: {exc.reason}: {exc.message}")
                continue
            parts += _member_parts(name, ex)
            warnings += [f"member {name}: {w}" for w in ex.warnings]
        if infos and encrypted == len(infos):
            raise ExtractionError("encrypted", f"every member of {filename!r} is encrypted")
    return parts, warnings


def _precheck(info: zipfile.ZipInfo, name: str, config: ExtractConfig) -> str | None:
    """Why a member is skipped without reading it, or None."""
    if is_encrypted(info):
        return "encrypted"
    if claimed_type(name) is None:
        return "unsupported-type"
    if info.file_size == 0:
        return "empty-file"
    if info.file_size > config.max_file_bytes:
        return "too-large"
    return None
