"""Company-wide documents: offer letters, training decks, versioned policies, maintenance notices, event plans
and press releases."""

from __future__ import annotations

import random
from datetime import timedelta

from drivebench.corpora.acme3.base import BuilderBase
from drivebench.corpora.common.model import CLOCK_START, day, office_time, sub_rng


class CompanyDocs(BuilderBase):
    def people_docs(self, rng: random.Random) -> None:
        s, org = self.s, self.s.org
        payroll = s.sub("hr", "payroll")
        training = s.sub("hr", "training")
        hr_dir, recruiter = org.head("hr"), org.in_dept("hr-recruiting", "hr")[0]
        positions = list(s.pool("positions"))
        for n in range(self.n + 8):
            who = s.outsiders[n % len(s.outsiders)] + (
                f" ({n // len(s.outsiders) + 1})" if n >= len(s.outsiders) else ""
            )
            start = day(CLOCK_START + timedelta(days=30 + (n * 17) % 230 + rng.randint(0, 6)))
            sent = office_time(rng, start - timedelta(days=rng.randint(14, 30)))
            f = {
                "no": f"OL-2026-{n + 1:03d}",
                "candidate": who,
                "position": positions[n % len(positions)],
                "salary": self.s.common.fmt_money(rng.randint(14, 60) * 1000),
                "start": self.date(start),
                "contact": recruiter.name,
                "signed_by": hr_dir.name,
                "date": self.date(sent),
            }
            ov = [(sent, f, "")]
            if rng.random() < 0.3:  # the start date moves by agreement before the candidate starts
                moved = start + timedelta(days=rng.randint(7, 21))
                ov.append((self.when(sent, 3, 10, rng), {**f, "start": self.date(moved)}, "edit"))
            d = self.doc("offer", "docx", payroll, self.fmt("offer", no=f["no"]), "confidential", recruiter, ov)
            self.fact(d, "salary", [who])
            self.fact(d, "start", [who])
        courses = list(s.pool("courses"))
        for n in range(self.n // 2 + 4):
            when = office_time(rng, CLOCK_START + timedelta(days=20 + n * 23 % 270))
            trainer = rng.choice(org.in_dept("hr-recruiting", "hr") + org.in_dept("rd-platform", "engineer")[:3])
            course = courses[n % len(courses)]
            tno = f"TR-2026-{n + 1:02d}"
            f = {
                "no": tno,
                "course": course,
                "trainer": trainer.name,
                "date": self.date(when),
                "hours": str(rng.choice([2, 3, 4, 6, 8])),
                "place": rng.choice(self.W["names"]["rooms"]),
            }
            tv = [(when - timedelta(days=7), f, "")]
            if rng.random() < 0.4:  # another trainer takes the session
                other = rng.choice(
                    [p for p in org.in_dept("hr-recruiting", "hr") if p.name != trainer.name]
                    + org.in_dept("rd-platform", "engineer")[3:5]
                )
                tv.append((when - timedelta(days=3), {**f, "trainer": other.name}, "edit"))
            d = self.doc("training", "pptx", training, self.fmt("training", no=tno), "internal", recruiter, tv)
            self.fact(d, "trainer", [tno])
            self.fact(d, "hours", [tno])

    def policies(self, rng: random.Random) -> None:
        s, org = self.s, self.s.org
        folder = f"/{s.name('public')}/{s.name('policies')}"
        owner = org.head("hr")
        for n, pol in enumerate(self.W["policies"]):
            values = [int(v) for v in pol["start"]]
            t = office_time(rng, CLOCK_START + timedelta(days=3 + n * 5))
            versions = []
            for v in range(3):
                f = {
                    "no": f"POL-{n + 1:02d}",
                    "name": pol["name"],
                    "date": self.date(t),
                    **{f"v{j}": str(x) for j, x in enumerate(values)},
                }
                versions.append((t, f, "edit" if v else ""))
                j = rng.randrange(len(values))
                values[j] += int(pol["step"][j])
                t = office_time(rng, t + timedelta(days=rng.randint(60, 110)))
            d = self.doc(f"policy_{pol['kind']}", "pdf", folder, pol["name"], "public", owner, versions)
            for j in range(len(values)):
                self.fact(d, f"v{j}", [f"POL-{n + 1:02d}"])

    def notices(self, rng: random.Random) -> None:
        s, org = self.s, self.s.org
        folder = f"/{s.name('public')}/{s.name('news')}"
        systems = self.W["names"]["systems"]
        for n in range(self.n + 6):
            system = systems[n % len(systems)]
            window = office_time(rng, CLOCK_START + timedelta(days=10 + n * 19 % 290))
            contact = rng.choice(org.in_dept("it"))
            no = f"IT-2026-{n + 1:03d}"
            f = {
                "no": no,
                "system": system,
                "date": self.date(window),
                "start": f"{rng.choice([20, 21, 22])}:00",
                "hours": str(rng.randint(2, 6)),
                "contact": contact.name,
                "ext": str(rng.randint(6100, 6999)),
            }
            nv = [(window - timedelta(days=3), f, "")]
            if rng.random() < 0.4:  # the window is extended after planning
                nv.append(
                    (window - timedelta(days=1), {**f, "hours": str(int(f["hours"]) + rng.randint(1, 3))}, "edit")
                )
            d = self.doc("notice", "txt", folder, self.fmt("notice", no=no), "public", contact, nv)
            self.fact(d, "contact", [no])
            self.fact(d, "hours", [no])

    def events(self, rng: random.Random) -> None:
        s, org = self.s, self.s.org
        plans, news = s.sub("marketing", "events"), f"/{s.name('public')}/{s.name('news')}"
        cities, kinds, venues = s.pool("cities"), s.pool("event_types"), s.pool("venues")
        owners = org.in_dept("marketing-brand", "marketing")
        combos = [(c, k) for k in range(len(kinds)) for c in range(len(cities))]
        sub_rng(self.seed, "v3:event-combos").shuffle(combos)
        for n in range(self.n // 2 + 5):
            ci, ki = combos[n % len(combos)]
            event = self.fmt("event", city=cities[ci], kind=kinds[ki])
            held = office_time(rng, CLOCK_START + timedelta(days=60 + n * 29 % 230))
            planned = held - timedelta(days=rng.randint(30, 45))
            owner = rng.choice(owners)
            vi = rng.randrange(len(venues))
            f = {
                "event": event,
                "city": cities[ci],
                "date": self.date(held),
                "venue": venues[vi],
                "budget": self.s.common.fmt_money(rng.randint(8, 60) * 10000),
                "owner": owner.name,
                "guests": str(rng.randint(80, 600)),
            }
            pv = [(planned, f, "")]
            if rng.random() < 0.5:
                pv.append(
                    (
                        planned + timedelta(days=rng.randint(8, 20)),
                        {**f, "venue": venues[(vi + 1) % len(venues)]},
                        "venue",
                    )
                )
            d = self.doc(
                "event", "pptx", plans, self.fmt("event_plan", no=f"EV-2026-{n + 1:02d}"), "internal", owner, pv
            )
            self.fact(d, "venue", [event])
            self.fact(d, "budget", [event])
            rel = held + timedelta(days=1)
            pf = {
                "event": event,
                "date": self.date(held),
                "attended": str(rng.randint(60, int(f["guests"]))),
                "speaker": org.head("marketing").name,
                "city": cities[ci],
            }
            pr = self.doc(
                "press", "md", news, self.fmt("press", no=f"NR-2026-{n + 1:02d}"), "public", owner, [(rel, pf, "")]
            )
            self.fact(pr, "attended", [event])
