"""The builder's shared means: the scenario, the words, documents rendered from facts, askable facts, and
what happens to documents after they are written (``lifecycle``)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.acme3.model import Fact, World, norm
from drivebench.corpora.acme3.scenario import words
from drivebench.corpora.common.folders import base_tree
from drivebench.corpora.common.model import DocPlan, VersionPlan, office_time, sub_rng
from drivebench.corpora.common.organisation import Person, build_org
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.formats.corpus import Move


class BuilderBase:
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

    def fact(self, doc: DocPlan, key: str, anchors: list[str]) -> Fact:
        """``key`` of ``doc`` is askable; what describes its entity is whatever the document itself says
        (``described``), so a question never names something only another document holds."""
        for v in doc.versions:
            if key not in v.facts:
                raise KeyError(f"{doc.kind}: no fact {key!r}")
            missing = [a for a in anchors if norm(a) not in norm(v.spec.plain_text())]
            if missing:
                raise ValueError(f"{doc.title}: anchors {missing} are not in the document")
        f = Fact(doc, key, anchors)
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
