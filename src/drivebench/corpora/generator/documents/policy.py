"""Company-wide policies (each revised at least once) and personal work notes (the filler unit that
brings a corpus to an exact document count)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.generator.documents.base import UnitOutput, hook, new_doc, subject

M = "policy"


def policy_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    notes = s.common.VERSION_NOTES
    policies = s.folder(f"/{s.name('public')}/{s.name('policies')}", kind="shared")
    news = s.folder(f"/{s.name('public')}/{s.name('news')}", kind="shared")
    st = s.story
    out = UnitOutput()
    nv = rng.choice([2, 3])
    hb_f = {"hours": st["office_hours"], "probation": st["probation"]}
    handbook = new_doc(
        s,
        key="handbook",
        kind="handbook",
        module=M,
        file_type="pdf",
        folder=policies,
        title=subject(s, M, "handbook", {}),
        level="internal",
        owner=s.org.head("hr"),
        created=base,
        rng=rng,
        gap=(40, 90),
        notes=[notes["leave"]] * 2,
        facts=[{**hb_f, "leave": x} for x in st["annual_leave"][:nv]],
    )
    for fact, ans in (("leave", "what"), ("probation", "what"), ("hours", "what")):
        hook(s, M, handbook, fact, ans)

    nv = rng.choice([2, 3])
    money = [s.money(h) for h in st["hotel_limit"]]
    ep_f = {
        "hotel2": s.money(st["hotel_limit_tier2"]),
        "hotel3": s.money(st["hotel_limit_tier3"]),
        "per_diem": s.money(st["per_diem"]),
        "threshold": s.money(st["approval_threshold"]),
    }
    expense = new_doc(
        s,
        key="expense_policy",
        kind="expense_policy",
        module=M,
        file_type="pdf",
        folder=policies,
        title=subject(s, M, "expense_policy", {}),
        level="internal",
        owner=s.org.head("finance"),
        created=base + timedelta(days=rng.randint(3, 20)),
        rng=rng,
        gap=(40, 90),
        notes=[notes["hotel"]] * 2,
        facts=[{**ep_f, "hotel": m} for m in money[:nv]],
    )
    for fact, ans in (("hotel", "amount"), ("per_diem", "amount"), ("threshold", "amount")):
        hook(s, M, expense, fact, ans)

    nv = rng.choice([2, 3])
    admin = s.org.first("it", "admin")
    it_f = {"rotation": st["password_rotation"], "contact": s.org.in_dept("it", "admin")[1].name}
    security = new_doc(
        s,
        key="it_security",
        kind="it_security",
        module=M,
        file_type="md",
        folder=policies,
        title=subject(s, M, "it_security", {}),
        level="internal",
        owner=admin,
        created=base + timedelta(days=rng.randint(5, 30)),
        rng=rng,
        gap=(30, 80),
        notes=[notes["password"]] * 2,
        facts=[{**it_f, "length": x} for x in st["password_length"][:nv]],
    )
    for fact, ans in (("length", "what"), ("rotation", "what"), ("contact", "who")):
        hook(s, M, security, fact, ans)

    T = s.t(M)
    coo = s.org.in_dept("gm")[1]
    t_ann = base + timedelta(days=rng.randint(60, 120))
    ann_f = {"address": rng.choice(T.ADDRESSES), "move_date": s.date(t_ann + timedelta(days=rng.randint(20, 40)))}
    announcement = new_doc(
        s,
        key="announcement",
        kind="announcement",
        module=M,
        file_type="txt",
        folder=news,
        title=subject(s, M, "announcement", {}),
        level="public",
        owner=coo,
        created=t_ann,
        rng=rng,
        facts=[ann_f],
    )
    for fact, ans in (("address", "what"), ("move_date", "date")):
        hook(s, M, announcement, fact, ans)
    out.docs = [handbook, expense, security, announcement]
    return out


def note_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    n = s.seq("note")
    T = s.t(M)
    owner = s.org.people[(n * 7) % len(s.org.people)]
    topic = T.NOTE_TOPICS[rng.randrange(len(T.NOTE_TOPICS))]
    when = min(base + timedelta(days=rng.randint(0, 30)), LATEST)
    f = {
        "owner": owner.name,
        "topic": topic,
        "ftype": "md" if n % 2 else "txt",
        "date": s.date(when),
        "contact": s.outsider(),
        "due": s.date(when + timedelta(days=rng.randint(5, 20))),
    }
    doc = new_doc(
        s,
        key="note",
        kind="note",
        module=M,
        file_type=str(f["ftype"]),
        folder=s.special[f"personal:{owner.user_id}"],
        title=subject(s, M, "note", f) + (f" {n}" if n > len(T.NOTE_TOPICS) else ""),
        level="internal",
        owner=owner,
        created=when,
        rng=rng,
        facts=[f],
    )
    for fact, ans in (("contact", "who"), ("due", "date")):
        hook(s, M, doc, fact, ans)
    return UnitOutput(docs=[doc])
