"""The text engine of the acme scenario: every word comes from data files, this module only loads and renders.

A language is a directory ``scenario/<lang>/`` (``zh``, ``en``; see ``corpora/README.md``, "Scenario data"):

* ``common.toml``: date, money and percent formats, the name separator, the question-length rule, folder names,
  version notes, the contexts of long questions and the question templates (``[question.<single|content>.
  <short|medium|long>]``, one entry per mode; a list means "one of these, chosen by the seeded RNG");
* ``names.toml``: the pools of people's names and of the story's things (projects, parts, suppliers...);
* ``<module>.toml`` (``project``, ``design``, ``business``, ``people``, ``policy``): the module's vocabularies
  and the wording of its questions (``attrs``, ``subjects``, ``chains``, ``subject_aliases``, ``attr_aliases``);
* ``<module>/<kind>.j2``: the body of one kind of document, a Jinja template over the document's facts and
  the module's vocabularies (uppercase: ``{{ COMPANY }}``) that renders the document markup below.

Document markup (one item per line; blank lines are ignored; a line starting with ``\\`` is a paragraph
whose first character is literal)::

    @title TEXT            @file_type TYPE        @author NAME       @language CODE
    @layer NAME            (a DXF layer)          @block KEY: VALUE  (a DXF title-block field)
    @member NAME           (a file inside a zip: the lines up to ``@end`` describe it)
    # HEADING              (a new section)
    | CELL | CELL | ...    (a table row; cells are separated by " | ")
    > NOTES                (speaker notes of the section)
    any other line         (a paragraph of the current section)

``load(lang, module)`` returns the module's data: ``.ATTRS`` and every other vocabulary by its uppercase name,
``.<kind>(facts) -> DocSpec`` for each template, and for ``common`` the formatting and question functions.
"""

from __future__ import annotations

import os
import random
import re
import tomllib
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember
from drivebench.resources import package_dir

# The shared data (formats, folder names, name pools, the organisation) sits beside version 1's own templates in
# one directory per language, which is what makes a language one directory (``DRIVEBENCH_SCENARIO_PATH``): found
# by path, so reading it imports none of version 1's code.
SCENARIO_DIR = package_dir("drivebench.corpora") / "generator" / "scenario"
PATH_VARIABLE = "DRIVEBENCH_SCENARIO_PATH"  # more directories holding ``<lang>/`` data (os.pathsep-separated)


def _roots() -> list[Path]:
    extra = [Path(p) for p in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if p]
    return [SCENARIO_DIR, *extra]


def languages() -> list[str]:
    """The languages with a data directory (one holding ``common.toml``) in the package or on the path."""
    return sorted({p.parent.name for root in _roots() for p in root.glob("*/common.toml")})


def language_dir(lang: str) -> Path:
    """The data directory of ``lang``: the package's own first, then ``$DRIVEBENCH_SCENARIO_PATH``'s."""
    for root in _roots():
        if (root / lang / "common.toml").is_file():
            return root / lang
    raise ValueError(f"unknown language {lang!r}: no {lang}/common.toml (have: {', '.join(languages())})")


def _frozen(value: Any) -> Any:
    """TOML arrays as tuples (the vocabularies are read-only), tables as dicts."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def read_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return {k: _frozen(v) for k, v in tomllib.load(fh).items()}


@cache
def _environment(directory: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,  # a fact the data does not provide is an error, never an empty string
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=False,
    )
    env.globals["enumerate"] = enumerate
    env.filters["fmt"] = format  # {{ amount | fmt(",") }} == f"{amount:,}"
    return env


def parse_markup(text: str) -> DocSpec:
    """The ``DocSpec`` a rendered template describes (markup in the module docstring)."""
    root = DocSpec(title="", file_type="")
    stack = [root]
    section: Section | None = None

    def current() -> Section:
        if section is None:
            raise ValueError(f"content before the first section heading in {stack[-1].title!r}")
        return section

    for line in text.split("\n"):
        spec = stack[-1]
        if not line.strip():
            continue
        if line.startswith("\\"):
            current().paragraphs.append(line[1:])
        elif line.startswith("@"):
            key, _, value = line[1:].partition(" ")
            if key in ("title", "file_type", "author", "language"):
                setattr(spec, key, value)
            elif key == "layer":
                spec.layers.append(value)
            elif key == "block":
                name, sep, field = value.partition(": ")
                if not sep:
                    raise ValueError(f"@block without 'KEY: VALUE': {line!r}")
                spec.title_block[name] = field
            elif key == "member":
                member = DocSpec(title="", file_type="")
                spec.members.append(ZipMember(value, member))
                stack.append(member)
                section = None
            elif key == "end":
                if len(stack) == 1:
                    raise ValueError("@end without @member")
                stack.pop()
                section = None
            else:
                raise ValueError(f"unknown directive {line!r}")
        elif line == "#" or line.startswith("# "):
            section = Section(line[2:])
            spec.sections.append(section)
        elif line == "|" or line.startswith("| "):
            sec = current()
            sec.table = [*(sec.table or []), line[2:].split(" | ")]
        elif line.startswith("> "):
            current().notes = line[2:]
        else:
            current().paragraphs.append(line)
    if len(stack) != 1:
        raise ValueError("@member without @end")
    return root


class TextModule:
    """One module's data: vocabularies as uppercase attributes, document kinds as ``kind(facts) -> DocSpec``."""

    def __init__(self, directory: Path, module: str) -> None:
        self.directory = directory
        self.module = module
        path = directory / f"{module}.toml"
        if not path.is_file():
            raise ValueError(f"no scenario data {path}")
        self.data = read_toml(path)
        self.vocabulary = {k.upper(): v for k, v in self.data.items()}

    def __getattr__(self, name: str) -> Any:
        if name.isupper() and name in self.vocabulary:
            return self.vocabulary[name]
        if not name.startswith("_") and (self.directory / self.module / f"{name}.j2").is_file():
            return lambda facts: self.document(name, facts)
        raise AttributeError(f"{self.directory.name}/{self.module}: no {name!r}")

    def kinds(self) -> list[str]:
        return sorted(p.stem for p in (self.directory / self.module).glob("*.j2"))

    def render(self, kind: str, facts: dict[str, Any]) -> str:
        template = _environment(self.directory).get_template(f"{self.module}/{kind}.j2")
        return template.render({**self.vocabulary, **facts, "f": facts})

    def document(self, kind: str, facts: dict[str, Any]) -> DocSpec:
        return parse_markup(self.render(kind, facts))


class CommonText(TextModule):
    """``common.toml``: formats, folder names, version notes and the phrasing of questions."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, "common")
        fmt = self.data["format"]
        self._date, self._months = fmt["date"], fmt.get("months", ())
        self._money_fact, self._money, self._percent = fmt["money_fact"], fmt["money"], fmt["percent"]
        self._separator = fmt["name_separator"]
        length = self.data["length"]
        self._token = re.compile(length["token"])
        self._short, self._medium = length["short"], length["medium"]
        self._questions = self.data["question"]
        self._env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        self._compiled: dict[str, jinja2.Template] = {}

    def fmt_date(self, d: datetime) -> str:
        month_name = self._months[d.month - 1] if self._months else ""
        return str(self._date.format(year=d.year, month=d.month, day=d.day, month_name=month_name))

    def fmt_money(self, amount: int) -> str:
        """An amount as the fact string (templates add the unit)."""
        return str(self._money_fact.format(amount=amount))

    def money(self, amount: int) -> str:
        return str(self._money.format(amount=amount))

    def pct(self, value: float) -> str:
        return str(self._percent.format(value=value))

    def join_names(self, names: list[str]) -> str:
        return str(self._separator.join(names))

    def style_of(self, text: str) -> str:
        """The length bucket of a question: ``short`` <= ``length.short`` units (``length.token`` matches
        one unit), ``medium`` <= ``length.medium``, ``long`` above."""
        n = len(self._token.findall(text))
        return "short" if n <= self._short else "medium" if n <= self._medium else "long"

    def _ask(
        self, group: str, rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str
    ) -> str:
        values: dict[str, Any] = {"subject": subject, "attr": attr, "when": when, **self._questions["answer"][answer]}
        if style == "long":
            values["ctx"] = rng.choice(self.LONG_CONTEXTS)
        template = self._questions[group][style][mode]
        if isinstance(template, tuple):
            template = rng.choice(template)
        if template not in self._compiled:
            self._compiled[template] = self._env.from_string(template)
        return self._compiled[template].render(values)

    def single_question(
        self, rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
    ) -> str:
        """A question about one document. ``mode``: ``plain``, ``latest``, ``original`` or ``as_of`` (``when``)."""
        return self._ask("single", rng, style, subject, attr, answer, mode, when)

    def content_question(
        self, rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
    ) -> str:
        """A question about a drawing that names what it is about (``subject``: a part number, the overall
        dimensions), never the drawing's title or number."""
        return self._ask("content", rng, style, subject, attr, answer, mode, when)


@cache
def _load(directory: Path, module: str) -> TextModule:
    return CommonText(directory) if module == "common" else TextModule(directory, module)


def load(lang: str, module: str) -> Any:
    """The data of ``module`` in language ``lang``."""
    return _load(language_dir(lang), module)
