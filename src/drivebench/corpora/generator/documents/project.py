"""R&D project unit: a project with members (validity windows), its break-inheritance folder and
eight linked documents.

Links: the charter names the project code, the plan number and the budget-sheet number; the plan
names the approval-form number; the approval form names the approver. The kickoff minutes cite the
design review deck; the weekly report cites the minutes.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import cast

from drivebench.corpora.common.model import CLOCK_NOW, AnswerKind, Chain, DocPlan, day
from drivebench.corpora.common.names import story
from drivebench.corpora.common.organisation import Person
from drivebench.corpora.common.scenario import LATEST, ProjectSpace, Scenario
from drivebench.corpora.generator.documents.base import UnitOutput, hook, n_versions, new_doc, subject
from drivebench.formats.corpus import Project, ProjectMember

M = "project"


def _d(base: datetime, lo: int, hi: int, rng: random.Random) -> datetime:
    return min(base + timedelta(days=rng.randint(lo, hi)), LATEST)


def _team(s: Scenario, n: int, rng: random.Random) -> tuple[str, Person, list[Person]]:
    team = "rd-platform" if n % 2 else "rd-product"
    head = s.org.head(team)
    engineers = [p for p in s.org.in_dept(team, "engineer") if "manager" not in p.roles]
    return team, head, engineers


def _members(s: Scenario, rng: random.Random, n: int, base: datetime) -> tuple[list[ProjectMember], dict[str, Person]]:
    team, head, engineers = _team(s, n, rng)
    leader = head if n % 3 == 0 else rng.choice(engineers)
    assistant, m1, m2 = rng.sample([e for e in engineers if e is not leader], 3)
    other = "rd-product" if team == "rd-platform" else "rd-platform"
    cross_pool = s.org.in_dept("design", "designer") + s.org.in_dept("marketing", "marketing")
    cross_pool += s.org.in_dept("finance-accounting", "finance")
    cross = rng.choice([p for p in cross_pool if "manager" not in p.roles])
    contractor = s.org.first(team, "contractor")
    members = [
        ProjectMember(user_id=leader.user_id, role="leader"),
        ProjectMember(user_id=assistant.user_id, role="assistant"),
        ProjectMember(user_id=m1.user_id, role="member"),
        ProjectMember(user_id=m2.user_id, role="member"),
        ProjectMember(
            user_id=contractor.user_id,
            role="external",
            valid_from=day(base - timedelta(days=5)),
            valid_until=day(base + timedelta(days=rng.randint(45, 260))),
        ),
        ProjectMember(
            user_id=cross.user_id,
            role="member",
            valid_from=day(base),
            valid_until=day(base + timedelta(days=rng.randint(60, 200))) if n % 2 else None,
        ),
    ]
    if n % 2 == 0:
        members.append(ProjectMember(user_id=s.org.first(team, "intern").user_id, role="member"))
    if n % 3 == 1:
        future = rng.choice([p for p in s.org.in_dept(other, "engineer") if "manager" not in p.roles])
        members.append(
            ProjectMember(
                user_id=future.user_id, role="member", valid_from=day(CLOCK_NOW + timedelta(days=rng.randint(10, 60)))
            )
        )
    people = {"leader": leader, "assistant": assistant, "m1": m1, "m2": m2, "head": head, "cross": cross}
    return members, people


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    weights = [rng.randint(5, 30) for _ in range(parts)]
    out = [total * w // sum(weights) // 1000 * 1000 for w in weights[:-1]]
    return [*out, total - sum(out)]


def project_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    n = s.seq("project")
    ci, ti = s.combo("project", len(s.pool("project_codenames")), len(s.pool("project_topics")))
    project = s.story["project_name"].format(
        codename=s.pool("project_codenames")[ci], topic=s.pool("project_topics")[ti]
    )
    pid = f"prj-{n:03d}"
    members, ppl = _members(s, rng, n, base)
    team = ppl["head"].department
    s.projects.append(Project(id=pid, name=project, members=members))
    T = s.t(M)
    root = s.folder(f"/{s.name('projects')}/{project}", kind="project", owner=team, break_inheritance=True)
    f_docs, f_meet, f_deliv, f_fin = (
        s.folder(f"{root}/{s.name(k)}", kind="project", owner=team)
        for k in ("p_docs", "p_meetings", "p_delivery", "p_finance")
    )
    s.spaces.append(ProjectSpace(pid, root, f_fin, team))
    cto, coo, ceo = s.org.head("rd"), s.org.in_dept("gm")[1], s.org.in_dept("gm")[0]
    leader, assistant = ppl["leader"], ppl["assistant"]
    names = {d.id: d.name for d in s.org.departments}

    code, plan_no, approval_no = s.no("PRJ"), s.no("TP"), s.no("SP")
    review_no, minutes_no, budget_no = s.no("RV"), s.no("MM"), s.no("YS")
    common = {
        "project": project,
        "code": code,
        "plan_no": plan_no,
        "approval_no": approval_no,
        "review_no": review_no,
        "minutes_no": minutes_no,
        "budget_no": budget_no,
    }
    arch = s.pool("architectures")[rng.randrange(len(s.pool("architectures")))]
    db = rng.choice(story()["databases"])
    goal = T.GOALS[ti]
    risk = rng.choice(T.RISKS)
    out = UnitOutput()

    # charter: budget and end date change across versions
    budgets = [rng.randrange(60, 360) * 10000]
    ends = [day(base + timedelta(days=rng.randint(150, 300)))]
    nv = n_versions(rng, 0.6)
    notes = []
    for i in range(1, nv):
        if i % 2:
            budgets.append(round(budgets[-1] * rng.choice([0.85, 0.9, 1.1, 1.15, 1.2, 1.25]) / 10000) * 10000)
            ends.append(ends[-1])
            notes.append(s.common.VERSION_NOTES["budget"])
        else:
            budgets.append(budgets[-1])
            ends.append(ends[-1] + timedelta(days=rng.randint(30, 90)))
            notes.append(s.common.VERSION_NOTES["end"])
    role_names = dict(zip(("leader", "assistant", "member", "external"), T.ROLE_NAMES, strict=True))
    member_rows = [
        (s.person(m.user_id).name, role_names[m.role], names[s.person(m.user_id).department]) for m in members
    ]
    base_f = {
        **common,
        "dept": names[team],
        "leader": leader.name,
        "sponsor": (cto if n % 2 else coo).name,
        "start_text": s.date(base),
        "goal": goal,
        "risk": risk,
        "members": member_rows,
    }
    charter = new_doc(
        s,
        key="charter",
        kind="charter",
        module=M,
        file_type="docx",
        folder=f_docs,
        title=subject(s, M, "charter", common),
        level="internal",
        owner=leader,
        created=_d(base, 1, 4, rng),
        rng=rng,
        notes=notes,
        facts=[{**base_f, "budget": s.money(b), "end": s.date(e)} for b, e in zip(budgets, ends, strict=True)],
    )
    for fact, ans in (("leader", "who"), ("sponsor", "who"), ("budget", "amount"), ("end", "date")):
        hook(s, M, charter, fact, ans)

    # technical plan: the QPS target changes across versions
    plan_author = ppl["m1"]
    qps = [rng.randrange(10, 41) * 500]
    for _ in range(1, n_versions(rng, 0.5)):
        qps.append(qps[-1] + rng.choice([-2000, -1000, 1000, 2000, 3000, 5000]))
    plan_f = {
        **common,
        "goal": goal,
        "arch": arch,
        "db": db,
        "availability": rng.choice(["99.9%", "99.95%", "99.99%"]),
        "p99": str(rng.choice([150, 200, 300, 500])),
    }
    plan = new_doc(
        s,
        key="tech_plan",
        kind="tech_plan",
        module=M,
        file_type="pdf",
        folder=f_docs,
        title=subject(s, M, "tech_plan", common),
        level="confidential" if n % 3 == 2 else "internal",
        owner=plan_author,
        created=_d(base, 5, 15, rng),
        rng=rng,
        notes=[s.common.VERSION_NOTES["qps"]] * 4,
        facts=[{**plan_f, "qps": str(q)} for q in qps],
    )
    for fact, ans in (("qps", "number"), ("db", "what"), ("author", "who")):
        hook(s, M, plan, fact, ans)

    # approval form: the approver changes when the routing changes
    approvers = [rng.choice([cto, coo, ceo])]
    for _ in range(1, n_versions(rng, 0.5)):
        approvers.append(rng.choice([p for p in (cto, coo, ceo) if p is not approvers[-1]]))
    apply = plan.created_at + timedelta(days=rng.randint(2, 6))
    appr_f = {
        **common,
        "applicant": plan_author.name,
        "reviewer": ppl["head"].name,
        "apply_date": s.date(apply),
        "approve_date": s.date(apply + timedelta(days=rng.randint(1, 5))),
    }
    approval = new_doc(
        s,
        key="approval",
        kind="approval",
        module=M,
        file_type="xlsx",
        folder=f_docs,
        title=subject(s, M, "approval", common),
        level="internal",
        owner=assistant,
        created=apply + timedelta(days=6),
        rng=rng,
        notes=[s.common.VERSION_NOTES["approver"]] * 4,
        facts=[{**appr_f, "approver": a.name} for a in approvers],
    )
    for fact, ans in (("approver", "who"), ("approve_date", "date")):
        hook(s, M, approval, fact, ans)

    # kickoff minutes, design review, weekly report
    meeting = _d(base, 2, 6, rng)
    tasks = rng.sample(range(len(T.TASKS)), 3)
    owners = [ppl["m1"], ppl["m2"], assistant]
    actions = [
        (T.TASKS[t], o.name, s.date(meeting + timedelta(days=rng.randint(7, 30))))
        for t, o in zip(tasks, owners, strict=True)
    ]
    attendees = s.common.join_names([s.person(m.user_id).name for m in members[:4]])
    min_f = {
        **common,
        "meeting_date": s.date(meeting),
        "room": rng.choice(T.ROOMS),
        "leader": leader.name,
        "attendees": attendees,
        "recorder": assistant.name,
        "db": db,
        "actions": actions,
        "task": T.TASKS[tasks[0]],
        "action_owner": owners[0].name,
    }
    minutes = new_doc(
        s,
        key="minutes",
        kind="minutes",
        module=M,
        file_type="md",
        folder=f_meet,
        title=subject(s, M, "minutes", common),
        level="internal",
        owner=assistant,
        created=meeting + timedelta(days=1),
        rng=rng,
        facts=[min_f],
    )
    for fact, ans in (("action_owner", "who"), ("room", "what")):
        hook(s, M, minutes, fact, ans)

    review_date = _d(plan.created_at, 8, 20, rng)
    m1 = review_date + timedelta(days=rng.randint(7, 20))
    m2 = m1 + timedelta(days=rng.randint(30, 60))
    m3 = m2 + timedelta(days=rng.randint(15, 30))
    golive = m3 + timedelta(days=rng.randint(7, 21))
    chair = rng.choice([cto, ppl["head"], s.org.in_dept(ppl["head"].department, "engineer")[1]])
    panel = s.common.join_names([p.name for p in rng.sample(s.org.in_dept("rd", "engineer"), 3) if p is not chair][:2])
    rev_f = {
        **common,
        "chair": chair.name,
        "panel": panel,
        "review_date": s.date(review_date),
        "arch": arch,
        "db": db,
        "m1": s.date(m1),
        "m2": s.date(m2),
        "m3": s.date(m3),
    }
    golives = [golive]
    for _ in range(1, n_versions(rng, 0.4)):
        golives.append(golives[-1] + timedelta(days=rng.randint(14, 45)))
    review = new_doc(
        s,
        key="review",
        kind="review",
        module=M,
        file_type="pptx",
        folder=s.sub(team, "reviews"),
        title=subject(s, M, "review", common),
        level="internal",
        owner=ppl["head"],
        created=review_date,
        rng=rng,
        notes=[s.common.VERSION_NOTES["milestone"]] * 4,
        facts=[{**rev_f, "golive": s.date(g)} for g in golives],
    )
    for fact, ans in (("golive", "date"), ("chair", "who")):
        hook(s, M, review, fact, ans)

    week = rng.randint(3, 20)
    monday = day(base + timedelta(weeks=week - 1))
    monday -= timedelta(days=monday.weekday())
    weekly_author = rng.choice([leader, assistant])
    wk = {
        **common,
        "week": str(week),
        "period": f"{s.date(monday)} - {s.date(monday + timedelta(days=4))}",
        "progress": f"{min(95, 10 + week * rng.randint(3, 5))}%",
        "risk": risk,
        "done": T.TASKS[tasks[1]],
        "next": T.TASKS[tasks[2]],
    }
    weekly = new_doc(
        s,
        key="weekly",
        kind="weekly",
        module=M,
        file_type="txt",
        folder=s.sub(team, "weekly"),
        title=subject(s, M, "weekly", wk),
        level="internal",
        owner=weekly_author,
        created=min(max(monday + timedelta(days=4), meeting + timedelta(days=2)), LATEST),
        rng=rng,
        facts=[wk],
    )
    for fact, ans in (("progress", "number"), ("author", "who")):
        hook(s, M, weekly, fact, ans)

    # delivery package and budget sheet
    accept = _d(base, 100, 220, rng)
    signer = rng.choice([coo, s.org.head("marketing"), s.org.head("finance"), cto if n % 2 else coo])
    dlv_f = {
        **common,
        "release": f"v{rng.randint(1, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "signer": signer.name,
        "accept_date": s.date(accept),
        "servers": str(rng.randint(4, 32)),
    }
    delivery = new_doc(
        s,
        key="delivery",
        kind="delivery",
        module=M,
        file_type="zip",
        folder=f_deliv,
        title=subject(s, M, "delivery", common),
        level="internal",
        owner=leader,
        created=accept,
        rng=rng,
        facts=[dlv_f],
    )
    for fact, ans in (("signer", "who"), ("release", "what")):
        hook(s, M, delivery, fact, ans)

    total = budgets[-1]
    amounts = _split(total, len(T.BUDGET_ITEMS), rng)
    rows = [(item, s.money(a), note) for (item, note), a in zip(T.BUDGET_ITEMS, amounts, strict=True)]
    reviewer = rng.choice(s.org.in_dept("finance-accounting", "finance"))
    bud_f = {**common, "rows": rows, "total": s.money(total), "reviewer": reviewer.name, "cloud": s.money(amounts[2])}
    budget = new_doc(
        s,
        key="budget",
        kind="budget",
        module=M,
        file_type="xlsx",
        folder=f_fin,
        title=subject(s, M, "budget", common),
        level="confidential",
        owner=reviewer,
        created=max(charter.versions[-1].created_at, _d(base, 6, 12, rng)) + timedelta(days=1),
        rng=rng,
        facts=[bud_f],
    )
    for fact, ans in (("cloud", "amount"), ("reviewer", "who")):
        hook(s, M, budget, fact, ans)

    out.docs = [charter, plan, approval, minutes, review, weekly, delivery, budget]
    params = {**common, "week": str(week)}
    chains: list[tuple[str, list[DocPlan], str, str]] = [
        ("code_plan_approval", [charter, plan, approval], "approver", "who"),
        ("plan_approval", [plan, approval], "approve_date", "date"),
        ("minutes_review", [minutes, review], "golive", "date"),
        ("weekly_minutes_review", [weekly, minutes, review], "chair", "who"),
        ("code_budget", [charter, budget], "cloud", "amount"),
    ]
    for kind, hops, fact, ans in chains:
        texts = {k: v.format(**params) for k, v in T.CHAINS[kind].items()}
        out.chains.append(Chain(kind=kind, hops=hops, fact=fact, answer=cast(AnswerKind, ans), texts=texts))
    return out
