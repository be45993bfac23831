"""The seed organisation: departments, users, the project, folders and grants.

Each permission mechanism the evaluator must respect is isolated on purpose, so that one
leak shows up in one place:

* ``/finance/confidential`` breaks inheritance: finance staff (``dept:finance``) do not see it,
  only the role ``finance_manager`` granted on the folder itself (陈静).
* ``/finance-secret`` sits *next to* ``/finance``: a naive ``startswith("/finance")`` check
  leaks it to every finance employee; only ``finance_manager`` is granted.
* an explicit deny on ``d0009`` (加密模块设计说明, export control) for Emily Carter (u010),
  who otherwise sees ``/rd/platform`` through her department.
* Emily's temporary grant on ``/finance/budget`` expired on 2026-10-01; 周杰's (u008) grant on
  ``/finance/contracts`` is valid until 2027-01-01.
* 孙磊 (u007, intern) left 项目X on 2026-09-30: the project grant no longer covers him.
* the role ``admin`` may ``list`` everything but preview nothing through that grant.
* ``secret`` documents (d0008, d0023) sit in department folders whose staff lack the clearance.
"""

from __future__ import annotations

from drivebench.formats.corpus import (
    Department,
    Folder,
    Grant,
    Project,
    ProjectMember,
    User,
)

CLOCK_START = "2026-01-01T00:00:00+00:00"
CLOCK_NOW = "2026-11-01T00:00:00+00:00"

DEPARTMENTS: list[Department] = [
    Department(id="rd", name="研发部"),
    Department(id="rd-platform", name="平台组", parent="rd"),
    Department(id="finance", name="财务部"),
    Department(id="hr", name="人力资源部"),
    Department(id="legal", name="法务部"),
    Department(id="it", name="信息中心"),
]


def _user(uid: str, name: str, dept: str, roles: list[str], clearance: str, mail: str) -> User:
    return User.model_validate(
        {
            "user_id": uid,
            "name": name,
            "department": dept,
            "roles": roles,
            "clearance": clearance,
            "email": f"{mail}@xingchen.example",
        }
    )


USERS: list[User] = [
    _user("u001", "张伟", "rd", ["engineer"], "internal", "zhangwei"),
    _user("u002", "李强", "rd", ["manager", "engineer"], "confidential", "liqiang"),
    _user("u003", "王芳", "rd", ["manager"], "secret", "wangfang"),
    _user("u004", "陈静", "finance", ["finance", "manager", "finance_manager"], "secret", "chenjing"),
    _user("u005", "刘洋", "finance", ["finance"], "confidential", "liuyang"),
    _user("u006", "赵敏", "hr", ["hr", "manager"], "secret", "zhaomin"),
    _user("u007", "孙磊", "rd-platform", ["intern"], "internal", "sunlei"),
    _user("u008", "周杰", "legal", ["manager"], "confidential", "zhoujie"),
    _user("u009", "吴昊", "it", ["admin"], "internal", "wuhao"),
    _user("u010", "Emily Carter", "rd-platform", ["engineer"], "internal", "emily.carter"),
    _user("u011", "钱丽", "hr", ["hr"], "internal", "qianli"),
    _user("u012", "林晓", "hr", ["intern"], "public", "linxiao"),
]

PROJECT_X = "px"

PROJECTS: list[Project] = [
    Project(
        id=PROJECT_X,
        name="项目X",
        members=[
            ProjectMember.model_validate(
                {"user_id": "u003", "role": "leader", "valid_from": "2026-05-01T00:00:00+00:00"}
            ),
            ProjectMember.model_validate(
                {"user_id": "u002", "role": "assistant", "valid_from": "2026-05-01T00:00:00+00:00"}
            ),
            ProjectMember.model_validate(
                {"user_id": "u001", "role": "member", "valid_from": "2026-05-01T00:00:00+00:00"}
            ),
            ProjectMember.model_validate(
                {"user_id": "u005", "role": "member", "valid_from": "2026-05-15T00:00:00+00:00"}
            ),
            ProjectMember.model_validate(
                {"user_id": "u010", "role": "member", "valid_from": "2026-05-20T00:00:00+00:00"}
            ),
            # the intern's rotation ended: membership expired before clock.now
            ProjectMember.model_validate(
                {
                    "user_id": "u007",
                    "role": "member",
                    "valid_from": "2026-05-20T00:00:00+00:00",
                    "valid_until": "2026-10-01T00:00:00+00:00",
                }
            ),
        ],
    )
]

FOLDERS: list[Folder] = [
    Folder(path="/", kind="other"),
    Folder(path="/company", kind="shared", owner_department="hr"),
    Folder(path="/rd", kind="department", owner_department="rd"),
    Folder(path="/rd/platform", kind="department", owner_department="rd-platform"),
    Folder(path="/projects", kind="shared"),
    Folder(path="/projects/project-x", kind="project", owner_department="rd"),
    Folder(path="/finance", kind="department", owner_department="finance"),
    Folder(path="/finance/budget", kind="department", owner_department="finance"),
    Folder(path="/finance/contracts", kind="department", owner_department="finance"),
    Folder(path="/finance/confidential", kind="department", owner_department="finance", break_inheritance=True),
    Folder(path="/finance-secret", kind="department", owner_department="finance"),
    Folder(path="/hr", kind="department", owner_department="hr"),
    Folder(path="/legal", kind="department", owner_department="legal"),
    Folder(path="/it", kind="department", owner_department="it"),
]


def _grant(gid: str, subject: dict[str, str], actions: list[str], **kw: str) -> Grant:
    return Grant.model_validate({"grant_id": gid, "subject": subject, "actions": actions, **kw})


GRANTS: list[Grant] = [
    _grant("g01", {"kind": "everyone"}, ["download"], path="/company", note="公司制度全员可读"),
    _grant("g02", {"kind": "department", "id": "rd"}, ["download"], path="/rd"),
    _grant("g03", {"kind": "department", "id": "rd-platform"}, ["edit"], path="/rd/platform"),
    _grant("g04", {"kind": "project", "id": PROJECT_X}, ["download"], path="/projects/project-x"),
    _grant("g05", {"kind": "user", "id": "u003"}, ["manage"], path="/projects/project-x", note="项目负责人"),
    _grant("g06", {"kind": "department", "id": "finance"}, ["download"], path="/finance"),
    _grant(
        "g07",
        {"kind": "role", "id": "finance_manager"},
        ["download"],
        path="/finance/confidential",
        note="保密文件夹仅限财务经理",
    ),
    _grant(
        "g08",
        {"kind": "role", "id": "finance_manager"},
        ["download"],
        path="/finance-secret",
        note="not covered by the /finance grant",
    ),
    _grant("g09", {"kind": "department", "id": "hr"}, ["download"], path="/hr"),
    _grant("g10", {"kind": "department", "id": "legal"}, ["download"], path="/legal"),
    _grant("g11", {"kind": "department", "id": "it"}, ["manage"], path="/it"),
    _grant("g12", {"kind": "role", "id": "admin"}, ["list"], path="/", note="administrators list, never preview"),
    _grant(
        "g13",
        {"kind": "user", "id": "u010"},
        ["preview"],
        doc_id="d0009",
        effect="deny",
        note="出口管制：外籍员工不得访问加密模块设计",
    ),
    _grant(
        "g14",
        {"kind": "user", "id": "u010"},
        ["preview"],
        path="/finance/budget",
        valid_from="2026-08-01T00:00:00+00:00",
        valid_until="2026-10-01T00:00:00+00:00",
        note="temporary cost-model review, expired",
    ),
    _grant(
        "g15",
        {"kind": "user", "id": "u008"},
        ["preview"],
        path="/finance/contracts",
        valid_from="2026-10-01T00:00:00+00:00",
        valid_until="2027-01-01T00:00:00+00:00",
        note="法务合同年度复核",
    ),
    _grant("g16", {"kind": "role", "id": "manager"}, ["preview"], doc_id="d0017", note="季度财报抄送各部门经理"),
]
