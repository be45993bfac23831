"""The shared state units write into (folders, projects, numbering) and helpers they share."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.generator.content import load
from drivebench.corpora.generator.model import CLOCK_NOW, DocPlan, Hook, VersionPlan, office_time, sub_rng
from drivebench.corpora.generator.names import extra_people, people, pool
from drivebench.corpora.generator.organisation import Org, Person
from drivebench.corpora.render.spec import DocSpec
from drivebench.formats.corpus import Folder, Project

LATEST = CLOCK_NOW - timedelta(days=3)  # nothing is created or changed after this


@dataclass
class ProjectSpace:
    project_id: str
    root: str
    finance: str
    team: str


@dataclass
class Scenario:
    lang: str
    seed: int
    org: Org
    folders: dict[str, Folder] = field(default_factory=dict)
    projects: list[Project] = field(default_factory=list)
    spaces: list[ProjectSpace] = field(default_factory=list)
    special: dict[str, str] = field(default_factory=dict)
    counters: Counter[str] = field(default_factory=Counter)
    outsiders: list[str] = field(default_factory=list)
    _combos: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.common = load(self.lang, "common")
        self.folder("/", kind="other")
        taken = {p.name for p in self.org.people}
        rest = [n for n in people(self.lang) if n not in taken]
        self.outsiders = rest + extra_people(self.lang, 60, taken | set(rest))

    # -------------------------------------------------------------- text
    def t(self, module: str) -> Any:
        """The scenario data of ``module`` in this language (``content.load``)."""
        return load(self.lang, module)

    def pool(self, name: str) -> tuple[str, ...]:
        """A pool of the story's things in this language (``[pools]`` of ``scenario/<lang>/names.toml``)."""
        return pool(self.lang, name)

    @property
    def story(self) -> dict[str, Any]:
        """The language's story values and name patterns (``[story]`` of ``scenario/<lang>/common.toml``)."""
        return dict(self.common.data["story"])

    def date(self, d: datetime) -> str:
        return str(self.common.fmt_date(d))

    def money(self, amount: int) -> str:
        return str(self.common.fmt_money(amount))

    # -------------------------------------------------------------- folders
    def folder(
        self, path: str, *, kind: str = "other", owner: str | None = None, break_inheritance: bool = False
    ) -> str:
        """Create ``path`` (and missing parents, kind ``other``); return it. Existing folders are kept."""
        if path != "/":
            parent = path.rsplit("/", 1)[0] or "/"
            if parent not in self.folders:
                self.folder(parent)
        if path not in self.folders:
            self.folders[path] = Folder(
                path=path,
                owner_department=owner,
                break_inheritance=break_inheritance,
                kind=kind,
            )
        return path

    def name(self, key: str) -> str:
        return str(self.common.FOLDERS[key])

    def dept_path(self, dept: str) -> str:
        """The department space of ``dept`` (``/<depts>/<top>/<sub>``), created on first use."""
        chain = list(reversed(self.org.ancestors(dept)))[1:]
        names = {d.id: d.name for d in self.org.departments}
        path = "/" + self.name("depts")
        for d in chain:
            path = self.folder(f"{path}/{names[d]}", kind="department", owner=d)
        return path

    def sub(self, dept: str, *keys: str, break_inheritance: bool = False) -> str:
        """A folder below the space of ``dept``, named by folder keys (created on first use)."""
        path = self.dept_path(dept)
        for key in keys:
            path = self.folder(f"{path}/{self.name(key)}", kind="department", owner=dept)
        if break_inheritance:
            self.folders[path].break_inheritance = True
        return path

    # -------------------------------------------------------------- numbering and people
    def no(self, prefix: str, year: int = 2026, width: int = 3) -> str:
        """The next document number of a series: ``TP-2026-001``, ``TP-2026-002``..."""
        self.counters[prefix] += 1
        return f"{prefix}-{year}-{self.counters[prefix]:0{width}d}"

    def seq(self, key: str) -> int:
        self.counters[key] += 1
        return self.counters[key]

    def combo(self, key: str, *sizes: int) -> tuple[int, ...]:
        """The next unused combination of indices into pools of ``sizes`` (a seeded shuffle of the product;
        cycles when exhausted)."""
        if key not in self._combos:
            grid = [()]  # type: list[tuple[int, ...]]
            for n in sizes:
                grid = [(*g, i) for g in grid for i in range(n)]
            sub_rng(self.seed, f"combo:{key}").shuffle(grid)
            self._combos[key] = grid
        grid = self._combos[key]
        return grid[(self.seq(f"combo:{key}") - 1) % len(grid)]

    def outsider(self) -> str:
        """A person outside the company (candidate, supplier contact), cycling through a pool."""
        i = self.seq("outsider") - 1
        return self.outsiders[i % len(self.outsiders)]

    def person(self, user_id: str) -> Person:
        return self.org.by_id[user_id]


def spec(s: Scenario, kind: str, module: str, f: dict[str, Any]) -> DocSpec:
    """Render the template ``kind`` of ``module`` in the scenario's language with facts ``f``."""
    out: DocSpec = getattr(s.t(module), kind)(f)
    out.language = s.lang
    return out


def new_doc(
    s: Scenario,
    *,
    key: str,
    kind: str,
    module: str,
    file_type: str,
    folder: str,
    title: str,
    level: str,
    owner: Person,
    created: datetime,
    rng: random.Random,
    facts: list[dict[str, Any]],
    notes: list[str] | None = None,
    gap: tuple[int, int] = (9, 40),
) -> DocPlan:
    """A document whose version ``i`` renders ``facts[i]``; later versions ``gap`` days apart (fewer if
    the clock runs out: a version never lands after ``LATEST``). ``title`` is also the subject of its
    questions; the stored title and file name start with a capital letter."""
    shown = title[:1].upper() + title[1:]
    doc = DocPlan(
        key=key,
        kind=kind,
        file_type=file_type,
        folder=folder,
        name=f"{shown}.{file_type}".replace("/", "-"),
        title=shown,
        secret_level=level,
        owner=owner.user_id,
        department=owner.department,
        subject=title,
    )
    when = min(office_time(rng, created), LATEST)
    for i, f in enumerate(facts):
        if i > 0:
            when = office_time(rng, when + timedelta(days=rng.randint(*gap)))
            if when > LATEST:
                break
        f = {**f, "title": shown, "author": owner.name}
        note = (notes[i - 1] if notes and i - 1 < len(notes) else s.common.VERSION_NOTES["edit"]) if i else ""
        sp = spec(s, kind, module, f)
        sp.file_type = file_type
        sp.author = owner.name
        doc.versions.append(
            VersionPlan(
                spec=sp,
                created_at=when,
                author=owner.user_id,
                note=note,
                facts={k: v for k, v in f.items() if isinstance(v, str)},
            )
        )
    return doc


def hook(s: Scenario, module: str, doc: DocPlan, fact: str, answer: str) -> None:
    """Attach a question hook: the attribute name is the module's ``ATTRS[<kind>.<fact>]``; the subject is
    ``doc.subject``, or, for kinds in the module's ``CONTENT_SUBJECTS`` (drawings), a phrase naming what
    the document says (a content hook: its questions never use the title or the file name)."""
    facts = doc.versions[-1].facts
    if fact not in facts:
        raise KeyError(f"{doc.kind}: hook on unknown fact {fact!r}")
    T = s.t(module)
    key = f"{doc.kind}.{fact}"
    attr = T.ATTRS[key].format(**facts)
    alias_attr = T.ATTR_ALIASES.get(key)
    alias_subject = T.SUBJECT_ALIASES.get(doc.kind)
    content = getattr(T, "CONTENT_SUBJECTS", {}).get(doc.kind)
    doc.hooks.append(
        Hook(
            fact=fact,
            subject=content.format(**facts) if content else doc.subject,
            attr=attr,
            answer=answer,  # type: ignore[arg-type]  # the scenario's strings are AnswerKind values
            alias_subject=alias_subject.format(**facts) if alias_subject else None,
            alias_attr=alias_attr.format(**facts) if alias_attr else None,
            content=content is not None,
        )
    )


def subject(s: Scenario, module: str, kind: str, facts: dict[str, Any]) -> str:
    """The noun phrase naming a document in questions, from the module's ``SUBJECTS``."""
    return str(s.t(module).SUBJECTS[kind].format(**facts))


VERSIONING = 1.35  # scales every unit's chance of revising a document (keeps >= 20% versioned for any seed)


def n_versions(rng: random.Random, p: float) -> int:
    """1 with probability ``1 - VERSIONING * p``, else 2 to 5 (2 most likely)."""
    if rng.random() >= min(0.9, VERSIONING * p):
        return 1
    return rng.choices([2, 3, 4, 5], weights=[5, 3, 2, 1])[0]
