"""Per project: charter, budget, kickoff deck, six weekly reports, the prototype test report, the design review
and the minutes of its follow-up meeting; then the project's product (``products.py``)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from drivebench.corpora.acme3.products import ProductDocs
from drivebench.corpora.common.model import CLOCK_START, day, office_time
from drivebench.corpora.common.names import story
from drivebench.corpora.common.organisation import Person
from drivebench.corpora.common.scenario import ProjectSpace
from drivebench.formats.corpus import Project, ProjectMember


class ProjectDocs(ProductDocs):  # a project ends in its product (``self.product``); Builder's MRO is unchanged
    def project(self, i: int, root: str, rng: random.Random) -> None:
        s, org = self.s, self.s.org
        codenames = s.pool("project_codenames")
        codename = codenames[i % len(codenames)] + (str(i // len(codenames) + 1) if i >= len(codenames) else "")
        code = f"PRJ-2026-{i + 11:03d}"
        name = self.fmt("project", codename=codename)
        topic = s.pool("project_topics")[i % len(s.pool("project_topics"))]
        fam_i = i % len(s.pool("product_families"))
        family = s.pool("product_families")[fam_i]
        model = f"{story()['product_codes'][fam_i]}-{3105 + 7 * i}"
        team = "rd-platform" if i % 2 else "rd-product"
        head = org.head(team)
        engineers = [p for p in org.in_dept(team, "engineer") if "manager" not in p.roles]
        leader, assistant, eng = rng.sample(engineers, 3)
        designer = rng.choice(org.in_dept("design-mech", "designer") + org.in_dept("design-elec", "designer"))
        contractor = org.first(team, "contractor")
        kickoff = office_time(rng, CLOCK_START + timedelta(days=18 + (i * 11) % 120 + rng.randint(0, 4)))
        pid = f"p{i + 1:02d}"
        members = [
            ProjectMember(user_id=leader.user_id, role="leader"),
            ProjectMember(user_id=assistant.user_id, role="assistant"),
            ProjectMember(user_id=eng.user_id, role="member"),
            ProjectMember(user_id=designer.user_id, role="member"),
            ProjectMember(
                user_id=contractor.user_id,
                role="external",
                valid_from=day(kickoff - timedelta(days=5)),
                valid_until=day(kickoff + timedelta(days=rng.randint(90, 200))),
            ),
        ]
        s.projects.append(Project(id=pid, name=name, members=members))
        proot = self.folder(root, name, kind="project")
        s.folders[proot].break_inheritance = True
        pfin = self.folder(proot, s.name("p_finance"), kind="project")
        pmeet = self.folder(proot, s.name("p_meetings"), kind="project")
        pweek = self.folder(proot, s.name("weekly"), kind="project")
        s.spaces.append(ProjectSpace(pid, proot, pfin, team))
        base = {"code": code, "project": name, "topic": topic, "model": model, "family": family}

        # charter: filed, approved, then (sometimes) the planned end moves
        budget_no = f"BGT-2026-{i + 31:03d}"
        filed = kickoff - timedelta(days=rng.randint(12, 20))
        approved = kickoff - timedelta(days=rng.randint(3, 8))
        end1 = day(kickoff + timedelta(days=rng.randint(150, 200)))
        charter_f = {
            **base,
            "leader": leader.name,
            "sponsor": head.name,
            "budget_no": budget_no,
            "filed": self.date(filed),
            "approved": self.date(approved),
            "kickoff": self.date(kickoff),
            "end": self.date(end1),
        }
        cv = [(filed, charter_f, "")]
        if rng.random() < 0.6:
            end2 = end1 + timedelta(days=rng.randint(30, 75))
            cv.append((self.when(kickoff, 40, 90, rng), {**charter_f, "end": self.date(end2)}, "end"))
        charter = self.doc(
            "charter", "docx", proot, self.fmt("charter", project=name, code=code), "internal", leader, cv
        )
        self.fact(charter, "leader", [code])
        self.fact(charter, "sponsor", [code])
        self.fact(charter, "end", [code])

        # budget: the rows add up; a revision changes rows and the total together
        accountant = org.in_dept("finance-accounting", "finance")[0]
        cfo = org.head("finance")
        rows = [rng.randint(8, 40) * 10000 for _ in self.W["names"]["budget_lines"]]
        bv = [(approved - timedelta(days=1), self._budget_facts(budget_no, rows, accountant, cfo), "")]
        if rng.random() < 0.6:
            rows2 = list(rows)
            j = rng.randrange(len(rows2))
            rows2[j] += rng.randint(2, 9) * 10000
            bv.append(
                (self.when(kickoff, 30, 70, rng), self._budget_facts(budget_no, rows2, accountant, cfo), "budget")
            )
        budget = self.doc("budget", "xlsx", pfin, self.fmt("budget", no=budget_no), "confidential", accountant, bv)
        self.fact(budget, "total", [budget_no])
        self.fact(budget, "preparer", [budget_no])

        # kickoff meeting
        room = rng.choice(self.W["names"]["rooms"])
        m1, m2 = day(kickoff + timedelta(days=rng.randint(25, 40))), day(kickoff + timedelta(days=rng.randint(60, 90)))
        kf = {
            **base,
            "date": self.date(kickoff),
            "room": room,
            "host": leader.name,
            "attendees": str(rng.randint(9, 24)),
            "m1": self.date(m1),
            "m2": self.date(m2),
        }
        ko = self.doc(
            "kickoff",
            "pptx",
            proot,
            self.fmt("kickoff", project=name, code=code),
            "internal",
            assistant,
            [(kickoff, kf, "")],
        )
        self.fact(ko, "room", [code])
        self.fact(ko, "attendees", [code])
        self.fact(ko, "m1", [code])

        # six weekly reports, two weeks apart, progress rising
        progress = sorted(rng.sample(range(5, 95), 6))
        risks = list(self.W["names"]["risks"])
        for n, pct in enumerate(progress):
            wk_t = kickoff + timedelta(days=14 + 14 * n + rng.randint(0, 3))
            week = f"{wk_t.isocalendar()[1]:02d}"
            owner = rng.choice([eng, designer, assistant])
            wf = {
                **base,
                "week": week,
                "progress": f"{pct}%",
                "reporter": assistant.name,
                "risk": risks[(i + n) % len(risks)],
                "risk_owner": owner.name,
                "date": self.date(wk_t),
            }
            wv = [(wk_t, wf, "")]
            if rng.random() < 0.3:  # the figure is corrected after the report was filed
                hi = progress[n + 1] if n + 1 < len(progress) else 98
                fixed = (
                    rng.randint(progress[n - 1] + 1 if n else 1, hi - 1)
                    if hi - (progress[n - 1] if n else 0) > 2
                    else pct
                )
                if fixed != pct:
                    wv.append((wk_t + timedelta(days=1, hours=2), {**wf, "progress": f"{fixed}%"}, "edit"))
            wd = self.doc("weekly", "md", pweek, self.fmt("weekly", project=name, week=week), "internal", assistant, wv)
            week_anchor = self.fmt("weekly_anchor", week=week)
            self.fact(wd, "progress", [code, week_anchor])
            self.fact(wd, "risk_owner", [code, week_anchor])

        # the prototype's test report
        tested = self.when(kickoff, 50, 80, rng)
        cases = rng.randint(60, 240)
        passed = cases - rng.randint(2, max(3, cases // 8))
        tf = {
            **base,
            "no": f"TST-{code[-3:]}-01",
            "date": self.date(tested),
            "tester": rng.choice([eng, designer]).name,
            "cases": str(cases),
            "passed": str(passed),
            "rate": f"{100 * passed / cases:.1f}%",
        }
        tv = [(tested, tf, "")]
        if rng.random() < 0.5:  # a retest after fixes: more cases pass
            again = self.when(tested, 7, 20, rng)
            passed2 = rng.randint(passed + 1, cases)
            tv.append(
                (
                    again,
                    {**tf, "passed": str(passed2), "rate": f"{100 * passed2 / cases:.1f}%", "date": self.date(again)},
                    "edit",
                )
            )
        tr = self.doc(
            "test_report", "docx", proot, self.fmt("test_report", date=self.date(tested)), "internal", eng, tv
        )
        self.fact(tr, "rate", [code, tf["no"]])
        self.fact(tr, "tester", [code, tf["no"]])

        # design review, then the minutes of its follow-up meeting
        review_no = f"RV-2026-{i + 41:03d}"
        review_t = self.when(kickoff, 30, 55, rng)
        chair = rng.choice([org.head("rd"), org.head("rd-platform" if team == "rd-product" else "rd-product")])
        verdicts = self.W["names"]["verdicts"]
        rf = {
            **base,
            "no": review_no,
            "date": self.date(review_t),
            "chair": chair.name,
            "verdict": verdicts[rng.randrange(len(verdicts))],
            "actions": str(rng.randint(2, 7)),
        }
        rv = self.doc(
            "review",
            "pdf",
            s.sub(team, "reviews"),
            self.fmt("review", no=review_no, project=name),
            "internal",
            leader,
            [(review_t, rf, "")],
        )
        self.fact(rv, "chair", [review_no])
        self.fact(rv, "verdict", [review_no])
        min_t = self.when(review_t, 2, 6, rng)
        owner = rng.choice([eng, designer])
        due = day(min_t + timedelta(days=rng.randint(10, 25)))
        mf = {
            **base,
            "date": self.date(min_t),
            "recorder": assistant.name,
            "owner": owner.name,
            "due": self.date(due),
            "review_no": review_no,
            "item": rng.choice(self.W["names"]["actions"]),
        }
        mn = self.doc(
            "minutes",
            "txt",
            pmeet,
            self.fmt("minutes", project=name, date=self.date(min_t)),
            "internal",
            assistant,
            [(min_t, mf, "")],
        )
        self.fact(mn, "owner", [code, mf["item"]])
        self.fact(mn, "due", [code, mf["item"]])

        self.product(i, base, pid, kickoff, designer, charter, rng)

    def _budget_facts(self, no: str, rows: list[int], preparer: Person, approver: Person) -> dict[str, Any]:
        labels = self.W["names"]["budget_lines"]
        return {
            "no": no,
            "rows": [[lab, self.s.common.fmt_money(r)] for lab, r in zip(labels, rows, strict=True)],
            "total": self.s.common.fmt_money(sum(rows)),
            "preparer": preparer.name,
            "approver": approver.name,
            "cost_center": f"CC-{no[-3:]}",
        }
