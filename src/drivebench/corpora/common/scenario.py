"""The state every acme version's builder writes into: the organisation, folders, projects, numbering and the
scenario's text (``content``); ``LATEST``, the last moment anything is created or changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.common.content import load
from drivebench.corpora.common.model import CLOCK_NOW, sub_rng
from drivebench.corpora.common.names import extra_people, people, pool
from drivebench.corpora.common.organisation import Org, Person
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
