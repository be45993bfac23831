"""The acme scenario's words are data (``corpora/generator/scenario/<lang>/``), rendered by a small engine
(``corpora/common/content.py``): a scenario or a language is added without writing Python.

The byte-identity of ``acme-zh@1``/``acme-en@1``/``acme-zh@2``/``acme-en@2`` across the move from Python
templates to data is asserted by the checksum tests of ``test_versions.py``.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import jinja2
import pytest

from drivebench.corpora.common import content, names
from drivebench.corpora.common.assemble import assemble
from drivebench.corpora.generator.build import build_acme, doc_count, plan
from drivebench.corpora.render.spec import DocSpec, Section, ZipMember
from drivebench.corpora.validate import validate_corpus
from drivebench.formats.corpus import load_manifest

PACKAGE_DATA = content.SCENARIO_DIR
MODULES = ("project", "design", "business", "people", "policy")

# A scenario nobody wrote Python for: one module ("memo") with one kind of document, in language "tl".
COMMON = """
description = "Toy corpus"
long_contexts = ["While tidying up"]
[format]
date = "{day}/{month}/{year}"
money_fact = "{amount:,}"
money = "¤{amount:,}"
percent = "{value:.0f} pct"
name_separator = " & "
[length]
token = '\\S+'
short = 3
medium = 8
[folders]
public = "Open"
[version_notes]
edit = "Reworded"
[question.answer.who]
lead = "Who is"
[question.single.short]
plain = "{{ subject }}: {{ attr }}?"
[question.single.long]
plain = ["{{ ctx }}, {{ lead | lower }} the {{ attr }} of the {{ subject }}?", "{{ ctx }}: {{ attr }} in {{ subject }}?"]
"""
MEMO_TOML = """
signoff = "Regards"
owners = ["Ann", "Bo"]
[attrs]
"memo.owner" = "owner of {topic}"
"""
MEMO_J2 = """\
@title {{ title }}
@file_type zip
@member {{ topic | lower }}.txt
@title {{ topic }}
@file_type txt
# Summary
{{ topic }} is owned by {{ owner }}.
\\# not a heading
# Costs
| Item | Amount | Note
{% for item, amount in costs %}
| {{ item }} | {{ amount | fmt(",") }} | {{ "" }}
{% endfor %}
> {{ SIGNOFF }}, {{ OWNERS | join(" & ") }}
@end
@member drawing.dxf
@title Plan
@file_type dxf
@layer OUTLINE
@block DWG NO: {{ dwg }}
# Notes
{% for i, line in enumerate(lines, 1) %}
{{ i }}. {{ line }}
{% endfor %}
@end
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    lang = tmp_path / "tl"
    (lang / "memo").mkdir(parents=True)
    (lang / "common.toml").write_text(COMMON, encoding="utf-8")
    (lang / "memo.toml").write_text(MEMO_TOML, encoding="utf-8")
    (lang / "memo" / "brief.j2").write_text(MEMO_J2, encoding="utf-8")
    monkeypatch.setenv(content.PATH_VARIABLE, str(tmp_path))
    return lang


def test_the_engine_renders_a_data_only_scenario(toy: Path) -> None:
    assert "tl" in content.languages()
    memo = content.load("tl", "memo")
    assert memo.kinds() == ["brief"]
    assert memo.SIGNOFF == "Regards" and memo.OWNERS == ("Ann", "Bo")
    assert memo.ATTRS["memo.owner"].format(topic="Fleet") == "owner of Fleet"
    facts = {
        "title": "Fleet brief",
        "topic": "Fleet",
        "owner": "Ann",
        "costs": [("Fuel", 12500), ("Tyres", 800)],
        "dwg": "DWG-7",
        "lines": ["north wall", "south gate"],
    }
    got = memo.brief(facts)
    text = DocSpec(
        title="Fleet",
        file_type="txt",
        sections=[
            Section("Summary", ["Fleet is owned by Ann.", "# not a heading"]),
            Section(
                "Costs",
                [],
                table=[["Item", "Amount", "Note"], ["Fuel", "12,500", ""], ["Tyres", "800", ""]],
                notes="Regards, Ann & Bo",
            ),
        ],
    )
    drawing = DocSpec(
        title="Plan",
        file_type="dxf",
        layers=["OUTLINE"],
        title_block={"DWG NO": "DWG-7"},
        sections=[Section("Notes", ["1. north wall", "2. south gate"])],
    )
    assert got == DocSpec(
        title="Fleet brief",
        file_type="zip",
        members=[ZipMember("fleet.txt", text), ZipMember("drawing.dxf", drawing)],
    )
    with pytest.raises(jinja2.UndefinedError):  # a fact the data needs and nobody gave is an error, not ""
        memo.brief({k: v for k, v in facts.items() if k != "owner"})
    with pytest.raises(AttributeError):
        _ = memo.NOT_THERE


def test_common_formats_and_questions_come_from_the_data(toy: Path) -> None:
    from datetime import datetime

    common = content.load("tl", "common")
    assert common.fmt_date(datetime(2026, 3, 9)) == "9/3/2026"
    assert common.money(1234567) == "¤1,234,567" and common.pct(41.6) == "42 pct"
    assert common.join_names(["A", "B"]) == "A & B"
    assert common.single_question(random.Random(1), "short", "Fleet brief", "owner", "who", "plain") == (
        "Fleet brief: owner?"
    )
    long = {common.single_question(random.Random(s), "long", "brief", "owner", "who", "plain") for s in range(20)}
    assert long == {"While tidying up, who is the owner of the brief?", "While tidying up: owner in brief?"}
    assert [common.style_of(q) for q in ("a b c", "a b c d", " ".join("x" * 9))] == ["short", "medium", "long"]


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        content.load("xx", "project")
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        build_acme(Path("/nonexistent"), language="xx", scale="small")


def test_every_language_has_the_same_data_shape() -> None:
    """What the generator reads exists in every language: the same template kinds, the same keys of
    attrs/subjects/chains (aliases are optional), pools of equal length (entry i is the same thing in every language)."""
    langs = content.languages()
    assert {"zh", "en"} <= set(langs)
    for m in MODULES:
        ref = content.load("zh", m)
        for lang in langs:
            mod = content.load(lang, m)
            assert mod.kinds() == ref.kinds()
            assert len(ref.kinds()) >= 5
            for table in ("ATTRS", "SUBJECTS", "CHAINS"):
                assert getattr(mod, table, {}).keys() == getattr(ref, table, {}).keys(), (lang, m, table)
            assert getattr(mod, "ATTR_ALIASES", {}).keys() <= mod.ATTRS.keys()  # aliases are optional
            assert getattr(mod, "SUBJECT_ALIASES", {}).keys() <= mod.SUBJECTS.keys()
    ref_names = names.names("zh")
    for lang in langs:
        got = names.names(lang)
        assert {k: len(v) for k, v in got["pools"].items()} == {k: len(v) for k, v in ref_names["pools"].items()}
        assert got["departments"].keys() == ref_names["departments"].keys()
        assert got["job_titles"].keys() == ref_names["job_titles"].keys()


def test_no_python_module_holds_document_text() -> None:
    """The generator's Python (and the shared code's) holds no Chinese (the other language of the scenario is not checkable the same
    way): document bodies, vocabularies and names are all in the data directory."""
    import re

    cjk = re.compile(r"[\u3400-\u9fff]")
    root = PACKAGE_DATA.parent.parent  # corpora/: version 1's generator and the code the versions share
    modules = [p for package in ("generator", "common") for p in (root / package).rglob("*.py")]
    offenders = [p.relative_to(root).as_posix() for p in modules if cjk.search(p.read_text("utf-8"))]
    assert offenders == []
    assert len(list(PACKAGE_DATA.glob("*/*/*.j2"))) == 2 * sum(len(content.load("zh", m).kinds()) for m in MODULES)


@pytest.mark.slow
def test_a_new_language_is_a_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy English, change its words (a pseudo-language "xx"), point the path at it: the generator builds a
    valid corpus in it without any Python added."""
    data = tmp_path / "data"
    shutil.copytree(PACKAGE_DATA / "en", data / "xx")
    swaps = {"Finance": "Finanzen", "Project charter": "Projektcharta", "Technical requirements": "Technische Daten"}
    for path in (data / "xx").rglob("*"):
        if path.is_file():
            text = path.read_text("utf-8")
            for a, b in swaps.items():
                text = text.replace(a, b)
            path.write_text(text, "utf-8")
    monkeypatch.setenv(content.PATH_VARIABLE, str(data))
    out = tmp_path / "corpus"
    build_acme(out, language="xx", seed=3, scale="small")
    manifest = load_manifest(out)
    assert manifest.language == "xx"
    assert "Finanzen" in {d.name for d in manifest.departments}
    assert "Finance" not in {d.name for d in manifest.departments}
    queries = [json.loads(line) for line in (out / "evalset.jsonl").read_text("utf-8").splitlines()]
    assert len(queries) > 40
    assert validate_corpus(out) == []
    # the same story (same documents, same ids, same questions asked of the same people) in other words; the
    # English manifest is assembled in memory, as build_acme assembles it (its files are not the point here)
    plan_en, docs_en, _ = plan("en", 3, doc_count("small"))
    en_manifest, _, _ = assemble("acme-en", plan_en, docs_en, 3)
    assert [d.doc_id for d in manifest.documents] == [d.doc_id for d in en_manifest.documents]
    assert [d.name for d in manifest.documents] != [d.name for d in en_manifest.documents]
