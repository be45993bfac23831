"""Hostile and broken inputs are refused with the right reason code; nothing else escapes."""

from __future__ import annotations

import random
import zipfile

import pytest

from drivebench.corpora.render import render
from drivebench.extract import REASONS, ExtractConfig, ExtractionError, extract
from drivebench.extract import core as extract_core
from tests.support.file_builders import duplicate_central_entry, make_zip, patch_sizes, reason_of, small_spec

ZEROS = b"\0" * (5 * 2**20)  # 5 MiB of zeros deflate to about 5 KB: ratio ~1000


def _random(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


@pytest.mark.parametrize("name", ["a.pdf", "a.docx", "a.txt", "a.md", "a.zip", "a.dxf", "a.xlsx", "a.pptx"])
def test_empty_file(name: str) -> None:
    assert reason_of(b"", name) == "empty-file"


def test_whitespace_only_text_is_empty() -> None:
    assert reason_of(b"  \n\t\n", "a.txt") == "empty-file"


def test_too_large() -> None:
    assert reason_of(b"x" * 101, "a.txt", ExtractConfig(max_file_bytes=100)) == "too-large"


@pytest.mark.parametrize("name", ["a.exe", "a.doc", "noextension", "a.png"])
def test_unsupported_type(name: str) -> None:
    assert reason_of(b"hello", name) == "unsupported-type"


def test_pdf_named_docx_is_a_mismatch(good_pdf: bytes) -> None:
    assert reason_of(good_pdf, "report.docx") == "type-mismatch"


def test_text_named_pdf_is_a_mismatch() -> None:
    assert reason_of("这只是一段纯文本。\nplain text\n".encode(), "fake.pdf") == "type-mismatch"


def test_docx_named_xlsx_and_pdf_named_txt_are_mismatches(good_docx: bytes, good_pdf: bytes) -> None:
    assert reason_of(good_docx, "a.xlsx") == "type-mismatch"
    assert reason_of(good_pdf, "a.txt") == "type-mismatch"
    assert reason_of(good_docx, "a.zip") == "type-mismatch"


def test_truncated_pdf_is_corrupt(good_pdf: bytes) -> None:
    assert reason_of(good_pdf[: len(good_pdf) // 2], "cut.pdf") == "corrupt-pdf"


def test_pdf_with_garbage_body_is_corrupt() -> None:
    assert reason_of(b"%PDF-1.7\n" + _random(5000) + b"\n%%EOF\n", "junk.pdf") == "corrupt-pdf"


def test_password_protected_pdf_is_encrypted() -> None:
    import io

    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, encrypt=pdfencrypt.StandardEncryption("secret", canModify=0), invariant=1)
    c.drawString(72, 720, "classified")
    c.showPage()
    c.save()
    assert reason_of(buf.getvalue(), "locked.pdf") == "encrypted"


@pytest.mark.parametrize("file_type", ["docx", "xlsx", "pptx", "dxf"])
def test_random_bytes_are_corrupt(file_type: str) -> None:
    assert reason_of(_random(4096), f"x.{file_type}") == f"corrupt-{file_type}"


@pytest.mark.parametrize("file_type", ["docx", "xlsx", "pptx"])
def test_truncated_office_file_is_corrupt(file_type: str) -> None:
    data = render(small_spec(file_type))
    assert reason_of(data[: len(data) // 2], f"x.{file_type}") == f"corrupt-{file_type}"


def test_zip_without_word_parts_named_docx_is_corrupt() -> None:
    assert reason_of(make_zip([("hello.txt", b"hi")]), "x.docx") == "corrupt-docx"


def test_encrypted_office_package_is_encrypted() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 500 + "EncryptedPackage".encode("utf-16-le") + b"\0" * 500
    assert reason_of(ole, "locked.docx") == "encrypted"


def test_legacy_ole_named_docx_is_a_mismatch() -> None:
    assert reason_of(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 1000, "old.docx") == "type-mismatch"


def test_truncated_dxf_is_corrupt() -> None:
    data = render(small_spec("dxf"))
    assert reason_of(data[: len(data) // 3], "cut.dxf") == "corrupt-dxf"


def test_corrupt_zip() -> None:
    assert reason_of(b"PK\x03\x04" + _random(300), "broken.zip") == "corrupt-zip"


# --- archives ---------------------------------------------------------------------------------


def test_zip_bomb_by_ratio_is_rejected_before_decompressing() -> None:
    bomb = make_zip([("zeros.txt", ZEROS)])
    assert len(bomb) < 20_000
    assert reason_of(bomb, "bomb.zip") == "zip-bomb"


def test_zip_bomb_with_lying_headers_is_caught_while_reading() -> None:
    liar = patch_sizes(make_zip([("zeros.txt", ZEROS)]), fake_size=1000)
    info = zipfile.ZipFile(__import__("io").BytesIO(liar)).infolist()[0]
    assert info.file_size == 1000  # the headers claim a harmless ratio
    with pytest.raises(ExtractionError) as err:
        extract(liar, "liar.zip")
    assert err.value.reason == "zip-bomb"
    assert "past" in err.value.message


def test_declared_size_over_budget_is_a_bomb() -> None:
    data = make_zip([("noise.txt", _random(300_000).hex().encode())], compress=zipfile.ZIP_STORED)
    assert reason_of(data, "big.zip", ExtractConfig(zip_max_total_bytes=500_000)) == "zip-bomb"


def test_nested_bomb_rejects_the_whole_archive(good_docx: bytes) -> None:
    inner = make_zip([("zeros.txt", ZEROS)])
    outer = make_zip([("ok.docx", good_docx), ("inner/bomb.zip", inner)])
    with pytest.raises(ExtractionError) as err:
        extract(outer, "outer.zip")
    assert err.value.reason == "zip-bomb"
    assert "inner/bomb.zip" in err.value.message


def test_nested_budget_is_shared_across_levels() -> None:
    member = _random(200_000).hex().encode()  # 400 KB, incompressible enough
    inner = make_zip([(f"m{i}.txt", member) for i in range(2)])
    outer = make_zip([(f"in{i}.zip", inner) for i in range(2)])
    assert reason_of(outer, "outer.zip", ExtractConfig(zip_max_total_bytes=1_500_000)) == "zip-bomb"
    assert extract(outer, "outer.zip", ExtractConfig(zip_max_total_bytes=5_000_000)).parts


def test_overlapping_entries_are_a_bomb() -> None:
    data = duplicate_central_entry(make_zip([("a.txt", b"hello world " * 100)]), b"b.txt")
    assert reason_of(data, "overlap.zip") == "zip-bomb"


@pytest.mark.parametrize(
    "evil",
    ["../../etc/passwd", "/etc/passwd", "a/../../b.txt", "C:/Windows/x.txt", "..\\..\\evil.txt", "a\\..\\..\\b.md"],
)
def test_path_traversal_rejects_the_archive(evil: str) -> None:
    data = make_zip([("fine.md", b"# ok"), (evil, b"root:x:0:0")])
    assert reason_of(data, "evil.zip") == "path-traversal"


def test_too_many_members() -> None:
    data = make_zip([(f"f{i}.txt", b"x") for i in range(201)])
    assert reason_of(data, "many.zip") == "zip-too-many-members"
    assert len(extract(make_zip([(f"f{i}.txt", b"x") for i in range(200)]), "ok.zip").parts) == 200


def test_too_deep() -> None:
    data = make_zip([("core.md", "最深处".encode())])
    for level in range(3):
        data = make_zip([(f"level{level}.zip", data)])
    assert reason_of(data, "deep.zip") == "zip-too-deep"  # 4 nested archives, limit 3
    ok = extract(make_zip([("l1.zip", make_zip([("l2.zip", make_zip([("core.md", "最深处".encode())]))]))]), "o.zip")
    assert ok.text == "最深处"
    assert ok.parts[0].label == "member l1.zip/l2.zip/core.md"


def _flag_encrypted(archive: bytes) -> bytes:
    """Set the 'encrypted' general-purpose bit in every local and central header."""
    out = bytearray(archive)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = 0
        while (pos := out.find(signature, pos)) != -1:
            out[pos + offset] |= 0x1
            pos += 4
    return bytes(out)


def test_all_members_encrypted() -> None:
    data = _flag_encrypted(make_zip([("secret.txt", b"flagged"), ("b.md", b"# flagged")]))
    assert all(i.flag_bits & 1 for i in zipfile.ZipFile(__import__("io").BytesIO(data)).infolist())
    assert reason_of(data, "locked.zip") == "encrypted"


def test_mixed_zip_skips_bad_members_and_keeps_the_rest(good_docx: bytes, good_pdf: bytes) -> None:
    md = render(small_spec("md", "说明文档"))
    data = make_zip(
        [
            ("plans/a.docx", good_docx),
            ("plans/broken.pdf", good_pdf[:300]),
            ("plans/random.docx", _random(2000)),
            ("plans/fake.pdf", b"plain text pretending"),
            ("img/photo.png", b"\x89PNG\r\n"),
            ("empty.txt", b""),
            ("readme.md", md),
            ("report.pdf", good_pdf),
        ]
    )
    ex = extract(data, "mixed.zip")
    labels = [p.label for p in ex.parts]
    assert labels == ["member plans/a.docx", "member readme.md", "member report.pdf"]
    assert "好文档" in ex.text and "说明文档" in ex.text and "好PDF" in ex.text
    joined = "\n".join(ex.warnings)
    assert "plans/broken.pdf skipped: corrupt-pdf" in joined
    assert "plans/random.docx skipped: corrupt-docx" in joined
    assert "plans/fake.pdf skipped: type-mismatch" in joined
    assert "img/photo.png skipped: unsupported-type" in joined
    assert "empty.txt skipped: empty-file" in joined
    assert len(ex.warnings) == 5


def test_crc_error_member_is_skipped() -> None:
    data = bytearray(make_zip([("a.txt", b"alpha " * 50), ("b.txt", b"beta")], compress=zipfile.ZIP_STORED))
    at = data.find(b"alpha")
    data[at] = ord("A")
    ex = extract(bytes(data), "crc.zip")
    assert ex.text == "beta"
    assert "a.txt skipped: corrupt-zip" in ex.warnings[0]


def test_members_are_never_written_to_disk(tmp_path: object, monkeypatch: pytest.MonkeyPatch, good_docx: bytes) -> None:
    import builtins

    real_open = builtins.open

    def guarded(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        assert not any(flag in mode for flag in "wax+"), f"wrote {file!r}"
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", guarded)
    assert extract(make_zip([("a.docx", good_docx)]), "a.zip").parts


def test_unexpected_parser_exception_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_args: object) -> object:
        raise KeyError("surprise")

    monkeypatch.setitem(extract_core.EXTRACTORS, "md", explode)
    assert reason_of(b"# hi", "a.md") == "corrupt-text"
    monkeypatch.setitem(extract_core.EXTRACTORS, "pptx", explode)
    assert reason_of(render(small_spec("pptx")), "a.pptx") == "corrupt-pptx"


def test_every_reason_used_here_is_declared() -> None:
    used = {
        "empty-file",
        "too-large",
        "unsupported-type",
        "type-mismatch",
        "encrypted",
        "corrupt-pdf",
        "corrupt-docx",
        "corrupt-xlsx",
        "corrupt-pptx",
        "corrupt-dxf",
        "corrupt-zip",
        "corrupt-text",
        "zip-bomb",
        "path-traversal",
        "zip-too-deep",
        "zip-too-many-members",
    }
    assert used == set(REASONS)
