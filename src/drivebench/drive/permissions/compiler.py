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
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from drivebench.drive.history import PolicyView
from drivebench.drive.model import GrantRec
from drivebench.drive.permissions.actions import allowed_by, denied_by
from drivebench.drive.permissions.timeutil import bound
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
