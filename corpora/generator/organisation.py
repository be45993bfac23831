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

from drivebench.corpora.format import Department, User
from drivebench.corpora.generator.names import department_name, extra_people, job_title, people

# id, parent (names: [departments] of scenario/<lang>/names.toml)
DEPARTMENTS: tuple[tuple[str, str | None], ...] = (
    ("acme", None),
    ("gm", "acme"),
    ("rd", "acme"),
    ("rd-platform", "rd"),
    ("rd-product", "rd"),
    ("design", "acme"),
    ("design-mech", "design"),
    ("design-elec", "design"),
    ("finance", "acme"),
    ("finance-accounting", "finance"),
    ("finance-procurement", "finance"),
    ("hr", "acme"),
    ("hr-recruiting", "hr"),
    ("legal", "acme"),
    ("legal-compliance", "legal"),
    ("marketing", "acme"),
    ("marketing-brand", "marketing"),
    ("it", "acme"),
    ("audit", "acme"),
)
# department, roles, clearance, title key ([job_titles] of names.toml) -- one line per user, in user-id order
ROSTER: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("gm", ("manager",), "secret", "chief_executive_officer"),
    ("gm", ("manager",), "secret", "chief_operating_officer"),
    ("rd", ("manager", "engineer"), "secret", "chief_technology_officer"),
    ("rd-platform", ("manager", "engineer"), "confidential", "platform_team_manager"),
    ("rd-platform", ("engineer",), "confidential", "senior_engineer"),
    ("rd-platform", ("engineer",), "internal", "backend_engineer"),
    ("rd-platform", ("engineer",), "internal", "backend_engineer"),
    ("rd-platform", ("engineer",), "internal", "site_reliability_engineer"),
    ("rd-platform", ("engineer",), "internal", "data_engineer"),
    ("rd-platform", ("intern",), "internal", "engineering_intern"),
    ("rd-platform", ("contractor",), "internal", "contract_developer"),
    ("rd-product", ("manager", "engineer"), "confidential", "product_team_manager"),
    ("rd-product", ("engineer",), "internal", "product_manager"),
    ("rd-product", ("engineer",), "internal", "frontend_engineer"),
    ("rd-product", ("engineer",), "internal", "qa_engineer"),
    ("rd-product", ("engineer",), "internal", "mobile_engineer"),
    ("rd-product", ("intern",), "internal", "product_intern"),
    ("rd-product", ("contractor",), "internal", "contract_qa_engineer"),
    ("design", ("manager", "designer"), "confidential", "head_of_engineering_design"),
    ("design-mech", ("designer",), "internal", "mechanical_engineer"),
    ("design-mech", ("designer",), "internal", "mechanical_engineer"),
    ("design-mech", ("designer",), "internal", "process_engineer"),
    ("design-elec", ("designer",), "internal", "electrical_engineer"),
    ("design-elec", ("designer",), "internal", "hardware_engineer"),
    ("design-elec", ("contractor",), "public", "contract_draughtsperson"),
    ("finance", ("manager", "finance"), "secret", "chief_financial_officer"),
    ("finance-accounting", ("finance",), "confidential", "accounting_supervisor"),
    ("finance-accounting", ("finance",), "confidential", "cost_accountant"),
    ("finance-procurement", ("manager", "finance"), "confidential", "procurement_manager"),
    ("finance-procurement", ("finance",), "confidential", "buyer"),
    ("hr", ("manager", "hr"), "secret", "hr_director"),
    ("hr-recruiting", ("hr",), "confidential", "recruiting_lead"),
    ("hr-recruiting", ("hr",), "confidential", "training_specialist"),
    ("hr-recruiting", ("intern",), "public", "hr_intern"),
    ("legal", ("manager", "legal"), "secret", "general_counsel"),
    ("legal-compliance", ("legal",), "confidential", "compliance_manager"),
    ("legal-compliance", ("legal",), "confidential", "legal_counsel"),
    ("marketing", ("manager",), "confidential", "marketing_director"),
    ("marketing-brand", ("designer",), "internal", "brand_designer"),
    ("marketing-brand", ("marketing",), "internal", "marketing_specialist"),
    ("marketing-brand", ("marketing",), "internal", "events_planner"),
    ("marketing-brand", ("intern",), "internal", "marketing_intern"),
    ("it", ("admin",), "internal", "it_manager"),
    ("it", ("admin",), "internal", "system_administrator"),
    ("audit", ("auditor",), "confidential", "audit_manager"),
    ("audit", ("auditor",), "confidential", "internal_auditor"),
    ("rd-platform", ("engineer",), "internal", "security_engineer"),
    ("finance-accounting", ("finance",), "internal", "cashier"),
)
# extra staff at large scale, cycled: department, roles, clearance, title key
EXTRA_STAFF: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("rd-platform", ("engineer",), "internal", "backend_engineer"),
    ("rd-product", ("engineer",), "internal", "frontend_engineer"),
    ("design-mech", ("designer",), "internal", "mechanical_engineer"),
    ("design-elec", ("designer",), "internal", "electrical_engineer"),
    ("marketing-brand", ("marketing",), "internal", "marketing_specialist"),
    ("finance-accounting", ("finance",), "confidential", "accountant"),
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
