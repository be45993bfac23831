"""The acme@3 world: every fact is drawn once, owned by one document, and rendered from the same numbers.

Python decides the structure (who works where, which document owns which fact, which identifier links
which documents, what changes between versions); every word comes from ``scenario/<lang>/world.toml`` and
the templates ``scenario/<lang>/world/<kind>.j2``. The zh and en corpora of one seed share one world.

Ownership and links (a fact is stated by its owner; other documents name only identifiers)::

    charter   (project code, name)      owns leader, sponsor, kickoff, planned end; names model M, budget no B
    budget    (budget no B)             owns line amounts and their total (the rows add up); no project name
    kickoff   (project code)            owns the meeting's room, host, attendance, milestones
    weekly    (project code, week)      owns progress, reporter, the risk and its owner
    review    (review no, project code) owns chair, conclusion, review date
    minutes   (project code)            owns the decision's owner and due date
    assembly  (model M)                 owns overall dimensions, designer; lists part numbers P
    part      (part no P, drawing no D) owns material, finish, thickness, supplier S
    bom       (model M)                 owns quantities, unit costs, their total
    contract  (PO no, supplier S, D)    owns quantity, unit price, total (= quantity x price), signer, dates
    acceptance(IQC no, PO no)           owns inspector, result, acceptance date (zip: report + packing list)
    payment   (payment no, PO no)       owns approver, payment date; pays the contract's total
    offer, training, policy, notice, event, press: people, HR, policy, IT and marketing facts

Dates are causal: filed before approved, planned before held, drawn before ordered, delivered before
accepted, accepted before paid. Nothing is created after ``LATEST``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.acme3.scenario import words
from drivebench.corpora.generator.documents.base import LATEST, ProjectSpace, Scenario
from drivebench.corpora.generator.folders import base_tree
from drivebench.corpora.generator.grants import structural
from drivebench.corpora.generator.model import CLOCK_START, DocPlan, VersionPlan, day, office_time, sub_rng
from drivebench.corpora.generator.names import story
from drivebench.corpora.generator.organisation import Person, build_org
from drivebench.formats.corpus import Move, Project, ProjectMember

SCALES: dict[str, int] = {"small": 4, "default": 12, "large": 60}  # projects; documents ~27 per project


@dataclass
class Fact:
    """An askable fact: ``doc.versions[i].facts[key]`` for every version ``i``; ``anchors`` name its entity."""

    doc: DocPlan
    key: str
    anchors: list[str]
    subject: dict[str, str]  # values the question templates may use to describe the entity


@dataclass
class Chain:
    """A multi-hop question: the question names ``start`` (words of hop 1); each hop names the next one's
    identifier; the answer is ``fact`` of the last hop."""

    kind: str
    hops: list[DocPlan]
    fact: Fact
    start: dict[str, str]


@dataclass
class World:
    s: Scenario
    docs: list[DocPlan] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    product_folders: dict[str, list[str]] = field(default_factory=dict)  # project id -> its product's folders


def project_count(scale: str | int) -> int:
    if isinstance(scale, str) and scale.strip().isdigit():
        scale = int(scale)
    if isinstance(scale, int):
        if scale < 1:
            raise ValueError("scale must be a positive document count")
        return max(2, round(scale / 27))
    try:
        return SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; use one of {sorted(SCALES)} or a document count") from None


_SPACE = re.compile(r"\s+")
HIDDEN = frozenset({"author", "title"})  # facts the templates get but the text may not show


def _norm(text: str) -> str:
    return _SPACE.sub("", text).lower()


def described(doc: DocPlan, version: int, asked: str) -> dict[str, str]:
    """The facts of ``doc``'s version ``version`` (0-based) that its text shows, except ``asked``: what a
    question may use to say which document it means."""
    v = doc.versions[version]
    text = _norm(v.spec.plain_text())
    return {k: x for k, x in v.facts.items() if k != asked and k not in HIDDEN and x and _norm(x) in text}


class Builder:
    def __init__(self, lang: str, seed: int, n_projects: int) -> None:
        n_users = min(200, 48 + max(0, n_projects - 14) * 4)
        self.s = Scenario(lang=lang, seed=seed, org=build_org(lang, n_users))
        base_tree(self.s)
        self.w = World(self.s)
        self.W = words(lang)
        self.seed = seed
        self.n = n_projects
        self.rng = sub_rng(seed, "v3:world")
        self.suppliers = self._supplier_names()

    # ------------------------------------------------------------------ helpers
    def date(self, d: datetime) -> str:
        return self.s.date(d)

    def money(self, amount: int) -> str:
        return self.s.money(amount)

    def fmt(self, key: str, **values: Any) -> str:
        return str(self.W["names"][key]).format(**values)

    def folder(self, *parts: str, owner: str | None = None, kind: str = "department") -> str:
        path = "/".join(parts)
        return self.s.folder(path, kind=kind, owner=owner)

    def doc(
        self,
        kind: str,
        file_type: str,
        folder: str,
        title: str,
        level: str,
        owner: Person,
        versions: list[tuple[datetime, dict[str, Any], str]],
    ) -> DocPlan:
        """A document whose version ``i`` renders ``versions[i]`` = (time, facts, note key)."""
        d = DocPlan(
            key=f"{kind}:{len(self.w.docs)}",
            kind=kind,
            file_type=file_type,
            folder=folder,
            name=f"{title}.{file_type}".replace("/", "-"),
            title=title,
            secret_level=level,
            owner=owner.user_id,
            department=owner.department,
            subject=title,
        )
        pool = list(self.W["boiler"][kind])
        extra = sub_rng(self.seed, f"v3:boiler:{len(self.w.docs)}").sample(pool, min(len(pool), 3))
        for when, facts, note in versions:
            f = {**facts, "title": title, "author": owner.name, "boiler": extra}
            spec = self.W["module"].document(kind, f)
            spec.file_type = file_type
            spec.language = self.s.lang
            spec.author = owner.name
            d.versions.append(
                VersionPlan(
                    spec=spec,
                    created_at=min(when, LATEST),
                    author=owner.user_id,
                    note=self.s.common.VERSION_NOTES[note] if note else "",
                    facts={k: v for k, v in f.items() if isinstance(v, str)},
                )
            )
        self.w.docs.append(d)
        return d

    def fact(self, doc: DocPlan, key: str, anchors: list[str], **_: str) -> Fact:
        """``key`` of ``doc`` is askable; what describes its entity is whatever the document itself says
        (``described``), so a question never names something only another document holds."""
        for v in doc.versions:
            if key not in v.facts:
                raise KeyError(f"{doc.kind}: no fact {key!r}")
            missing = [a for a in anchors if _norm(a) not in _norm(v.spec.plain_text())]
            if missing:
                raise ValueError(f"{doc.title}: anchors {missing} are not in the document")
        f = Fact(doc, key, anchors, described(doc, len(doc.versions) - 1, key))
        self.w.facts.append(f)
        return f

    def _supplier_names(self) -> list[str]:
        words_ = list(self.s.pool("partner_words"))
        trades = list(self.W["names"]["supplier_trades"])
        grid = [(w, t) for t in trades for w in words_]
        sub_rng(self.seed, "v3:suppliers").shuffle(grid)
        return [self.fmt("supplier", word=w, trade=t) for w, t in grid]

    def when(self, base: datetime, lo: int, hi: int, rng: random.Random) -> datetime:
        return office_time(rng, min(base + timedelta(days=rng.randint(lo, hi)), LATEST))

    # ------------------------------------------------------------------ the world
    def build(self) -> World:
        s = self.s
        projects_root = f"/{s.name('projects')}"
        for i in range(self.n):
            self.project(i, projects_root, sub_rng(self.seed, f"v3:project:{i}"))
        self.people_docs(sub_rng(self.seed, "v3:people"))
        self.policies(sub_rng(self.seed, "v3:policies"))
        self.notices(sub_rng(self.seed, "v3:notices"))
        self.events(sub_rng(self.seed, "v3:events"))
        self.lifecycle(sub_rng(self.seed, "v3:lifecycle"))
        structural(s)  # creates the folders version 1's structural grants name (the grants come later)
        return self.w

    def lifecycle(self, rng: random.Random) -> None:
        """What happens to documents after they are written: signed contracts are filed into a subfolder of
        their product's contract folder (the same grants reach it), and a few notices, press releases, training
        decks and weekly reports are deleted into the trash. Nothing is asked of a trashed document, and no
        chain runs through one."""
        for d in self.w.docs:
            if d.kind == "contract" and rng.random() < 0.4:
                at = office_time(rng, min(d.versions[-1].created_at + timedelta(days=rng.randint(20, 40)), LATEST))
                target = self.folder(d.folder, self.fmt("filed_folder"), owner="finance-procurement")
                d.moves.append(Move(at=at, from_folder=d.folder, to_folder=target))
                d.folder = target
        trashable = [d for d in self.w.docs if d.kind in ("notice", "press", "training", "weekly")]
        for d in rng.sample(trashable, max(1, len(trashable) // 12)):
            d.trashed_at = office_time(
                rng, min(d.versions[-1].created_at + timedelta(days=rng.randint(10, 60)), LATEST)
            )
        gone = {id(d) for d in self.w.docs if d.trashed_at is not None}
        self.w.facts = [f for f in self.w.facts if id(f.doc) not in gone]
        self.w.chains = [c for c in self.w.chains if not any(id(h) in gone for h in c.hops)]

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
        pd = {"project": name, "code": code}
        self.fact(charter, "leader", [code], **pd)
        self.fact(charter, "sponsor", [code], **pd)
        self.fact(charter, "end", [code], **pd)

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
        self.fact(budget, "total", [budget_no], no=budget_no, **pd)
        self.fact(budget, "preparer", [budget_no], no=budget_no, **pd)

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
        self.fact(ko, "room", [code], **pd)
        self.fact(ko, "attendees", [code], **pd)
        self.fact(ko, "m1", [code], **pd)

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
        self.fact(rv, "chair", [review_no], no=review_no, **pd)
        self.fact(rv, "verdict", [review_no], no=review_no, **pd)
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
        self.fact(mn, "owner", [code, mf["item"]], item=mf["item"], **pd)
        self.fact(mn, "due", [code, mf["item"]], item=mf["item"], **pd)

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

    def product(
        self,
        i: int,
        base: dict[str, str],
        pid: str,
        kickoff: datetime,
        designer: Person,
        charter: DocPlan,
        rng: random.Random,
    ) -> None:
        s, org = self.s, self.s.org
        model = base["model"]
        drawings = self.folder(s.sub("design", "drawings"), model, owner="design")
        contracts = self.folder(s.sub("finance-procurement", "contracts"), model, owner="finance-procurement")
        accept = self.folder(s.sub("finance-procurement", "inspections"), model, owner="finance-procurement")
        payments = s.sub("finance-accounting", "requests")
        self.w.product_folders[pid] = [drawings, contracts, accept]
        parts_pool = list(s.pool("parts"))
        part_idx = rng.sample(range(len(parts_pool)), 3)
        checker = org.head("design")
        drawn = self.when(kickoff, 10, 30, rng)
        asm_no = f"DWG-A{i + 1:03d}"
        parts = []
        for k, pi in enumerate(part_idx, 1):
            parts.append(
                {"pn": f"{model}-{k:02d}", "part": parts_pool[pi], "dwg": f"DWG-{(i * 3 + k) * 37 % 900 + 100:03d}{k}"}
            )
        L, W_, H = rng.randint(18, 60) * 10, rng.randint(12, 40) * 10, rng.randint(4, 20) * 10
        af = {
            **base,
            "no": asm_no,
            "dims": f"{L} x {W_} x {H} mm",
            "designer": designer.name,
            "checker": checker.name,
            "date": self.date(drawn),
            "parts": [[str(n), p["pn"], p["part"]] for n, p in enumerate(parts, 1)],
        }
        asm = self.doc(
            "assembly", "dxf", drawings, self.fmt("assembly", no=asm_no), "internal", designer, [(drawn, af, "")]
        )
        dims = self.fact(asm, "dims", [model])
        start = {"project": base["project"], "code": base["code"]}
        self.w.chains.append(Chain("project_assembly_dims", [charter, asm], dims, start))
        materials, finishes = list(s.pool("materials")), list(s.pool("finishes"))
        bom_rows = []
        for k, p in enumerate(parts):
            mat = rng.randrange(len(materials))
            pf = {
                **base,
                **p,
                "material": materials[mat],
                "finish": rng.choice(finishes),
                "thickness": f"{rng.choice([1.5, 2.0, 2.5, 3.0])} mm",
                "designer": designer.name,
                "checker": checker.name,
                "date": self.date(drawn),
                "rev": "A",
                "supplier": self.suppliers[(i * 3 + k) % len(self.suppliers)],
                "asm_no": asm_no,
            }
            pv = [(drawn, pf, "")]
            if rng.random() < 0.55:
                rev_t = self.when(drawn, 20, 60, rng)
                new_mat = materials[(mat + 1 + rng.randrange(len(materials) - 1)) % len(materials)]
                pv.append((rev_t, {**pf, "material": new_mat, "rev": "B", "date": self.date(rev_t)}, "material"))
            part = self.doc("part", "dxf", drawings, self.fmt("part", dwg=p["dwg"]), "internal", designer, pv)
            pdesc = {"pn": p["pn"], "part": p["part"], "model": model, "project": base["project"]}
            material = self.fact(part, "material", [p["pn"]], **pdesc)
            self.fact(part, "finish", [p["pn"]], **pdesc)
            qty = rng.choice([200, 300, 500, 800, 1000, 1200])  # the batch bought
            unit = rng.randint(8, 160)  # the contract's unit price, which the BOM costs a unit at
            per_set = rng.choice([1, 1, 2, 4])
            bom_rows.append(
                [
                    p["pn"],
                    p["part"],
                    str(per_set),
                    self.s.common.fmt_money(unit),
                    self.s.common.fmt_money(per_set * unit),
                ]
            )
            contract, ctf = self.contract(i, k, p, pf, qty, unit, part, contracts, rng)
            acc = self.acceptance(i, k, p, pf, ctf, contract, accept, rng)
            self.payment(i, k, pf, ctf, acc, payments, rng)
            # chains
            ctrt_fact = next(f for f in self.w.facts if f.doc is contract and f.key == "total")
            signer_fact = next(f for f in self.w.facts if f.doc is contract and f.key == "signer")
            insp_fact = next(f for f in self.w.facts if f.doc is acc and f.key == "inspector")
            # a part is named by its item in the assembly's parts list: its name would find the later hops
            start_project = {"project": base["project"], "code": base["code"], "item": str(k + 1)}
            start_model = {"model": model, "family": base["family"], "item": str(k + 1)}
            start_part = {"pn": p["pn"]}
            self.w.chains += [
                Chain("part_contract_total", [part, contract], ctrt_fact, start_part),
                Chain("part_contract_signer", [part, contract], signer_fact, start_part),
                Chain("project_part_material", [charter, asm, part], material, start_project),
                Chain("part_contract_inspector", [part, contract, acc], insp_fact, start_part),
                Chain("project_contract_total", [charter, asm, part, contract], ctrt_fact, start_project),
                Chain("model_acceptance_inspector", [asm, part, contract, acc], insp_fact, start_model),
            ]
        bom_total = sum(int(r[2]) * int(r[3].replace(",", "")) for r in bom_rows)
        bom_no = f"BOM-2026-{i + 61:03d}"
        bf = {
            **base,
            "no": bom_no,
            "rows": bom_rows,
            "total": self.s.common.fmt_money(bom_total),
            "preparer": designer.name,
            "date": self.date(drawn),
        }
        bom = self.doc("bom", "xlsx", drawings, self.fmt("bom", no=bom_no), "internal", designer, [(drawn, bf, "")])
        bom_total = self.fact(bom, "total", [bom_no])
        self.w.chains.append(Chain("project_bom_total", [charter, bom], bom_total, start))

    def contract(
        self,
        i: int,
        k: int,
        p: dict[str, str],
        pf: dict[str, Any],
        qty: int,
        unit: int,
        part: DocPlan,
        folder: str,
        rng: random.Random,
    ) -> tuple[DocPlan, dict[str, Any]]:
        org = self.s.org
        po = f"PO-2026-{i * 3 + k + 101:03d}"
        signer = rng.choice(org.in_dept("finance-procurement", "finance"))
        signed = self.when(part.versions[0].created_at, 5, 20, rng)
        deliver = day(signed + timedelta(days=rng.randint(15, 35)))
        f = {
            "po": po,
            "supplier": pf["supplier"],
            "part": p["part"],
            "dwg": p["dwg"],
            "qty": str(qty),
            "unit": self.s.common.fmt_money(unit),
            "total": self.s.common.fmt_money(qty * unit),
            "signer": signer.name,
            "rep": self.s.outsiders[-1 - (i * 3 + k) % len(self.s.outsiders)],
            "signed": self.date(signed),
            "deliver": self.date(deliver),
            "deliver_at": deliver,
        }
        versions = [(signed, f, "")]
        if rng.random() < 0.5:
            amend = self.when(signed, 7, 14, rng)
            deliver2 = day(deliver + timedelta(days=rng.randint(10, 25)))
            versions.append((amend, {**f, "deliver": self.date(deliver2), "deliver_at": deliver2}, "term"))
        d = self.doc(
            "contract",
            "pdf",
            folder,
            self.fmt("contract", po=po),
            "internal",
            signer,
            [(t, {k2: v for k2, v in ff.items() if k2 != "deliver_at"}, n) for t, ff, n in versions],
        )
        desc = {"po": po, "supplier": pf["supplier"], "part": p["part"]}
        self.fact(d, "total", [po], **desc)
        self.fact(d, "signer", [po], **desc)
        self.fact(d, "deliver", [po], **desc)
        return d, versions[-1][1]

    def acceptance(
        self,
        i: int,
        k: int,
        p: dict[str, str],
        pf: dict[str, Any],
        ctf: dict[str, Any],
        contract: DocPlan,
        folder: str,
        rng: random.Random,
    ) -> DocPlan:
        org = self.s.org
        iqc = f"IQC-2026-{i * 3 + k + 201:03d}"
        inspector = rng.choice(org.in_dept("rd-product", "engineer")[1:] + org.in_dept("design-mech", "designer"))
        at = self.when(ctf["deliver_at"], 1, 4, rng)
        results = self.W["names"]["results"]
        f = {
            "iqc": iqc,
            "po": ctf["po"],
            "supplier": pf["supplier"],
            "part": p["part"],
            "qty": ctf["qty"],
            "inspector": inspector.name,
            "result": results[rng.randrange(len(results))],
            "sample": str(rng.choice([13, 20, 32, 50])),
            "date": self.date(at),
        }
        d = self.doc(
            "acceptance",
            "zip",
            folder,
            self.fmt("acceptance", iqc=iqc),
            "internal",
            org.in_dept("finance-procurement", "finance")[-1],
            [(at, f, "")],
        )
        desc = {"iqc": iqc, "po": ctf["po"], "supplier": pf["supplier"], "part": p["part"]}
        self.fact(d, "inspector", [iqc], **desc)
        self.fact(d, "result", [iqc], **desc)
        return d

    def payment(
        self, i: int, k: int, pf: dict[str, Any], ctf: dict[str, Any], acc: DocPlan, folder: str, rng: random.Random
    ) -> None:
        org = self.s.org
        no = f"FK-2026-{i * 3 + k + 301:03d}"
        at = self.when(acc.versions[0].created_at, 3, 12, rng)
        approver = rng.choice([org.head("finance"), org.in_dept("finance-accounting", "finance")[0]])
        f = {
            "no": no,
            "po": ctf["po"],
            "supplier": pf["supplier"],
            "amount": ctf["total"],
            "approver": approver.name,
            "date": self.date(at),
            "iqc": acc.versions[0].facts["iqc"],
        }
        d = self.doc(
            "payment",
            "xlsx",
            folder,
            self.fmt("payment", no=no),
            "confidential",
            org.in_dept("finance-accounting", "finance")[1],
            [(at, f, "")],
        )
        self.fact(d, "approver", [no], no=no, po=ctf["po"], supplier=pf["supplier"])
        self.fact(d, "date", [no], no=no, po=ctf["po"], supplier=pf["supplier"])

    # ------------------------------------------------------------------ company-wide documents
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
            self.fact(d, "salary", [who], candidate=who, position=f["position"])
            self.fact(d, "start", [who], candidate=who, position=f["position"])
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
            self.fact(d, "trainer", [tno], course=course, no=tno, date=f["date"])
            self.fact(d, "hours", [tno], course=course, no=tno, date=f["date"])

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
                self.fact(d, f"v{j}", [f"POL-{n + 1:02d}"], name=pol["name"], no=f"POL-{n + 1:02d}")

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
            self.fact(d, "contact", [no], system=system, no=no, date=f["date"])
            self.fact(d, "hours", [no], system=system, no=no, date=f["date"])

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
            self.fact(d, "venue", [event], event=event, city=cities[ci])
            self.fact(d, "budget", [event], event=event, city=cities[ci])
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
            self.fact(pr, "attended", [event], event=event, city=cities[ci])


def build_world(lang: str, seed: int, scale: str | int) -> World:
    return Builder(lang, seed, project_count(scale)).build()
