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
from drivebench.corpora.generator.names import PEOPLE_EN, PEOPLE_ZH, extra_people

# id, parent, zh name, en name
DEPARTMENTS: tuple[tuple[str, str | None, str, str], ...] = (
    ("acme", None, "艾克米科技", "Acme Technologies"),
    ("gm", "acme", "总经办", "Executive Office"),
    ("rd", "acme", "研发中心", "R&D Center"),
    ("rd-platform", "rd", "平台组", "Platform Team"),
    ("rd-product", "rd", "产品组", "Product Team"),
    ("design", "acme", "工程设计部", "Engineering Design"),
    ("design-mech", "design", "机械设计组", "Mechanical Design"),
    ("design-elec", "design", "电气设计组", "Electrical Design"),
    ("finance", "acme", "财务部", "Finance"),
    ("finance-accounting", "finance", "会计组", "Accounting"),
    ("finance-procurement", "finance", "采购组", "Procurement"),
    ("hr", "acme", "人力资源部", "Human Resources"),
    ("hr-recruiting", "hr", "招聘组", "Recruiting"),
    ("legal", "acme", "法务部", "Legal"),
    ("legal-compliance", "legal", "合规组", "Compliance"),
    ("marketing", "acme", "市场部", "Marketing"),
    ("marketing-brand", "marketing", "品牌组", "Brand"),
    ("it", "acme", "信息技术部", "IT"),
    ("audit", "acme", "审计部", "Internal Audit"),
)

# department, roles, clearance, zh title, en title -- one line per user, in user-id order
ROSTER: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = (
    ("gm", ("manager",), "secret", "总经理", "Chief Executive Officer"),
    ("gm", ("manager",), "secret", "运营副总裁", "Chief Operating Officer"),
    ("rd", ("manager", "engineer"), "secret", "研发总监", "Chief Technology Officer"),
    ("rd-platform", ("manager", "engineer"), "confidential", "平台组经理", "Platform Team Manager"),
    ("rd-platform", ("engineer",), "confidential", "资深工程师", "Senior Engineer"),
    ("rd-platform", ("engineer",), "internal", "后端工程师", "Backend Engineer"),
    ("rd-platform", ("engineer",), "internal", "后端工程师", "Backend Engineer"),
    ("rd-platform", ("engineer",), "internal", "运维工程师", "Site Reliability Engineer"),
    ("rd-platform", ("engineer",), "internal", "数据工程师", "Data Engineer"),
    ("rd-platform", ("intern",), "internal", "研发实习生", "Engineering Intern"),
    ("rd-platform", ("contractor",), "internal", "外包开发工程师", "Contract Developer"),
    ("rd-product", ("manager", "engineer"), "confidential", "产品组经理", "Product Team Manager"),
    ("rd-product", ("engineer",), "internal", "产品经理", "Product Manager"),
    ("rd-product", ("engineer",), "internal", "前端工程师", "Frontend Engineer"),
    ("rd-product", ("engineer",), "internal", "测试工程师", "QA Engineer"),
    ("rd-product", ("engineer",), "internal", "移动端工程师", "Mobile Engineer"),
    ("rd-product", ("intern",), "internal", "产品实习生", "Product Intern"),
    ("rd-product", ("contractor",), "internal", "外包测试工程师", "Contract QA Engineer"),
    ("design", ("manager", "designer"), "confidential", "设计部经理", "Head of Engineering Design"),
    ("design-mech", ("designer",), "internal", "结构工程师", "Mechanical Engineer"),
    ("design-mech", ("designer",), "internal", "结构工程师", "Mechanical Engineer"),
    ("design-mech", ("designer",), "internal", "工艺工程师", "Process Engineer"),
    ("design-elec", ("designer",), "internal", "电气工程师", "Electrical Engineer"),
    ("design-elec", ("designer",), "internal", "硬件工程师", "Hardware Engineer"),
    ("design-elec", ("contractor",), "public", "外协绘图员", "Contract Draughtsperson"),
    ("finance", ("manager", "finance"), "secret", "财务总监", "Chief Financial Officer"),
    ("finance-accounting", ("finance",), "confidential", "会计主管", "Accounting Supervisor"),
    ("finance-accounting", ("finance",), "confidential", "成本会计", "Cost Accountant"),
    ("finance-procurement", ("manager", "finance"), "confidential", "采购经理", "Procurement Manager"),
    ("finance-procurement", ("finance",), "confidential", "采购专员", "Buyer"),
    ("hr", ("manager", "hr"), "secret", "人力资源总监", "HR Director"),
    ("hr-recruiting", ("hr",), "confidential", "招聘经理", "Recruiting Lead"),
    ("hr-recruiting", ("hr",), "confidential", "培训专员", "Training Specialist"),
    ("hr-recruiting", ("intern",), "public", "人事实习生", "HR Intern"),
    ("legal", ("manager", "legal"), "secret", "法务总监", "General Counsel"),
    ("legal-compliance", ("legal",), "confidential", "合规经理", "Compliance Manager"),
    ("legal-compliance", ("legal",), "confidential", "法务专员", "Legal Counsel"),
    ("marketing", ("manager",), "confidential", "市场总监", "Marketing Director"),
    ("marketing-brand", ("designer",), "internal", "品牌设计师", "Brand Designer"),
    ("marketing-brand", ("marketing",), "internal", "市场专员", "Marketing Specialist"),
    ("marketing-brand", ("marketing",), "internal", "活动策划", "Events Planner"),
    ("marketing-brand", ("intern",), "internal", "市场实习生", "Marketing Intern"),
    ("it", ("admin",), "internal", "IT经理", "IT Manager"),
    ("it", ("admin",), "internal", "系统管理员", "System Administrator"),
    ("audit", ("auditor",), "confidential", "审计经理", "Audit Manager"),
    ("audit", ("auditor",), "confidential", "内审专员", "Internal Auditor"),
    ("rd-platform", ("engineer",), "internal", "安全工程师", "Security Engineer"),
    ("finance-accounting", ("finance",), "internal", "出纳", "Cashier"),
)
# extra staff at large scale, cycled: department, roles, clearance, zh title, en title
EXTRA_STAFF: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = (
    ("rd-platform", ("engineer",), "internal", "后端工程师", "Backend Engineer"),
    ("rd-product", ("engineer",), "internal", "前端工程师", "Frontend Engineer"),
    ("design-mech", ("designer",), "internal", "结构工程师", "Mechanical Engineer"),
    ("design-elec", ("designer",), "internal", "电气工程师", "Electrical Engineer"),
    ("marketing-brand", ("marketing",), "internal", "市场专员", "Marketing Specialist"),
    ("finance-accounting", ("finance",), "confidential", "会计", "Accountant"),
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
    depts = [Department(id=i, name=zh if lang == "zh" else en, parent=parent) for i, parent, zh, en in DEPARTMENTS]
    pool = list(PEOPLE_ZH if lang == "zh" else PEOPLE_EN)
    rows = list(ROSTER) + [EXTRA_STAFF[i % len(EXTRA_STAFF)] for i in range(max(0, n_users - len(ROSTER)))]
    if len(rows) > len(pool):
        pool += extra_people(lang, len(rows) - len(pool), set(pool))
    people = []
    for i, (dept, roles, clearance, zh_title, en_title) in enumerate(rows):
        people.append(
            Person(
                user_id=f"u{i + 1:03d}",
                name=pool[i],
                department=dept,
                roles=roles,
                clearance=clearance,
                title=zh_title if lang == "zh" else en_title,
            )
        )
    return Org(people, depts)
