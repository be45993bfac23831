"""Chunking: properties (hypothesis) and the sentence-boundary rules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from drivebench.extract import Chunk, Extraction, Part, chunk_extraction

ALPHABET = (
    list(
        "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"
    )
    + list("abcdefghij ABC  \n\n。！？；.!?,，")
    + ["é", "\u0301", "\u200d", "👍", "\U0001f3fd"]
)

texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=1500)
limits = st.tuples(st.integers(min_value=20, max_value=300), st.integers(min_value=0, max_value=80)).filter(
    lambda t: t[1] < t[0]
)


def _ex(*texts_: str) -> Extraction:
    parts = [Part(f"part {i}", t) for i, t in enumerate(texts_)]
    return Extraction("\n\n".join(texts_), parts, "txt", "plain", [])


@settings(max_examples=150, deadline=None)
@given(text=texts, limit=limits)
@example(text="?" + "A" * 40, limit=(20, 10))  # found by CI: a one-character chunk before a hard-cut sentence
def test_chunks_cover_the_text_in_order_within_the_limit(text: str, limit: tuple[int, int]) -> None:
    max_chars, overlap = limit
    chunks = chunk_extraction(_ex(text), max_chars=max_chars, overlap=overlap)
    if not text.strip():
        assert chunks == []
        return
    covered = [False] * len(text)
    for i, c in enumerate(chunks):
        assert c.ordinal == i
        assert c.part == "part 0"
        assert c.text == text[c.start : c.end] and c.text == c.text.strip() and c.text
        assert len(c.text) <= max_chars
        for k in range(c.start, c.end):
            covered[k] = True
    assert all(covered[k] or text[k].isspace() for k in range(len(text)))
    for a, b in itertools.pairwise(chunks):
        assert a.start < b.start and a.end < b.end
        assert a.end - b.start <= overlap


@settings(max_examples=50, deadline=None)
@given(text=texts)
def test_chunking_is_deterministic(text: str) -> None:
    assert chunk_extraction(_ex(text, text), 80, 20) == chunk_extraction(_ex(text, text), 80, 20)


def test_chunks_stay_within_parts_and_carry_labels() -> None:
    chunks = chunk_extraction(_ex("第一部分。" * 30, "", "Second part. " * 30), max_chars=50, overlap=10)
    assert {c.part for c in chunks} == {"part 0", "part 2"}
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    first_of_second = next(c for c in chunks if c.part == "part 2")
    assert first_of_second.text.startswith("Second part.")


def test_splits_at_chinese_and_english_sentence_ends() -> None:
    zh = "".join(f"第{i}句话写的是云盘权限控制的内容。" for i in range(20))
    for c in chunk_extraction(_ex(zh), max_chars=60, overlap=0):
        assert c.text.endswith("。")
    en = " ".join(f"Sentence number {i} talks about access control!" for i in range(20))
    chunks = chunk_extraction(_ex(en), max_chars=120, overlap=0)
    assert all(c.text.endswith("!") for c in chunks)
    assert "3.5" in chunk_extraction(_ex("Version 3.5 is out. " * 3), 25, 0)[0].text  # no split inside 3.5


def test_newline_and_semicolon_are_boundaries() -> None:
    text = "甲方负责硬件；乙方负责软件\n丙方负责运维；丁方负责验收"
    chunks = chunk_extraction(_ex(text), max_chars=12, overlap=0)
    assert [c.text for c in chunks] == ["甲方负责硬件；", "乙方负责软件", "丙方负责运维；", "丁方负责验收"]


def test_overlap_starts_at_a_boundary() -> None:
    text = "".join(f"句子{i:02d}。" for i in range(40))
    chunks = chunk_extraction(_ex(text), max_chars=50, overlap=12)
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end  # they overlap
        assert b.text.startswith("句子")


def test_hard_cut_never_splits_a_character() -> None:
    text = "e\u0301" * 200  # e + combining acute: never cut between them
    for c in chunk_extraction(_ex(text), max_chars=51, overlap=10):
        assert c.text[0] == "e" and c.text[-1] == "\u0301"
        assert len(c.text) <= 51
    family = "👩\u200d👩\u200d👧" * 30
    for c in chunk_extraction(_ex(family), max_chars=20, overlap=0):
        assert not c.text.startswith("\u200d") and not c.text.endswith("\u200d")


def test_empty_and_invalid() -> None:
    assert chunk_extraction(_ex("")) == []
    assert chunk_extraction(_ex("  \n ")) == []
    assert chunk_extraction(Extraction("", [], "txt", "plain", [])) == []
    with pytest.raises(ValueError):
        chunk_extraction(_ex("x"), max_chars=10, overlap=10)
    with pytest.raises(ValueError):
        chunk_extraction(_ex("x"), max_chars=0, overlap=0)


def test_defaults_and_chunk_fields() -> None:
    text = "知识库检索评测。" * 200
    chunks = chunk_extraction(_ex(text))
    assert all(len(c.text) <= 500 for c in chunks) and len(chunks) > 3
    assert isinstance(chunks[0], Chunk) and chunks[0].start == 0
