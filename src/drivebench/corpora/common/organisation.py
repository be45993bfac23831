"""The organisation: departments (a tree under the company), users with roles and clearances.

Roles: ``engineer``, ``manager``, ``finance``, ``hr``, ``legal``, ``designer``, ``intern``,
``contractor``, ``admin``, ``auditor`` and ``marketing`` (marketing specialists). A user's first
role is their primary role (``tags.role`` of the queries they ask).

Clearances: the drafting contractor and the HR intern are cleared for ``public`` only; the other
interns and contractors, engineers, designers, marketing staff and admins for ``internal``; finance, HR, legal staff, team managers and auditors for ``confidential``;
the executives (CEO, COO, CTO, CFO, HR director, general counsel) for ``secret``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drivebench.corpora.common.names import department_name, extra_people, job_title, people, story
from drivebench.formats.corpus import Department, User


def _organisation() -> dict[str, Any]:
    return dict(story()["organisation"])


# id, parent; the roster and the extra staff: (department, roles, clearance, title key), one per user
DEPARTMENTS: tuple[tuple[str, str | None], ...] = tuple(
    (d["id"], d.get("parent")) for d in _organisation()["departments"]
)
ROSTER: tuple[tuple[str, tuple[str, ...], str, str], ...] = tuple(
    (r["department"], tuple(r["roles"]), r["clearance"], r["title"]) for r in _organisation()["roster"]
)
EXTRA_STAFF: tuple[tuple[str, tuple[str, ...], str, str], ...] = tuple(
    (r["department"], tuple(r["roles"]), r["clearance"], r["title"]) for r in _organisation()["extra_staff"]
)


@dataclass
class Person:
    user_id: str
    name: str
    department: str
    roles: tuple[str, ...]
    clearance: str
    title: str

    @property
    def role(self) -> str:
        return self.roles[0]


@dataclass
class Org:
    people: list[Person]
    departments: list[Department]

    def __post_init__(self) -> None:
        self.by_id = {p.user_id: p for p in self.people}
        self._parent = {d.id: d.parent for d in self.departments}

    def ancestors(self, dept: str) -> list[str]:
        """``dept`` and every department above it, nearest first."""
        out: list[str] = []
        cur: str | None = dept
        while cur is not None:
            out.append(cur)
            cur = self._parent[cur]
        return out

    def top_department(self, dept: str) -> str:
        """The department directly under the company (``rd`` for ``rd-platform``)."""
        chain = self.ancestors(dept)
        return chain[-2] if len(chain) >= 2 else chain[0]

    def in_dept(self, dept: str, role: str | None = None) -> list[Person]:
        """People in ``dept`` or below it, optionally holding ``role``, in user-id order."""
        return [p for p in self.people if dept in self.ancestors(p.department) and (role is None or role in p.roles)]

    def first(self, dept: str, role: str) -> Person:
        return self.in_dept(dept, role)[0]

    def head(self, dept: str) -> Person:
        """The manager of ``dept``: the first manager in it or above it, else its first member."""
        for d in self.ancestors(dept):
            managers = [p for p in self.people if p.department == d and "manager" in p.roles]
            if managers:
                return managers[0]
        return self.in_dept(dept)[0]

    def users(self) -> list[User]:
        return [
            User(user_id=p.user_id, name=p.name, department=p.department, roles=list(p.roles), clearance=p.clearance)
            for p in self.people
        ]


def build_org(lang: str, n_users: int) -> Org:
    """The departments and ``n_users`` (>= the roster) users; names in ``lang``."""
    depts = [Department(id=i, name=department_name(lang, i), parent=parent) for i, parent in DEPARTMENTS]
    pool = list(people(lang))
    rows = list(ROSTER) + [EXTRA_STAFF[i % len(EXTRA_STAFF)] for i in range(max(0, n_users - len(ROSTER)))]
    if len(rows) > len(pool):
        pool += extra_people(lang, len(rows) - len(pool), set(pool))
    staff = []
    for i, (dept, roles, clearance, title) in enumerate(rows):
        staff.append(
            Person(
                user_id=f"u{i + 1:03d}",
                name=pool[i],
                department=dept,
                roles=roles,
                clearance=clearance,
                title=job_title(lang, title),
            )
        )
    return Org(staff, depts)
