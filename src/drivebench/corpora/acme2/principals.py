"""Principals with small visible sets (permission difficulty): guests of ``scenario/story.toml``.

* ``scope = "project"``: one per project space, a member of that project only (membership bounded in time,
  role ``member``), in the company's root department (no department space): they see the project's
  folder and the public space.
* ``scope = "folder"``: one per department folder that directly holds at least ``min_docs`` story
  documents they are cleared for (of kind ``department``: no project, personal or archive space), with a personal ``preview`` grant on that
  folder alone.

Guests are added to the organisation before grants are drawn (``add_guests``); their folder grants are
returned and appended to the manifest's grants after the structural ones (``guest_grants``). Names come
from the name pool of the language, titles from the data file.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from drivebench.corpora.common.model import CLOCK_NOW, DocPlan
from drivebench.corpora.common.names import extra_people
from drivebench.corpora.common.organisation import Org, Person
from drivebench.corpora.common.scenario import Scenario
from drivebench.formats.corpus import Grant, ProjectMember, Subject, level_rank


def _folders(s: Scenario, docs: list[DocPlan], min_docs: int, clearance: str) -> list[str]:
    project_roots = tuple(sp.root for sp in s.spaces)
    count = Counter(
        d.folder for d in docs if d.trashed_at is None and level_rank(d.secret_level) <= level_rank(clearance)
    )
    out = []
    for path, n in sorted(count.items()):
        if n < min_docs or path.startswith(project_roots):
            continue
        if s.folders[path].kind != "department":
            continue
        out.append(path)
    return out


def add_guests(s: Scenario, docs: list[DocPlan], spec: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Add the guests of ``spec`` to ``s.org`` (and project memberships to ``s.projects``); return the
    (user id, folder path) pairs that get a folder grant."""
    root = next(d.id for d in s.org.departments if d.parent is None)
    taken = {p.name for p in s.org.people}
    plans: list[tuple[dict[str, Any], str | None, str | None]] = []  # (spec, project id, folder)
    for g in spec:
        if g["scope"] == "project":
            plans += [(g, sp.project_id, None) for sp in s.spaces]
        elif g["scope"] == "folder":
            plans += [(g, None, f) for f in _folders(s, docs, int(g.get("min_docs", 6)), g["clearance"])]
        else:
            raise ValueError(f"unknown guest scope {g['scope']!r}")
    names = extra_people(s.lang, len(plans), taken)
    people = list(s.org.people)
    folder_grants: list[tuple[str, str]] = []
    projects = {p.id: p for p in s.projects}
    for (g, project, folder), name in zip(plans, names, strict=True):
        uid = f"u{len(people) + 1:03d}"
        people.append(
            Person(
                user_id=uid,
                name=name,
                department=root,
                roles=(g["role"],),
                clearance=g["clearance"],
                title=g[f"title_{s.lang}"],
            )
        )
        personal = f"/{s.name('personal')}"  # everyone has a personal space (as in version 1's tree)
        s.special[f"personal:{uid}"] = s.folder(
            f"{personal}/{name}", kind="personal", owner=root, break_inheritance=True
        )
        if project is not None:
            until = CLOCK_NOW + timedelta(days=int(g.get("days_left", 60)))
            projects[project].members.append(ProjectMember(user_id=uid, role="member", valid_until=until))
        if folder is not None:
            folder_grants.append((uid, folder))
    s.org = Org(people, s.org.departments)
    return folder_grants


def guest_grants(pairs: list[tuple[str, str]], s: Scenario, spec: list[dict[str, Any]]) -> list[Grant]:
    """Each folder guest's preview grant, and a ``list`` deny of the public space for every guest role the
    data file marks ``public_space = false`` (accounts for outsiders do not browse the intranet)."""
    public = f"/{s.name('public')}"
    hidden = sorted({g["role"] for g in spec if not g.get("public_space", True)})
    denies = [
        Grant(
            grant_id=f"gx-deny-{role}",
            path=public,
            subject=Subject(kind="role", id=role),
            actions=["list"],
            effect="deny",
            note="guests do not browse the public space",
        )
        for role in hidden
    ]
    return denies + [
        Grant(
            grant_id=f"gx{i:03d}",
            path=folder,
            subject=Subject(kind="user", id=uid),
            actions=["preview"],
            note="guest: one folder",
        )
        for i, (uid, folder) in enumerate(pairs, 1)
    ]
