"""Grants: who may see what.

Structural grants (folder level):

* everyone previews the public space; each department edits its own space (sub-departments
  inherit through the department hierarchy); managers preview every department space that does not
  break inheritance; cross-department grants: procurement previews the drawings, legal previews the
  purchase contracts, marketing previews its expense requests in finance's (breaking) folder.
* finance, internal audit and payroll break inheritance: finance is reached by its department grant,
  audit by its department plus the CFO and CEO, payroll only by the HR director, the CFO and the CEO.
* each project folder breaks inheritance: project members edit (while their membership is valid),
  the team manager and the CTO preview; finance staff preview the project's finance folder, which
  contractors may not even list (deny).
* interns may not list their team's design-review folder (deny).
* each personal space breaks inheritance: only its owner.
* time-bounded grants: an expired marketing→product collaboration, a still-valid product→market
  research grant, a future HR→platform grant, an expired design→contracts grant, an expired user grant.

Admin and auditor (documented choice, mirroring the vendor's separation of duties):

* ``admin`` manages the tree from ``/`` but the grant stops at every break-inheritance folder and
  admins hold ``internal`` clearance: they see the company's ordinary spaces, not projects, finance,
  audit, payroll, archives or personal spaces, and nothing confidential or secret.
* ``auditor`` previews ``/`` and every break-inheritance folder except personal spaces, with
  ``confidential`` clearance: everything but secret documents and private notes.

Document-level grants, chosen from the scenario once the tree exists: temporary shares of a document
with a user who otherwise cannot see it (some expired before ``clock.now``, some still valid) and
"invisible" denies (``list``) that hide a document from one user who otherwise could see it.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.model import CLOCK_NOW, DocPlan, day
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.formats.corpus import Grant, Subject


def _dt(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


class GrantList:
    def __init__(self) -> None:
        self.grants: list[Grant] = []

    def add(
        self,
        kind: str,
        sid: str | None,
        actions: list[str],
        *,
        path: str | None = None,
        doc_id: str | None = None,
        effect: str = "allow",
        valid_from: datetime | None = None,
        valid_until: datetime | None = None,
        note: str,
    ) -> None:
        self.grants.append(
            Grant(
                grant_id=f"g{len(self.grants) + 1:04d}",
                path=path,
                doc_id=doc_id,
                subject=Subject(kind=kind, id=sid),
                actions=actions,
                effect=effect,
                valid_from=valid_from,
                valid_until=valid_until,
                note=note,
            )
        )


def structural(s: Scenario) -> list[Grant]:
    g = GrantList()
    org = s.org
    public = f"/{s.name('public')}"
    depts = f"/{s.name('depts')}"
    g.add("everyone", None, ["preview"], path=public, note="public space")
    for d in org.departments:
        if d.parent is not None:
            g.add("department", d.id, ["edit"], path=s.dept_path(d.id), note="department space")
    g.add("role", "manager", ["preview"], path=depts, note="managers read department spaces")
    for path, kind, sid, note in (
        (s.sub("design", "drawings"), "department", "finance-procurement", "procurement reads drawings and BOMs"),
        (s.sub("finance-procurement", "contracts"), "department", "legal", "legal reads purchase contracts"),
        (s.sub("finance", "requests"), "department", "marketing", "marketing reads its expense requests"),
    ):
        g.add(kind, sid, ["preview"], path=path, note=note)
    cfo, ceo, hr_dir, cto = org.head("finance"), org.in_dept("gm")[0], org.head("hr"), org.head("rd")
    audit = s.dept_path("audit")
    for p in (cfo, ceo):
        g.add("user", p.user_id, ["preview"], path=audit, note="executives read audit memos")
    payroll = s.sub("hr", "payroll")
    g.add("user", hr_dir.user_id, ["edit"], path=payroll, note="payroll: HR director")
    for p in (cfo, ceo):
        g.add("user", p.user_id, ["preview"], path=payroll, note="payroll: executives")
    for sp in s.spaces:
        g.add("project", sp.project_id, ["edit"], path=sp.root, note="project members")
        g.add("user", org.head(sp.team).user_id, ["preview"], path=sp.root, note="team manager oversight")
        g.add("user", cto.user_id, ["preview"], path=sp.root, note="CTO oversight")
        g.add("role", "finance", ["preview"], path=sp.finance, note="finance reads project budgets")
        g.add(
            "role",
            "contractor",
            ["list"],
            path=sp.finance,
            effect="deny",
            note="project finance invisible to contractors",
        )
    for team in ("rd-platform", "rd-product"):
        g.add(
            "role",
            "intern",
            ["list"],
            path=s.sub(team, "reviews"),
            effect="deny",
            note="design reviews invisible to interns",
        )
    g.add("role", "manager", ["preview"], path=s.special["archive"], note="managers read the archive")
    g.add("role", "admin", ["manage"], path="/", note="admins manage the tree (not through break folders)")
    g.add("role", "auditor", ["preview"], path="/", note="auditors read everything ...")
    for f in sorted(s.folders.values(), key=lambda f: f.path):
        if f.break_inheritance and f.kind != "personal":
            g.add("role", "auditor", ["preview"], path=f.path, note="... including break-inheritance folders")
    for p in org.people:
        g.add("user", p.user_id, ["manage"], path=s.special[f"personal:{p.user_id}"], note="personal space")
    # time-bounded folder grants
    mkt_spec = org.in_dept("marketing", "marketing")[0]
    for kind, sid, path, lo, hi, note in (
        (
            "department",
            "marketing",
            s.dept_path("rd-product"),
            _dt(2026, 3, 1),
            _dt(2026, 7, 1),
            "marketing x product collaboration (ended)",
        ),
        (
            "department",
            "rd-product",
            s.sub("marketing", "research"),
            _dt(2026, 5, 1),
            _dt(2027, 1, 1),
            "product team reads market research (valid)",
        ),
        (
            "department",
            "hr-recruiting",
            s.dept_path("rd-platform"),
            _dt(2026, 12, 1),
            None,
            "recruiting reads platform space (not yet valid)",
        ),
        (
            "department",
            "design",
            s.sub("finance-procurement", "contracts"),
            _dt(2026, 2, 1),
            _dt(2026, 9, 1),
            "design cost-down review of contracts (ended)",
        ),
        (
            "user",
            mkt_spec.user_id,
            s.sub("design", "drawings"),
            _dt(2026, 4, 1),
            _dt(2026, 8, 15),
            "product photos for the catalogue (ended)",
        ),
    ):
        g.add(kind, sid, ["preview"], path=path, valid_from=lo, valid_until=hi, note=note)
    return g.grants


def document_level(s: Scenario, docs: list[DocPlan], model: AccessModel, rng: random.Random, start: int) -> list[Grant]:
    """Temporary shares and invisible denies on a few documents (about 4% and 3%)."""
    g = GrantList()
    users = [p.user_id for p in s.org.people]
    rank = {"public": 0, "internal": 1, "confidential": 2, "secret": 3}
    for doc in docs:
        roll = rng.random()
        if roll < 0.04:
            outsiders = [
                u
                for u in users
                if not model.decide(u, doc.doc_id, CLOCK_NOW) and rank[s.person(u).clearance] >= rank[doc.secret_level]
            ]
            if not outsiders:
                continue
            who = rng.choice(outsiders)
            lo = day(doc.created_at + timedelta(days=rng.randint(1, 5)))
            if rng.random() < 0.5 and lo + timedelta(days=20) < LATEST:
                hi = day(min(lo + timedelta(days=rng.randint(15, 60)), LATEST - timedelta(days=5)))
                note = "temporary share (expired)"
            else:
                hi = day(CLOCK_NOW + timedelta(days=rng.randint(20, 120)))
                note = "temporary share"
            g.add("user", who, ["preview"], doc_id=doc.doc_id, valid_from=lo, valid_until=hi, note=note)
        elif roll < 0.07:
            insiders = [u for u in users if u != doc.owner and model.decide(u, doc.doc_id, CLOCK_NOW)]
            if not insiders:
                continue
            g.add(
                "user",
                rng.choice(insiders),
                ["list"],
                doc_id=doc.doc_id,
                effect="deny",
                note="invisible to this user (conflict of interest)",
            )
    for i, grant in enumerate(g.grants):
        grant.grant_id = f"g{start + i + 1:04d}"
    return g.grants
