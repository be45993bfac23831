"""Compile the drive's organisation, tree and grants into Casbin policy lines.

The compiler only translates; Casbin decides. Translation rules:

* ``g``: ``user:<u> -> role:<r>``, ``user:<u> -> dept:<d>``, ``dept:<d> -> dept:<parent>``, and one
  synthetic principal per role and per (role, department) for evaluate-as requests that name a
  role instead of a user (``principal:role=<r>`` and ``principal:role=<r>;dept=<d>``).
* ``g2``: ``doc:<id> -> fld:<folder>``, ``fld:<child> -> fld:<parent>`` unless the child breaks
  inheritance (then grants above it do not reach it or anything below it).
* ``p``: one line per grant, subject and implied action. A project grant becomes one line per member,
  valid on the intersection of the grant's and the membership's validity (empty intersections
  produce no line), so project validity is judged at request time like any other bound.

The compiled ``g``/``g2`` links are read through ``BulkRoleManager``, a Casbin role manager built in bulk.
Casbin's default ``RoleManager`` adds links one at a time (a ``Role`` object with two sets per
name); at 100k documents building the ``g2`` links that way took 1-2 s per policy version. The bulk
manager implements Casbin's ``RoleManager`` interface over plain dicts and answers ``has_link``
from a memoised ancestor set, with the same semantics as the default manager:

* ``has_link(a, a)`` is True;
* ``has_link(a, b)`` is True when ``b`` is reachable from ``a`` in at most
  ``max_hierarchy_level - 1`` steps (the default manager checks levels 0 .. max-1);
* no pattern matching and no domains (the drive's model uses neither).

``tests/permissions/test_perm_role_manager.py`` proves it equal to Casbin's default manager on random
graphs (chains, diamonds, cycles, depth limits).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from casbin.rbac.role_manager import RoleManager as CasbinRoleManager

from drivebench.drive.clock import bound
from drivebench.drive.history import PolicyView
from drivebench.drive.model import GrantRec
from drivebench.drive.permissions.actions import allowed_by, denied_by
from drivebench.drive.state import Drive


@dataclass(frozen=True)
class PolicyLine:
    sub: str
    obj: str
    act: str
    eft: str
    nbf: str
    exp: str
    gid: str

    def as_list(self) -> list[str]:
        return [self.sub, self.obj, self.act, self.eft, self.nbf, self.exp, self.gid]


@dataclass
class CompiledPolicy:
    p: list[PolicyLine] = field(default_factory=list)
    g: list[tuple[str, str]] = field(default_factory=list)
    g2: list[tuple[str, str]] = field(default_factory=list)
    grants: dict[str, GrantRec] = field(default_factory=dict)  # the grants compiled (copies), by grant id

    def lines_for(self, act: str) -> list[PolicyLine]:
        return [line for line in self.p if line.act == act]

    def to_csv(self) -> str:
        """Casbin's CSV policy format (what a file adapter would load)."""
        rows = ["p, " + ", ".join(line.as_list()) for line in self.p]
        rows += [f"g, {a}, {b}" for a, b in self.g]
        rows += [f"g2, {a}, {b}" for a, b in self.g2]
        return "\n".join(rows) + "\n"


def role_principal(role: str, department: str | None = None) -> str:
    """The synthetic subject used when evaluating as a role (optionally within a department)."""
    return f"principal:role={role}" + (f";dept={department}" if department else "")


def doc_obj(doc_id: str) -> str:
    return f"doc:{doc_id}"


def folder_obj(folder_id: str) -> str:
    return f"fld:{folder_id}"


def user_sub(user_id: str) -> str:
    return f"user:{user_id}"


def _expand_subject(drive: Drive | PolicyView, grant: GrantRec) -> list[tuple[str, str, str]]:
    """(subject, nbf, exp) triples for a grant; project grants expand to their valid members."""
    nbf, exp = grant.valid_from, grant.valid_until
    if not grant.subject.startswith("project:"):
        return [(grant.subject, bound(nbf), bound(exp))]
    project = drive.projects.get(grant.subject.removeprefix("project:"))
    if project is None:
        return []
    out = []
    for m in project.members:
        lo = max((x for x in (nbf, m.valid_from) if x is not None), default=None)
        hi = min((x for x in (exp, m.valid_until) if x is not None), default=None)
        if lo is not None and hi is not None and lo >= hi:
            continue
        out.append((user_sub(m.user_id), bound(lo), bound(hi)))
    return out


def compile_grant(drive: Drive | PolicyView, grant: GrantRec) -> list[PolicyLine]:
    obj = doc_obj(grant.doc_id) if grant.doc_id is not None else folder_obj(grant.folder_id or "")
    acts: set[str] = set()
    for a in grant.actions:
        acts |= allowed_by(a) if grant.effect == "allow" else denied_by(a)
    lines = []
    for sub, nbf, exp in _expand_subject(drive, grant):
        for act in sorted(acts):
            lines.append(PolicyLine(sub, obj, act, grant.effect, nbf, exp, grant.grant_id))
    return lines


def compile_drive(drive: Drive | PolicyView) -> CompiledPolicy:
    out = CompiledPolicy()
    for gid in sorted(drive.grants):
        grant = drive.grants[gid]
        out.grants[gid] = replace(grant, actions=list(grant.actions))
        out.p.extend(compile_grant(drive, grant))
    for u in sorted(drive.users.values(), key=lambda u: u.user_id):
        out.g.extend((user_sub(u.user_id), f"role:{r}") for r in u.roles)
        out.g.append((user_sub(u.user_id), f"dept:{u.department}"))
    for d in sorted(drive.departments.values(), key=lambda d: d.id):
        if d.parent is not None:
            out.g.append((f"dept:{d.id}", f"dept:{d.parent}"))
    for role in sorted(drive.roles):
        out.g.append((role_principal(role), f"role:{role}"))
        for dept in sorted(drive.departments):
            sub = role_principal(role, dept)
            out.g.extend([(sub, f"role:{role}"), (sub, f"dept:{dept}")])
    for f in sorted(drive.folders.values(), key=lambda f: f.folder_id):
        if f.parent_id is not None and not f.break_inheritance:
            out.g2.append((folder_obj(f.folder_id), folder_obj(f.parent_id)))
    for doc in sorted(drive.documents.values(), key=lambda doc: doc.doc_id):
        out.g2.append((doc_obj(doc.doc_id), folder_obj(doc.folder_id)))
    return out


MEMO_LIMIT = 200_000


class BulkRoleManager(CasbinRoleManager):
    def __init__(self, links: Iterable[tuple[str, str]] = (), max_hierarchy_level: int = 10) -> None:
        self.max_hierarchy_level = max_hierarchy_level
        self._roles: dict[str, dict[str, None]] = {}  # name -> its direct roles (insertion-ordered set)
        self._users: dict[str, dict[str, None]] = {}  # role -> its direct members
        self._ancestors: dict[str, frozenset[str]] = {}
        for name1, name2 in links:
            self._link(name1, name2)

    def _link(self, name1: str, name2: str) -> None:
        self._roles.setdefault(name1, {})[name2] = None
        self._users.setdefault(name2, {})[name1] = None

    # ------------------------------------------------------------------ Casbin's interface
    def clear(self) -> None:
        self._roles.clear()
        self._users.clear()
        self._ancestors.clear()

    def add_link(self, name1: str, name2: str, *domain: str) -> None:
        _no_domain(domain)
        self._link(name1, name2)
        self._ancestors.clear()

    def delete_link(self, name1: str, name2: str, *domain: str) -> None:
        _no_domain(domain)
        self._roles.get(name1, {}).pop(name2, None)
        self._users.get(name2, {}).pop(name1, None)
        self._ancestors.clear()

    def has_link(self, name1: str, name2: str, *domain: str) -> bool:
        _no_domain(domain)
        return name2 in self.ancestors(name1)

    def get_roles(self, name: str, *domain: str) -> list[str]:
        _no_domain(domain)
        return list(self._roles.get(name, ()))

    def get_users(self, name: str, *domain: str) -> list[str]:
        _no_domain(domain)
        return list(self._users.get(name, ()))

    def print_roles(self) -> None:
        return None

    # ------------------------------------------------------------------ closure
    def ancestors(self, name: str) -> frozenset[str]:
        """``name`` and everything it reaches within ``max_hierarchy_level - 1`` steps (memoised)."""
        found = self._ancestors.get(name)
        if found is not None:
            return found
        if self.max_hierarchy_level <= 0:
            return frozenset()
        seen = {name}
        frontier = [name]
        for _ in range(self.max_hierarchy_level - 1):
            nxt = []
            for node in frontier:
                for parent in self._roles.get(node, ()):
                    if parent not in seen:
                        seen.add(parent)
                        nxt.append(parent)
            if not nxt:
                break
            frontier = nxt
        found = frozenset(seen)
        if len(self._ancestors) >= MEMO_LIMIT:
            self._ancestors.clear()
        self._ancestors[name] = found
        return found

    @property
    def names(self) -> set[str]:
        return set(self._roles) | set(self._users)


def _no_domain(domain: tuple[str, ...]) -> None:
    if domain:
        raise ValueError("the drive's role managers take no domain")
