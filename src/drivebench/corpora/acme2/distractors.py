"""Distractor documents: near-duplicate drafts, outdated copies in other folders, meeting notes quoting old
figures. Each one competes lexically with an authoritative document but never states its asked facts the
same way (a draft's figures are perturbed, a copy holds an old version, notes quote a superseded figure),
so the authoritative document stays the only one that answers. What a distractor *does* state identically
is recorded (``Distractors.same``) and never asked about.

Wording (folder names, titles, banners, note lines) comes from ``scenario/<lang>.toml``.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from drivebench.corpora.common.model import CLOCK_START, DocPlan, VersionPlan, office_time
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.render.spec import DocSpec, Section

ENTITY_KEYS = ("project", "product", "event", "partner", "candidate", "batch", "dept", "supplier", "topic")
DRAFT_SHARE = 0.3
COPY_SHARE = 0.5
SIMILAR_SHARE = 0.4
SIMILAR_KEYS = ("project", "product", "event", "partner", "code", "model")  # renamed in a look-alike
MINUTES_SHARE = 0.6
SKIP_KINDS = {"note"}

_AMOUNT = re.compile(r"^\d{1,3}(,\d{3})+$")
_ZH_DATE = re.compile(r"^(\d{4})年(\d{1,2})月(\d{1,2})日$")
_DIGITS = re.compile(r"\d+")


@dataclass
class Distractor:
    doc: DocPlan
    of: DocPlan
    kind: str  # draft | copy | minutes
    changed: dict[str, tuple[str, str]]  # fact -> (authoritative value, value the distractor states)


@dataclass
class Distractors:
    items: list[Distractor] = field(default_factory=list)
    same: set[tuple[int, str]] = field(default_factory=set)  # (id(original), fact) a distractor states as is

    def of(self, doc: DocPlan) -> list[Distractor]:
        return [d for d in self.items if d.of is doc]


def perturb(value: str, rng: random.Random, names: list[str]) -> str | None:
    """A plausible different value of the same shape, or None when there is no safe one."""
    if _AMOUNT.match(value):
        n = int(value.replace(",", ""))
        unit = 1000 if n >= 10000 else 10
        while True:
            m = max(unit, round(n * rng.choice([0.8, 0.85, 0.9, 1.1, 1.15, 1.2]) / unit) * unit)
            if m != n:
                return f"{m:,}"
    date = _ZH_DATE.match(value)
    if date:
        y, mo, d = (int(x) for x in date.groups())
        nd = d + rng.choice([-9, -6, -4, 3, 5, 8])
        nd = nd if 1 <= nd <= 28 else (d + 11 if d <= 17 else d - 11)
        return f"{y}年{mo}月{nd}日"
    if value in names:
        return rng.choice([n for n in names if n != value])
    runs = list(_DIGITS.finditer(value))
    if runs:
        last = runs[-1]
        digits = last.group()
        for _ in range(20):
            other = str(rng.randint(10 ** (len(digits) - 1) if len(digits) > 1 else 1, 10 ** len(digits) - 1))
            if other != digits:
                return value[: last.start()] + other + value[last.end() :]
    return None


def replace_all(spec: DocSpec, changes: dict[str, str]) -> DocSpec:
    out = copy.deepcopy(spec)

    def sub(text: str) -> str:
        for old, new in changes.items():
            text = text.replace(old, new)
        return text

    def walk(s: DocSpec) -> None:
        s.title = sub(s.title)
        s.title_block = {k: sub(v) for k, v in s.title_block.items()}
        for sec in s.sections:
            sec.heading = sub(sec.heading)
            sec.paragraphs = [sub(p) for p in sec.paragraphs]
            if sec.table is not None:
                sec.table = [[sub(c) for c in row] for row in sec.table]
            if sec.notes:
                sec.notes = sub(sec.notes)
        for m in s.members:
            walk(m.spec)

    walk(out)
    return out


def _parent(folder: str) -> str:
    return folder.rsplit("/", 1)[0] or "/"


def _entity(facts: dict[str, str]) -> str | None:
    return next((facts[k] for k in ENTITY_KEYS if facts.get(k)), None)


def _plan(orig: DocPlan, *, title: str, folder: str, versions: list[VersionPlan], kind: str) -> DocPlan:
    ext = orig.file_type
    return DocPlan(
        key=f"{orig.key}:{kind}",
        kind=f"{orig.kind}_{kind}",
        file_type=ext,
        folder=folder,
        name=f"{title}.{ext}".replace("/", "-"),
        title=title,
        secret_level=orig.secret_level,
        owner=orig.owner,
        department=orig.department,
        versions=versions,
        subject=title,
    )


def add_distractors(s: Scenario, docs: list[DocPlan], data: dict[str, Any], rng: random.Random) -> Distractors:
    """Create distractors for some of ``docs`` (folders go into ``s``); return them (not yet in ``docs``)."""
    words = data["distractors"]
    names = [p.name for p in s.org.people]
    out = Distractors()
    for orig in docs:
        if orig.trashed_at is not None or not orig.hooks or orig.kind in SKIP_KINDS:
            continue
        head = orig.versions[-1]
        asked = sorted({h.fact for h in orig.hooks})
        # outdated copy: every document with an asked fact that changed between versions
        old = orig.versions[0]
        changed_facts = [f for f in asked if old.facts.get(f) != head.facts.get(f)]
        if len(orig.versions) > 1 and changed_facts and rng.random() < COPY_SHARE:
            folder = s.folder(f"{_parent(orig.folder)}/{words['copies_folder']}")
            at = office_time(rng, min(head.created_at + timedelta(days=rng.randint(2, 20)), LATEST))
            title = words["copy_title"].format(title=orig.title)
            spec = copy.deepcopy(old.spec)
            version = VersionPlan(spec, at, old.author, "", dict(old.facts))
            doc = _plan(orig, title=title, folder=folder, versions=[version], kind="copy")
            out.items.append(Distractor(doc, orig, "copy", {f: (head.facts[f], old.facts[f]) for f in changed_facts}))
            out.same.update((id(orig), f) for f in asked if f not in changed_facts)
        # near-duplicate draft: the head's text with every asked fact perturbed
        if rng.random() < DRAFT_SHARE:
            changes = {f: perturb(head.facts[f], rng, names) for f in asked if head.facts.get(f)}
            if any(changes.values()):
                spec = replace_all(head.spec, {head.facts[f]: v for f, v in changes.items() if v})
                spec.title = words["draft_title"].format(title=orig.title)
                spec.sections.insert(0, Section(heading=spec.title, paragraphs=[words["draft_banner"]]))
                at = office_time(rng, max(CLOCK_START, orig.created_at - timedelta(days=rng.randint(3, 15))))
                facts = {**head.facts, **{f: v for f, v in changes.items() if v}}
                version = VersionPlan(spec, at, head.author, "", facts)
                folder = s.folder(f"{orig.folder}/{words['drafts_folder']}")
                doc = _plan(orig, title=spec.title, folder=folder, versions=[version], kind="draft")
                out.items.append(
                    Distractor(doc, orig, "draft", {f: (head.facts[f], v) for f, v in changes.items() if v})
                )
                out.same.update((id(orig), f) for f, v in changes.items() if not v)
        # a look-alike: the same kind of document about a similarly named project, product, event or partner
        # (its name and code changed, every asked fact different)
        if rng.random() < SIMILAR_SHARE and any(head.facts.get(k) for k in SIMILAR_KEYS):
            renames: dict[str, str] = {}
            for k in SIMILAR_KEYS:
                value = head.facts.get(k)
                if value and value not in renames:
                    renamed = perturb(value, rng, []) if k in ("code", "model") else None
                    renames[value] = renamed or words["similar_name"].format(name=value)
            changes = {f: perturb(head.facts[f], rng, names) for f in asked if head.facts.get(f)}
            if all(changes.values()):
                # longest first, so a product name is renamed before the model number inside it
                ordered = dict(
                    sorted(
                        {**renames, **{head.facts[f]: v for f, v in changes.items() if v}}.items(),
                        key=lambda kv: -len(kv[0]),
                    )
                )
                spec = replace_all(head.spec, ordered)
                title = replace_all(DocSpec(title=orig.title, file_type=orig.file_type), ordered).title
                at = office_time(rng, max(CLOCK_START, orig.created_at - timedelta(days=rng.randint(1, 30))))
                version = VersionPlan(
                    spec, at, head.author, "", {**head.facts, **{f: v for f, v in changes.items() if v}}
                )
                doc = _plan(orig, title=title, folder=orig.folder, versions=[version], kind="similar")
                out.items.append(
                    Distractor(doc, orig, "similar", {f: (head.facts[f], v) for f, v in changes.items() if v})
                )
        # meeting notes quoting a superseded figure of one asked fact
        entity = _entity(head.facts)
        if entity and rng.random() < MINUTES_SHARE:
            hook = rng.choice(orig.hooks)
            fake = perturb(head.facts.get(hook.fact, ""), rng, names) if head.facts.get(hook.fact) else None
            if fake:
                at = office_time(rng, max(CLOCK_START, orig.created_at - timedelta(days=rng.randint(1, 10))))
                title = words["minutes_title"].format(entity=entity, date=s.date(at))
                values = {"attr": hook.attr, "old": fake, "people": s.common.join_names(rng.sample(names, 3))}
                lines = [line.format(**values) for line in words["minutes_lines"]]
                spec = DocSpec(
                    title=title, file_type="md", language=s.lang, sections=[Section(words["minutes_heading"], lines)]
                )
                version = VersionPlan(spec, at, head.author, "", {hook.fact: fake})
                doc = _plan(orig, title=title, folder=orig.folder, versions=[version], kind="minutes")
                doc.file_type, doc.name = "md", f"{title}.md".replace("/", "-")
                out.items.append(Distractor(doc, orig, "minutes", {hook.fact: (head.facts[hook.fact], fake)}))
    return out
