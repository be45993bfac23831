"""HR and legal units.

HR: a new-hire cohort. Offer letters (confidential) name the cohort; the onboarding guide names the
training plan; the training plan names trainers and the passing score; a salary adjustment sheet
(secret) lives in the payroll folder, which breaks inheritance.
Legal: a partner. The NDA (confidential), a legal opinion citing the NDA, a compliance memo citing
the opinion, and the signed-agreement archive (zip).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from drivebench.corpora.common.model import AnswerKind, Chain, DocPlan
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.generator.documents.base import UnitOutput, hook, n_versions, new_doc, subject

M = "people"
POSITION_DEPT = (
    "rd-platform",
    "rd-product",
    "design-mech",
    "design-elec",
    "finance-accounting",
    "marketing-brand",
    "rd-product",
    "rd-platform",
    "hr-recruiting",
    "legal-compliance",
)
# who teaches each course of COURSES: (department, role or None)
COURSE_TRAINERS = (
    ("hr", "manager"),
    ("rd-platform", "engineer"),
    ("rd", "manager"),
    ("marketing", None),
    ("it", "admin"),
    ("hr-recruiting", "hr"),
)


def _local(s: Scenario, amount: int) -> int:
    """A salary of the story in the language's currency: divided by ``[story] salary_divisor``, rounded
    down to 100 (the story's salaries are in yuan; a divisor of 1 keeps them)."""
    divisor = int(s.story["salary_divisor"])
    return amount if divisor == 1 else amount // divisor // 100 * 100


def _at(base: datetime, lo: int, hi: int, rng: random.Random) -> datetime:
    return min(base + timedelta(days=rng.randint(lo, hi)), LATEST)


def _chains(
    s: Scenario, out: UnitOutput, specs: list[tuple[str, list[DocPlan], str, AnswerKind]], params: dict[str, str]
) -> None:
    T = s.t(M)
    for kind, hops, fact, ans in specs:
        texts = {k: v.format(**params) for k, v in T.CHAINS[kind].items()}
        out.chains.append(Chain(kind=kind, hops=hops, fact=fact, answer=ans, texts=texts))


def hr_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    batch = str(s.seq("hr_batch"))
    names = {d.id: d.name for d in s.org.departments}
    hr_lead = s.org.first("hr-recruiting", "hr")
    organizer = s.org.in_dept("hr-recruiting", "hr")[1]
    report = base + timedelta(days=rng.randint(20, 50))
    site = s.pool("office_sites")[rng.randrange(len(s.pool("office_sites")))]
    tr_no = s.no("TR")
    common = {"batch": batch, "tr_no": tr_no, "site": site}
    out = UnitOutput()

    offers: list[DocPlan] = []
    mentors = []
    candidates = []
    for _ in range(2):
        candidate = s.outsider()
        pi = rng.randrange(len(s.pool("positions")))
        dept = POSITION_DEPT[pi]
        salary = rng.randint(12, 45) * 1000
        salary = _local(s, salary)
        f = {
            **common,
            "candidate": candidate,
            "position": s.pool("positions")[pi],
            "dept": names[dept],
            "salary": s.money(salary),
            "probation": str(rng.choice([3, 6])),
            "start": s.date(report),
            "offer_no": s.no("OF"),
            "hr_contact": hr_lead.name,
        }
        doc = new_doc(
            s,
            key=f"offer{len(offers) + 1}",
            kind="offer",
            module=M,
            file_type="docx",
            folder=s.sub("hr", "recruiting"),
            title=subject(s, M, "offer", f),
            level="confidential",
            owner=hr_lead,
            created=_at(base, 0, 12, rng),
            rng=rng,
            facts=[f],
        )
        for fact, ans in (("salary", "amount"), ("position", "what"), ("start", "date")):
            hook(s, M, doc, fact, ans)
        offers.append(doc)
        candidates.append(candidate)
        mentors.append((candidate, names[dept], rng.choice(s.org.in_dept(dept)).name))

    it_contact = rng.choice(s.org.in_dept("it", "admin"))
    onb_f = {**common, "report": s.date(report), "it_contact": it_contact.name, "mentors": mentors}
    onboarding = new_doc(
        s,
        key="onboarding",
        kind="onboarding",
        module=M,
        file_type="md",
        folder=s.sub("hr", "training"),
        title=subject(s, M, "onboarding", common),
        level="internal",
        owner=organizer,
        created=_at(base, 10, 18, rng),
        rng=rng,
        facts=[onb_f],
    )
    for fact, ans in (("report", "date"), ("site", "what"), ("it_contact", "who")):
        hook(s, M, onboarding, fact, ans)

    picks = rng.sample(range(len(s.pool("courses"))), 4)
    rows = []
    for j, ci in enumerate(picks):
        dept, role = COURSE_TRAINERS[ci]
        trainer = rng.choice(s.org.in_dept(dept, role))
        rows.append(
            (s.pool("courses")[ci], trainer.name, s.date(report + timedelta(days=j)), str(rng.choice([2, 3, 4])))
        )
    tr_f = {**common, "organizer": organizer.name, "courses": rows, "course": rows[0][0], "trainer": rows[0][1]}
    scores = [rng.choice([60, 70, 75, 80, 85])]
    for _ in range(1, n_versions(rng, 0.3)):
        scores.append(rng.choice([x for x in (60, 70, 75, 80, 85) if x != scores[-1]]))
    training = new_doc(
        s,
        key="training",
        kind="training",
        module=M,
        file_type="pptx",
        folder=s.sub("hr", "training"),
        title=subject(s, M, "training", common),
        level="internal",
        owner=organizer,
        created=_at(base, 8, 16, rng),
        rng=rng,
        notes=[s.common.VERSION_NOTES["score"]] * 4,
        facts=[{**tr_f, "pass_score": str(x)} for x in scores],
    )
    for fact, ans in (("pass_score", "number"), ("trainer", "who")):
        hook(s, M, training, fact, ans)

    director = s.org.head("hr")
    staff = rng.sample([p for p in s.org.people if p.role not in ("intern", "contractor")], 4)
    before = [rng.randint(10, 50) * 1000 for _ in staff]
    after = [b * rng.choice([103, 105, 108, 110, 115]) // 100 // 100 * 100 for b in before]
    firsts = [after[0]]
    for _ in range(1, n_versions(rng, 0.4)):
        firsts.append(firsts[-1] + rng.choice([-1, 1]) * rng.randint(2, 10) * 100)
    before, after, firsts = ([_local(s, x) for x in xs] for xs in (before, after, firsts))

    def sal_facts(first: int) -> dict[str, object]:
        amounts = [first, *after[1:]]
        rows = [
            (p.name, names[p.department], s.money(b), s.money(a))
            for p, b, a in zip(staff, before, amounts, strict=True)
        ]
        return {
            "batch": batch,
            "year": "2026",
            "approver": director.name,
            "rows": rows,
            "employee": staff[0].name,
            "new_salary": s.money(first),
        }

    payroll = s.sub("hr", "payroll", break_inheritance=True)
    salary_doc = new_doc(
        s,
        key="salary",
        kind="salary",
        module=M,
        file_type="xlsx",
        folder=payroll,
        title=subject(s, M, "salary", {"batch": batch, "year": "2026"}),
        level="secret",
        owner=director,
        created=_at(base, 5, 30, rng),
        rng=rng,
        notes=[s.common.VERSION_NOTES["salary"]] * 4,
        facts=[sal_facts(x) for x in firsts],
    )
    for fact, ans in (("new_salary", "amount"), ("approver", "who")):
        hook(s, M, salary_doc, fact, ans)

    out.docs = [*offers, onboarding, training, salary_doc]
    params = {**common, "course": rows[0][0], "candidate": candidates[0]}
    _chains(
        s,
        out,
        [
            ("onboarding_training", [onboarding, training], "trainer", "who"),
            ("offer_onboarding_training", [offers[0], onboarding, training], "pass_score", "number"),
        ],
        params,
    )
    return out


def legal_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    s.seq("legal")
    T = s.t(M)
    ci, wi = s.combo("partner", len(s.pool("cities")), len(s.pool("partner_words")))
    city, word = s.pool("cities")[ci], s.pool("partner_words")[wi]
    partner = s.story["partner_name"].format(city=city, word=word)
    nda_no, cm_no, lo_no, archive_no = s.no("NDA"), s.no("CM"), s.no("LO"), s.no("GD")
    common = {"partner": partner, "nda_no": nda_no, "cm_no": cm_no, "lo_no": lo_no, "archive_no": archive_no}
    gc = s.org.head("legal")
    counsel = s.org.in_dept("legal-compliance", "legal")
    coo, ceo = s.org.in_dept("gm")[1], s.org.in_dept("gm")[0]
    out = UnitOutput()

    terms = [rng.randrange(len(T.TERMS))]
    for _ in range(1, n_versions(rng, 0.5)):
        terms.append(rng.choice([t for t in range(len(T.TERMS)) if t != terms[-1]]))
    t_nda = _at(base, 0, 10, rng)
    nda_f = {
        **common,
        "purpose": rng.choice(T.PURPOSES),
        "effective": s.date(t_nda),
        "arbitration": s.pool("arbitration")[rng.randrange(len(s.pool("arbitration")))],
        "signatory": rng.choice([gc, coo]).name,
        "partner_rep": s.outsider(),
    }
    nda = new_doc(
        s,
        key="nda",
        kind="nda",
        module=M,
        file_type="docx",
        folder=s.sub("legal", "legal_contracts"),
        title=subject(s, M, "nda", common),
        level="confidential",
        owner=rng.choice(counsel),
        created=t_nda,
        rng=rng,
        notes=[s.common.VERSION_NOTES["term"]] * 4,
        facts=[{**nda_f, "term": T.TERMS[t]} for t in terms],
    )
    for fact, ans in (("term", "what"), ("arbitration", "org"), ("signatory", "who")):
        hook(s, M, nda, fact, ans)

    author = rng.choice(counsel)
    t_lo = _at(nda.versions[-1].created_at, 3, 20, rng)
    lo_f = {**common, "author": author.name, "risk": rng.choice(T.RISK_LEVELS)}
    opinion = new_doc(
        s,
        key="opinion",
        kind="opinion",
        module=M,
        file_type="pdf",
        folder=s.sub("legal", "compliance"),
        title=subject(s, M, "opinion", common),
        level="confidential",
        owner=author,
        created=t_lo,
        rng=rng,
        facts=[lo_f],
    )
    for fact, ans in (("risk", "what"), ("author", "who")):
        hook(s, M, opinion, fact, ans)

    owner = rng.choice(counsel)
    t_cm = _at(t_lo, 2, 15, rng)
    deadlines = [t_cm + timedelta(days=rng.randint(20, 60))]
    for _ in range(1, n_versions(rng, 0.4)):
        deadlines.append(deadlines[-1] + timedelta(days=rng.randint(14, 40)))
    cm_f = {
        **common,
        "topic": s.pool("compliance_topics")[rng.randrange(len(s.pool("compliance_topics")))],
        "owner": owner.name,
    }
    memo = new_doc(
        s,
        key="compliance",
        kind="compliance",
        module=M,
        file_type="md",
        folder=s.sub("legal", "compliance"),
        title=subject(s, M, "compliance", common),
        level="internal",
        owner=owner,
        created=t_cm,
        rng=rng,
        notes=[s.common.VERSION_NOTES["deadline"]] * 4,
        facts=[{**cm_f, "deadline": s.date(d)} for d in deadlines],
    )
    for fact, ans in (("owner", "who"), ("deadline", "date")):
        hook(s, M, memo, fact, ans)

    t_seal = _at(t_lo, 10, 40, rng)
    ar_f = {
        **common,
        "applicant": rng.choice(counsel).name,
        "seal_approver": rng.choice([gc, ceo]).name,
        "seal_date": s.date(t_seal),
    }
    signed = s.folder(f"{s.sub('legal', 'legal_contracts')}/{s.name('signed')}", kind="department", owner="legal")
    archive = new_doc(
        s,
        key="archive",
        kind="archive",
        module=M,
        file_type="zip",
        folder=signed,
        title=subject(s, M, "archive", common),
        level="confidential",
        owner=gc,
        created=t_seal,
        rng=rng,
        facts=[ar_f],
    )
    for fact, ans in (("seal_approver", "who"), ("seal_date", "date")):
        hook(s, M, archive, fact, ans)

    out.docs = [nda, opinion, memo, archive]
    _chains(
        s,
        out,
        [
            ("opinion_nda", [opinion, nda], "term", "what"),
            ("memo_opinion_nda", [memo, opinion, nda], "signatory", "who"),
        ],
        common,
    )
    return out
