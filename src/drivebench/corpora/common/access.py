"""Access ground truth, computed from the scenario's own rules (never from Casbin).

A user may **preview** document D at time t iff

1. some *allow* grant applies to D at t whose actions include ``preview`` or anything stronger
   (``download``, ``upload``, ``edit``, ``delete``, ``share``, ``manage``; an allow of ``list`` alone
   does not let anyone preview), and
2. no *deny* grant applies to D at t whose actions include ``list`` or ``preview`` (a deny of a
   stronger action, e.g. ``download``, leaves preview alone), and
3. the user's clearance >= D's secret level.

A grant *applies* to D at t when all of these hold:

* it targets D itself (``doc_id``; document grants apply whatever the folders say), or a folder met
  when walking up from D's folder towards the root, the walk stopping *after* the first folder with
  ``break_inheritance``: a break folder receives the grants placed on it and passes them down to its
  own subtree; it only blocks grants from above it.
* D's folder at t is its first folder with every ``move`` whose ``at <= t`` applied in order.
* ``valid_from <= t < valid_until`` (missing bounds are unbounded).
* its subject matches the user: ``user`` (same id), ``role`` (the user holds it), ``department``
  (the user's department or any department above it: a grant to ``rd`` covers ``rd-platform``),
  ``project`` (the user is a member with ``valid_from <= t < valid_until``, missing bounds
  unbounded; a user listed twice matches if any listing is valid), ``everyone``.

Trash is ignored here (``manifest.access`` is about permissions; search hides trash separately), and so
is a document's creation time (callers check that a document exists at t).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from drivebench.formats.corpus import (
    Department,
    Document,
    Folder,
    Grant,
    Manifest,
    Project,
    User,
    level_rank,
    parent_path,
)

PREVIEW_ALLOWS = frozenset({"preview", "download", "upload", "edit", "delete", "share", "manage"})
PREVIEW_DENIES = frozenset({"list", "preview"})


def within(t: datetime, lo: datetime | None, hi: datetime | None) -> bool:
    return (lo is None or lo <= t) and (hi is None or t < hi)


def folder_at(doc: Document, t: datetime) -> str:
    """The folder holding ``doc`` at ``t`` (``doc.folder`` is where it is after every move)."""
    folder = doc.moves[0].from_folder if doc.moves else doc.folder
    for mv in sorted(doc.moves, key=lambda m: m.at):
        if mv.at <= t:
            folder = mv.to_folder
    return folder


@dataclass(frozen=True)
class Relax:
    """Which rules to ignore when explaining a refusal (all False = the real decision)."""

    clearance: bool = False
    denies: bool = False
    validity: bool = False
    membership: bool = False
    breaks: bool = False


STRICT = Relax()


class AccessModel:
    def __init__(
        self,
        departments: Iterable[Department],
        users: Iterable[User],
        projects: Iterable[Project],
        folders: Iterable[Folder],
        grants: Iterable[Grant],
        documents: Iterable[Document],
    ) -> None:
        parent = {d.id: d.parent for d in departments}
        self.users = {u.user_id: u for u in users}
        self.docs = {d.doc_id: d for d in documents}
        self.folders = {f.path: f for f in folders}
        self.depts: dict[str, set[str]] = {}
        for u in self.users.values():
            chain: set[str] = set()
            cur: str | None = u.department
            while cur is not None:
                chain.add(cur)
                cur = parent.get(cur)
            self.depts[u.user_id] = chain
        self.members: dict[str, list[tuple[str, datetime | None, datetime | None]]] = defaultdict(list)
        for p in projects:
            for m in p.members:
                self.members[p.id].append((m.user_id, m.valid_from, m.valid_until))
        self.by_folder: dict[str, list[Grant]] = defaultdict(list)
        self.by_doc: dict[str, list[Grant]] = defaultdict(list)
        for g in grants:
            if g.doc_id is not None:
                self.by_doc[g.doc_id].append(g)
            elif g.path is not None:
                self.by_folder[g.path].append(g)

    @classmethod
    def from_manifest(cls, m: Manifest) -> AccessModel:
        return cls(m.departments, m.users, m.projects, m.folders, m.grants, m.documents)

    # ------------------------------------------------------------------ rules
    def chain(self, folder: str, breaks: bool = True) -> list[str]:
        """The folders whose grants reach a document in ``folder``, nearest first."""
        out: list[str] = []
        cur: str | None = folder
        while cur is not None:
            out.append(cur)
            if breaks and self.folders[cur].break_inheritance:
                break
            cur = parent_path(cur)
        return out

    def matches(self, g: Grant, user_id: str, t: datetime, relax: Relax = STRICT) -> bool:
        s, u = g.subject, self.users[user_id]
        if s.kind == "everyone":
            return True
        if s.kind == "user":
            return s.id == user_id
        if s.kind == "role":
            return s.id in u.roles
        if s.kind == "department":
            return s.id in self.depts[user_id]
        return any(
            uid == user_id and (relax.membership or within(t, lo, hi))
            for uid, lo, hi in self.members.get(s.id or "", ())
        )

    def applicable(self, doc: Document, t: datetime, relax: Relax = STRICT, folder: str | None = None) -> list[Grant]:
        grants = list(self.by_doc.get(doc.doc_id, ()))
        for f in self.chain(folder or folder_at(doc, t), breaks=not relax.breaks):
            grants += self.by_folder.get(f, ())
        return grants

    def decide(self, user_id: str, doc_id: str, t: datetime, relax: Relax = STRICT, folder: str | None = None) -> bool:
        doc = self.docs[doc_id]
        allow = deny = False
        for g in self.applicable(doc, t, relax, folder):
            if not (relax.validity or within(t, g.valid_from, g.valid_until)):
                continue
            if not self.matches(g, user_id, t, relax):
                continue
            if g.effect == "allow" and PREVIEW_ALLOWS.intersection(g.actions):
                allow = True
            elif g.effect == "deny" and PREVIEW_DENIES.intersection(g.actions):
                deny = True
        if not allow or (deny and not relax.denies):
            return False
        return relax.clearance or level_rank(self.users[user_id].clearance) >= level_rank(doc.secret_level)

    def may_preview(self, user_id: str, doc_id: str, t: datetime) -> bool:
        return self.decide(user_id, doc_id, t)

    def previewable(self, user_id: str, t: datetime) -> list[str]:
        return sorted(d for d in self.docs if self.decide(user_id, d, t))

    def access_map(self, t: datetime) -> dict[str, list[str]]:
        """user_id -> sorted doc_ids the user may preview at ``t`` (the manifest's ``access``)."""
        return {u: self.previewable(u, t) for u in sorted(self.users)}

    def reason(self, user_id: str, doc_id: str, t: datetime) -> str:
        """Why ``user_id`` may not preview ``doc_id`` at ``t`` (``allowed`` if they may): the first rule
        whose relaxation alone would let them in, else ``no_grant``."""
        if self.decide(user_id, doc_id, t):
            return "allowed"
        for name, relax in (
            ("clearance", Relax(clearance=True)),
            ("deny", Relax(denies=True)),
            ("grant_window", Relax(validity=True)),
            ("membership_window", Relax(membership=True)),
            ("break_inheritance", Relax(breaks=True)),
        ):
            if self.decide(user_id, doc_id, t, relax):
                return name
        doc = self.docs[doc_id]
        if doc.moves and self.decide(user_id, doc_id, t, folder=doc.moves[0].from_folder):
            return "moved"
        return "no_grant"
