"""Arbitrary strings (control characters, markup, DXF/MTEXT codes) never break a writer, output
stays deterministic, and the extractor reads every result back without error."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from drivebench.corpora.render import DocSpec, Section, render
from drivebench.corpora.render._clean import clean, clean_spec
from drivebench.extract import extract
from tests.support.render_specs import FORMATS

SAFE = "设计审核批准图号材料比例aZ09"
ALPHABET = [
    *SAFE,
    *" \t\n\r.,;:!?。，；|#>*-_=<>&\"'`^%{}[]()\\/~@$",
    *"\x00\x07\x0b\x1f\x7f\ufeff",
    "é",
    "\u0301",
    "€",
]
words = st.text(alphabet=st.sampled_from(ALPHABET), min_size=0, max_size=40)
safe_words = st.text(alphabet=st.sampled_from(SAFE), min_size=2, max_size=30)
sections = st.builds(
    Section,
    heading=words,
    paragraphs=st.lists(st.one_of(words, safe_words), max_size=3),
    table=st.one_of(st.none(), st.lists(st.lists(words, max_size=3), max_size=3)),
    notes=st.one_of(st.none(), words),
)


def _spec(file_type: str, title: str, secs: list[Section], block: dict[str, str], layers: list[str]) -> DocSpec:
    return DocSpec(title, file_type, sections=secs, title_block=block, layers=layers, author=title or None)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# layers named like ezdxf's own ("0", "Defpoints") or ours in another case: once raised DXFTableEntryError
@example(file_type="dxf", title="", secs=[], block={}, layers=["0", "defpoints"])
@example(file_type="dxf", title="", secs=[], block={}, layers=["geometry", "GEOMETRY"])
@given(
    file_type=st.sampled_from([f for f in FORMATS if f != "zip"]),
    title=words,
    secs=st.lists(sections, max_size=3),
    block=st.dictionaries(words, words, max_size=3),
    layers=st.lists(words, max_size=2),
)
def test_any_strings_render_and_extract(
    file_type: str, title: str, secs: list[Section], block: dict[str, str], layers: list[str]
) -> None:
    spec = _spec(file_type, title, secs, block, layers)
    data = render(spec)
    assert data == render(spec)
    ex = extract(data, f"fuzz.{file_type}")
    assert ex.file_type == file_type
    cleaned = clean_spec(spec)
    # paragraphs of plain CJK/ASCII word characters (no markup) come back verbatim
    haystack = re.sub(r"\s+", "", ex.text)
    for section in cleaned.sections:
        for para in section.paragraphs:
            if len(para) >= 2 and set(para) <= set(SAFE):
                assert para in haystack


def test_clean_removes_only_illegal_characters() -> None:
    assert clean("a\x00b\x0bc\r\nd\re\tf\ud800g") == "abc\nd\ne\tfg"
    assert clean("设计 é € |#") == "设计 é € |#"
