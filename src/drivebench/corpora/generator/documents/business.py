"""Marketing and finance units.

Marketing: a campaign deck cites an expense request (kept in finance's folder); the press release
announcing the event names the event; plus market research and a brand kit (zip).
Finance: a department's quarterly budget, its expense review of the quarter, internal audit's memo
on the quarter citing the budget, and the quarter's reimbursement notice (dated to the quarter).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from drivebench.corpora.common.model import CLOCK_START, AnswerKind, Chain, DocPlan
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.generator.documents.base import UnitOutput, hook, n_versions, new_doc, subject

M = "business"
FIN_DEPTS = ("rd", "design", "marketing", "hr", "legal", "finance", "gm", "it")


def _at(base: datetime, lo: int, hi: int, rng: random.Random) -> datetime:
    return min(base + timedelta(days=rng.randint(lo, hi)), LATEST)


def _chains(
    s: Scenario, out: UnitOutput, specs: list[tuple[str, list[DocPlan], str, AnswerKind]], params: dict[str, str]
) -> None:
    T = s.t(M)
    for kind, hops, fact, ans in specs:
        texts = {k: v.format(**params) for k, v in T.CHAINS[kind].items()}
        out.chains.append(Chain(kind=kind, hops=hops, fact=fact, answer=ans, texts=texts))


def marketing_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    n = s.seq("marketing")
    T = s.t(M)
    ci, ei, si = s.combo("event", len(s.pool("cities")), len(s.pool("event_types")), 2)
    city, etype, season = s.pool("cities")[ci], s.pool("event_types")[ei], T.SEASONS[si]
    event = s.story["event_name"].format(season=season, city=city, etype=etype)
    director = s.org.head("marketing")
    staff = s.org.in_dept("marketing", "marketing")
    owner = rng.choice(staff)
    plan_no, fr_no, pr_no, mr_no = s.no("MP"), s.no("FR"), s.no("PR"), s.no("MR")
    common = {"event": event, "plan_no": plan_no, "fr_no": fr_no, "pr_no": pr_no, "mr_no": mr_no, "city": city}
    notes = s.common.VERSION_NOTES
    out = UnitOutput()
    # spring events fall between April 10 and June 24, autumn ones between September 10 and November 24;
    # the plan is written at least 45 days ahead
    event_day = datetime(2026, 4 if si == 0 else 9, 10, tzinfo=UTC) + timedelta(days=rng.randint(0, 75))
    t_plan = min(_at(base, 1, 5, rng), event_day - timedelta(days=45))

    amounts = [rng.randint(3, 60) * 1000 for _ in T.REQUEST_ITEMS]
    requested = sum(amounts)
    venues = [rng.randrange(len(s.pool("venues")))]
    for _ in range(1, n_versions(rng, 0.5)):
        venues.append(rng.choice([v for v in range(len(s.pool("venues"))) if v != venues[-1]]))
    plan_f = {
        **common,
        "event_date": s.date(event_day),
        "owner": owner.name,
        "guests": str(rng.randint(8, 40) * 10),
        "leads": str(rng.randint(10, 90) * 10),
        "requested": s.money(requested),
        "t1": s.date(event_day - timedelta(days=30)),
        "t2": s.date(event_day - timedelta(days=7)),
    }
    folder = s.folder(f"{s.sub('marketing', 'events')}/{event}", kind="department", owner="marketing")
    campaign = new_doc(
        s,
        key="campaign",
        kind="campaign",
        module=M,
        file_type="pptx",
        folder=folder,
        title=subject(s, M, "campaign", common),
        level="internal",
        owner=owner,
        created=t_plan,
        rng=rng,
        notes=[notes["venue"]] * 4,
        facts=[{**plan_f, "venue": s.pool("venues")[v]} for v in venues],
    )
    for fact, ans in (("venue", "what"), ("leads", "number"), ("owner", "who")):
        hook(s, M, campaign, fact, ans)

    approver = rng.choice([s.org.head("finance"), s.org.first("finance-accounting", "finance")])
    t_req = _at(t_plan, 2, 6, rng)
    req_f = {
        **common,
        "owner": owner.name,
        "requested": s.money(requested),
        "rows": [(item, s.money(a)) for item, a in zip(T.REQUEST_ITEMS, amounts, strict=True)],
        "approver": approver.name,
        "approve_date": s.date(t_req + timedelta(days=rng.randint(1, 4))),
    }
    shares = [rng.choice([80, 85, 90, 95])]
    for _ in range(1, n_versions(rng, 0.3)):
        shares.append(rng.choice([x for x in (80, 85, 90, 95, 100) if x != shares[-1]]))
    request = new_doc(
        s,
        key="request",
        kind="request",
        module=M,
        file_type="xlsx",
        folder=s.sub("finance", "requests"),
        title=subject(s, M, "request", common),
        level="internal",
        owner=owner,
        created=t_req,
        rng=rng,
        notes=[s.common.VERSION_NOTES["approved"]] * 4,
        facts=[{**req_f, "approved": s.money(requested * x // 100 // 1000 * 1000)} for x in shares],
    )
    for fact, ans in (("approved", "amount"), ("approver", "who")):
        hook(s, M, request, fact, ans)

    segment = s.pool("segments")[rng.randrange(len(s.pool("segments")))]
    region = s.pool("cities")[rng.randrange(len(s.pool("cities")))]
    whole, tenth = rng.randint(12, 95), rng.randint(1, 9)
    size = s.story["market_size"].format(whole=whole, tenth=tenth, tenths=whole * 10 + tenth)
    res_author = rng.choice([*staff, director])
    res_f = {
        **common,
        "region": region,
        "segment": segment,
        "year": "2026",
        "size": size,
        "author": res_author.name,
        "competitors": s.common.join_names(rng.sample(T.COMPETITORS, 3)),
        "share": s.common.pct(rng.randint(35, 70)),
    }
    growths = [rng.randint(40, 260)]
    for _ in range(1, n_versions(rng, 0.3)):
        growths.append(max(10, growths[-1] + rng.choice([-1, 1]) * rng.randint(5, 30)))
    research = new_doc(
        s,
        key="research",
        kind="research",
        module=M,
        file_type="pdf",
        folder=s.sub("marketing", "research"),
        title=subject(s, M, "research", res_f) + f" {mr_no}",
        level="internal",
        owner=res_author,
        created=_at(base, 0, 30, rng),
        rng=rng,
        notes=[s.common.VERSION_NOTES["data"]] * 4,
        facts=[{**res_f, "growth": s.common.pct(g / 10)} for g in growths],
    )
    for fact, ans in (("size", "what"), ("growth", "number"), ("author", "who")):
        hook(s, M, research, fact, ans)

    t_press = min(_at(campaign.versions[-1].created_at, 3, 12, rng), event_day - timedelta(days=5))
    press_f = {
        **common,
        "ftype": "md" if n % 2 else "txt",
        "pub_date": s.date(t_press),
        "event_date": s.date(event_day),
        "spokesperson": director.name,
        "spokesperson_title": director.title,
        "headline": event,
    }
    press = new_doc(
        s,
        key="press",
        kind="press",
        module=M,
        file_type=str(press_f["ftype"]),
        folder=s.folder(f"/{s.name('public')}/{s.name('news')}", kind="shared"),
        title=subject(s, M, "press", common),
        level="public",
        owner=director,
        created=t_press,
        rng=rng,
        facts=[press_f],
    )
    for fact, ans in (("spokesperson", "who"), ("event_date", "date")):
        hook(s, M, press, fact, ans)

    designer = s.org.first("marketing", "designer")
    kit_f = {
        **common,
        "color": rng.choice(T.COLORS),
        "font": rng.choice(T.FONTS),
        "banners": str(rng.randint(4, 20)),
        "agency": s.pool("agencies")[rng.randrange(len(s.pool("agencies")))],
        "auth_until": s.date(event_day + timedelta(days=60)),
    }
    kit = new_doc(
        s,
        key="brandkit",
        kind="brandkit",
        module=M,
        file_type="zip",
        folder=s.sub("marketing", "brand"),
        title=subject(s, M, "brandkit", common),
        level="internal",
        owner=designer,
        created=_at(t_plan, 5, 20, rng),
        rng=rng,
        facts=[kit_f],
    )
    for fact, ans in (("color", "what"), ("agency", "org")):
        hook(s, M, kit, fact, ans)

    out.docs = [campaign, request, research, press, kit]
    _chains(
        s,
        out,
        [
            ("campaign_request", [campaign, request], "approved", "amount"),
            ("press_campaign_request", [press, campaign, request], "approver", "who"),
        ],
        common,
    )
    return out


def finance_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    n = s.seq("finance")
    T = s.t(M)
    # 2026's finished quarters (Q1-Q3) first, then whole earlier years
    first = len(FIN_DEPTS) * 3
    if n <= first:
        y = 2026
        di, qi = s.combo("fin-2026", len(FIN_DEPTS), 3)
    else:
        y = 2025 - (n - first - 1) // (len(FIN_DEPTS) * 4)
        di, qi = s.combo(f"fin-{y}", len(FIN_DEPTS), 4)
    year = str(y)
    q_end = datetime(y + (qi == 3), 1 if qi == 3 else 3 * qi + 4, 1, tzinfo=UTC) - timedelta(days=1)
    dept_id = FIN_DEPTS[di]
    dept = {d.id: d.name for d in s.org.departments}[dept_id]
    quarter = str(qi + 1)
    cfo = s.org.head("finance")
    accountants = s.org.in_dept("finance-accounting", "finance")
    author = rng.choice(accountants)
    bg_no, am_no = s.no("BG"), s.no("AM")
    common = {"dept": dept, "year": year, "quarter": quarter, "bg_no": bg_no, "am_no": am_no}
    notes = s.common.VERSION_NOTES
    out = UnitOutput()

    lines = [
        rng.randint(20, 400) * 10000,
        rng.randint(5, 60) * 10000,
        rng.randint(5, 120) * 10000,
        rng.randint(2, 30) * 10000,
        rng.randint(3, 40) * 10000,
    ]
    versions = [list(lines)]
    for _ in range(1, n_versions(rng, 0.6)):
        nxt = list(versions[-1])
        k = rng.choice([1, 2, 4])
        nxt[k] = max(10000, nxt[k] + rng.choice([-1, 1]) * rng.randint(1, 10) * 10000)
        versions.append(nxt)

    def budget_facts(v: list[int]) -> dict[str, object]:
        rows = [(item, s.money(a)) for item, a in zip(T.BUDGET_ITEMS, v, strict=True)]
        return {**common, "rows": rows, "total": s.money(sum(v)), "travel": s.money(v[1]), "approver": cfo.name}

    # the quarter's budget is drawn up 10-25 days before the quarter starts (not before the clock does)
    q_start = q_end - timedelta(days=89)
    t_bg = max(CLOCK_START + timedelta(days=3), q_start - timedelta(days=rng.randint(10, 25)))
    t_bg = t_bg if y == 2026 else _at(base, 0, 10, rng)
    budget = new_doc(
        s,
        key="dept_budget",
        kind="dept_budget",
        module=M,
        file_type="xlsx",
        folder=s.sub("finance", "budgets"),
        title=subject(s, M, "dept_budget", common),
        level="confidential",
        owner=author,
        created=t_bg,
        rng=rng,
        notes=[notes["total"]] * 4,
        facts=[budget_facts(v) for v in versions],
    )
    for fact, ans in (("total", "amount"), ("travel", "amount"), ("approver", "who")):
        hook(s, M, budget, fact, ans)

    presenter = rng.choice([cfo, *accountants])
    spend = sum(versions[-1]) // 4 * rng.randint(85, 115) // 100
    exp_f = {
        **common,
        "presenter": presenter.name,
        "spend": s.money(spend),
        "rate": s.common.pct(rng.randint(820, 1180) / 10),
        "over_item": rng.choice(T.BUDGET_ITEMS[1:3]),
    }
    expense = new_doc(
        s,
        key="expense",
        kind="expense",
        module=M,
        file_type="pptx",
        folder=s.sub("finance", "reports"),
        title=subject(s, M, "expense", common),
        level="confidential",
        owner=presenter,
        created=_at(q_end, 5, 25, rng) if y == 2026 else _at(t_bg, 20, 80, rng),
        rng=rng,
        facts=[exp_f],
    )
    for fact, ans in (("spend", "amount"), ("rate", "number"), ("presenter", "who")):
        hook(s, M, expense, fact, ans)

    auditor = rng.choice(s.org.in_dept("audit", "auditor"))
    t_audit = _at(q_end, 10, 40, rng) if y == 2026 else _at(t_bg, 5, 40, rng)
    deadlines = [t_audit + timedelta(days=rng.randint(30, 60))]
    for _ in range(1, n_versions(rng, 0.45)):
        deadlines.append(deadlines[-1] + timedelta(days=rng.randint(20, 45)))
    aud_f = {
        **common,
        "auditor": auditor.name,
        "owner": s.org.head(dept_id).name,
        "travel_rate": s.common.pct(rng.randint(1050, 1400) / 10),
    }
    s.sub("audit", break_inheritance=True)
    audit = new_doc(
        s,
        key="audit",
        kind="audit",
        module=M,
        file_type="docx",
        folder=s.dept_path("audit"),
        title=subject(s, M, "audit", common),
        level="confidential",
        owner=auditor,
        created=t_audit,
        rng=rng,
        notes=[notes["deadline"]] * 4,
        facts=[{**aud_f, "deadline": s.date(d)} for d in deadlines],
    )
    for fact, ans in (("deadline", "date"), ("auditor", "who"), ("owner", "who")):
        hook(s, M, audit, fact, ans)

    contact = rng.choice(accountants)
    # the reminder is about this year's quarter: claims due mid-to-late in the quarter's last month
    cutoff = datetime(2026, 3 * qi + 3, rng.randint(15, 25), tzinfo=UTC)
    t_notice = min(max(cutoff - timedelta(days=rng.randint(20, 45)), CLOCK_START + timedelta(days=2)), LATEST)
    not_f = {
        **common,
        "year": "2026",
        "cutoff": s.date(cutoff),
        "pay_date": s.date(cutoff + timedelta(days=rng.randint(10, 20))),
        "contact": contact.name,
    }
    notice = new_doc(
        s,
        key="notice",
        kind="notice",
        module=M,
        file_type="txt",
        folder=s.folder(f"/{s.name('public')}/{s.name('notices')}", kind="shared"),
        title=subject(s, M, "notice", not_f),
        level="internal",
        owner=contact,
        created=t_notice,
        rng=rng,
        facts=[not_f],
    )
    for fact, ans in (("cutoff", "date"), ("contact", "who")):
        hook(s, M, notice, fact, ans)

    out.docs = [budget, expense, audit, notice]
    _chains(s, out, [("audit_budget", [audit, budget], "travel", "amount")], common)
    return out
