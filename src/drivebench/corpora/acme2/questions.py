"""The acme@2 eval set: questions asked the way people ask, graded gold with a rationale, real chains.

Kinds (``tags.kind``) as in version 1: ``single``, ``version`` (``as_of``/``latest``), ``multi_hop``,
``permission`` (an allowed and a forbidden principal ask the same question). What version 2 changes:

* ``tags.phrasing``: ``paraphrase`` (a description of the document by its content, never its title, file
  name or id; the attribute in other words), ``abbreviation`` (business abbreviations: PO, BOM, IQC, NDA),
  ``vague`` (hedged, half-remembered), ``cross_language`` (asked in the other language of the scenario),
  ``known_item`` (names the document's title: at most ``KNOWN_ITEM`` of the set), ``chain`` (multi-hop).
  ``tags.noise = typo`` marks the ~5% with a typo or homophone; ``tags.target``: ``table_cell`` (xlsx),
  ``drawing`` (dxf), ``text``.
* gold: the authoritative document (grade 2 when there are several) plus every other non-distractor
  document that states the same fact of the same entity (grade 1); ``tags.rationale`` says why.
* askers: among those who may preview the gold, the ones who see least come first.
* chains: version 1's chains, rejected when a hop k >= 2 is in the asker's BM25 top 5 over the question alone
  (the audit measures the top 3).
* consistency: a question is dropped when a non-distractor document of the same entity states another
  value for the same fact at the question's time (counted: ``dropped_contradicted``); facts a distractor
  states unchanged are not asked.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.acme2.distractors import ENTITY_KEYS, Distractors
from drivebench.corpora.acme2.lexical import TitleWords
from drivebench.corpora.acme2.scenario import fillable
from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.lexical import TextIndex
from drivebench.corpora.common.model import CLOCK_NOW, Chain, DocPlan, Hook, day
from drivebench.corpora.common.scenario import Scenario
from drivebench.formats.evalset import EvalQuery, GoldDoc

QUERIES_PER_DOC = 0.84  # of the story's documents (distractors are not asked about)
SHARES = {"hop": 0.08, "version": 0.12, "pairs": 0.07}  # pairs count twice
KNOWN_ITEM = 0.06
VAGUE = 0.10
ABBREV = 0.10
CROSS = 0.10
TYPO = 0.05
ENTITY_ASKED = 0.5  # of the questions several documents answer: asked about the entity, not a document
# A chain is rejected when a hop k >= 2 is in the asker's BM25 top 5 over the question alone: the audit's
# criterion is the top 3 of the simulator's chunk-level BM25; whole-document BM25 here ranks a little
# differently, so the generator keeps a margin.
SHORTCUT_DEPTH = 5
NARROW = 40  # a principal who sees at most this many documents (guests, principals.py) ...
NARROW_TURNS = 12  # ... is asked this many times before users who see more get their turn
# People leave out the current year: "2026年3月2日" -> "3月2日", "2026秋季西安行业峰会" -> "秋季西安行业峰会",
# "March 2, 2026" -> "March 2", "Phoenix Industry Forum Fall 2026" -> "Phoenix Industry Forum Fall".
_YEAR = re.compile(r"2026年(?=\d)|2026(?=[春夏秋冬])|,? 2026(?![\d\-年])")


@dataclass
class Gen:
    s: Scenario
    data: dict[str, Any]
    other: dict[str, Any]  # the other language's scenario data
    other_docs: dict[int, DocPlan]  # id(doc) -> the same document in the other language's plan
    model: AccessModel
    rng: random.Random
    index: TextIndex
    titles: TitleWords
    distractors: Distractors
    story: list[DocPlan]  # the non-distractor documents
    entity_facts: frozenset[str] = frozenset()  # facts of an entity, not of one document (story.toml)
    visible: dict[str, int] = field(default_factory=dict)
    access: dict[str, set[str]] = field(default_factory=dict)  # user -> doc ids previewable now
    user_use: Counter[str] = field(default_factory=Counter)
    doc_use: Counter[str] = field(default_factory=Counter)
    asked: set[tuple[str, str]] = field(default_factory=set)
    queries: list[EvalQuery] = field(default_factory=list)
    report: Counter[str] = field(default_factory=Counter)
    phrasing_roll: int = 0

    # ---------------------------------------------------------------- principals
    def sees(self, user: str, doc: DocPlan, t: datetime = CLOCK_NOW) -> bool:
        return doc.trashed_at is None and doc.created_at <= t and self.model.decide(user, doc.doc_id, t)

    def asker(self, users: Sequence[str]) -> str:
        """Who sees least first (permission difficulty), spread over users: a principal who sees at most
        ``NARROW`` documents asks up to ``NARROW_TURNS`` questions in a row before the others' turn."""

        def key(u: str) -> tuple[int, int, float]:
            seen = self.visible.get(u, 0)
            return (self.user_use[u] // (NARROW_TURNS if seen <= NARROW else 2), seen, self.rng.random())

        return min(users, key=key)

    def users(self) -> list[str]:
        return [p.user_id for p in self.s.org.people]

    # ---------------------------------------------------------------- facts, entities, gold
    @staticmethod
    def entity(facts: dict[str, str]) -> tuple[str, str] | None:
        return next(((k, facts[k]) for k in ENTITY_KEYS if facts.get(k)), None)

    def facts_at(self, doc: DocPlan, t: datetime) -> dict[str, str]:
        n = doc.version_at(t)
        return doc.versions[n - 1].facts if n else {}

    def others(self, doc: DocPlan, fact: str, t: datetime) -> tuple[list[DocPlan], list[DocPlan]]:
        """Other story documents of the same entity stating ``fact`` at ``t``: (same value, other value)."""
        mine = self.facts_at(doc, t)
        ent = self.entity(mine)
        same: list[DocPlan] = []
        other: list[DocPlan] = []
        if ent is None or fact not in self.entity_facts:
            return same, other
        for d in self.story:
            if d is doc or d.created_at > t or d.trashed_at is not None:
                continue
            f = self.facts_at(d, t)
            if f.get(ent[0]) != ent[1] or fact not in f:
                continue
            (same if f[fact] == mine[fact] else other).append(d)
        return same, other

    def listing(self, doc: DocPlan, fact: str, t: datetime) -> tuple[list[DocPlan], list[DocPlan]]:
        """Story documents whose tables list a part drawing's part number at ``t`` (a bill of materials):
        (giving its material as the drawing does, giving another). A BOM row names the part's material, so
        it answers "the material of part no. X" too."""
        facts = self.facts_at(doc, t)
        pn, value = facts.get("pn"), facts.get(fact)
        same: list[DocPlan] = []
        other: list[DocPlan] = []
        if doc.kind != "part" or fact != "material" or not pn or not value:
            return same, other
        for d in self.story:
            n = d.version_at(t)
            if d is doc or not n or d.trashed_at is not None:
                continue
            spec = d.versions[n - 1].spec
            rows = [r for sec in spec.sections for r in (sec.table or []) if pn in r]
            if rows:
                (same if any(value == cell for r in rows for cell in r) else other).append(d)
        return same, other

    # ---------------------------------------------------------------- wording
    def describe(
        self, doc: DocPlan, facts: dict[str, str], data: dict[str, Any], abbrev: bool, t: datetime = CLOCK_NOW
    ) -> list[str]:
        """Every description of ``doc`` the data file's templates give for ``facts`` that no other story
        document of its kind also gets at ``t`` (shuffled): "the press release of the Chengdu event" says
        nothing when two events were in Chengdu, and the other press release would answer as well."""
        taken = self._taken(doc, data, abbrev, t)
        pool = [x for x in self._descriptions(doc, facts, data, abbrev) if x not in taken]
        self.rng.shuffle(pool)
        return pool

    def _taken(self, doc: DocPlan, data: dict[str, Any], abbrev: bool, t: datetime) -> set[str]:
        """The descriptions the other live story documents of ``doc``'s kind get (in ``data``'s language)."""
        if data is self.data:
            peers = [d for d in self.story if d.kind == doc.kind]
        else:  # the other language: the twins of the story's documents
            peers = [self.other_docs[id(d)] for d in self.story if d.kind == doc.kind and id(d) in self.other_docs]
        out: set[str] = set()
        for d in peers:
            facts = self.facts_at(d, t)
            if d is doc or not facts or d.trashed_at is not None:
                continue
            out.update(self._descriptions(d, facts, data, abbrev))
        return out

    def _descriptions(self, doc: DocPlan, facts: dict[str, str], data: dict[str, Any], abbrev: bool) -> list[str]:
        kind = data["kinds"].get(doc.kind, {})
        spoken = {k: _YEAR.sub("", v) for k, v in facts.items()}  # people leave out the current year
        templates = kind.get("abbrev" if abbrev else "describe", [])
        pool = fillable(templates, spoken)
        # what people call things in passing (the data file's `aliases`: "法务部" -> "法务那边", "Human
        # Resources" -> "HR"): each alias gives the same descriptions once more
        aliases = data.get("aliases", {})
        for key, value in spoken.items():
            for alias in aliases.get(value, []):
                pool += fillable(templates, {**spoken, key: alias})
        return list(dict.fromkeys(pool))

    def question(self, template_set: str, data: dict[str, Any], values: dict[str, str]) -> str:
        pool = fillable(data["questions"][template_set], values)
        return self.rng.choice(pool)

    def worded(
        self, template_set: str, data: dict[str, Any], values: dict[str, Any], subjects: list[str], gold: list[DocPlan]
    ) -> str | None:
        """The question of ``template_set`` over each description in ``subjects``; the one that echoes its
        gold documents' titles least (``TitleWords.echo``): people describe a document by what it is about,
        not by its title, so of the wordings the data file offers the generator keeps the least title-like."""
        texts = [self.question(template_set, data, {**values, "subject": s}) for s in subjects]
        texts = [x for x in texts if not any(f and _norm(f) in _norm(x) for f in values.get("_answers", []))]
        if not texts:
            return None
        return min(texts, key=lambda x: self.titles.echo(x, gold))

    def typo(self, text: str, rng: random.Random | None = None) -> str | None:
        subs = [(a, b) for a, b in self.data["typos"].items() if a in text]
        if not subs:
            return None
        a, b = (rng or self.rng).choice(subs)
        return text.replace(a, b, 1)

    def phrase(self, doc: DocPlan, h: Hook, t: datetime, mode: str = "plain", when: str = "") -> tuple[str, str] | None:
        """(question, phrasing) for hook ``h`` of ``doc`` at ``t``, or None when no wording fits."""
        self.phrasing_roll += 1
        roll = self.rng.random()
        facts = self.facts_at(doc, t)
        gold = [doc, *self.others(doc, h.fact, t)[0]]
        values: dict[str, Any] = {
            "attr": h.alias_attr or h.attr,
            "q": self.data["interrogative"][h.answer],
            "when": when,
            "_answers": [facts.get(h.fact, "")],  # a description never gives the answer away
        }
        template = {"plain": "paraphrase", "latest": "latest", "as_of": "as_of"}[mode]
        if mode == "plain" and roll < KNOWN_ITEM:
            title = doc.subject if not h.content else None
            if title:
                return self.question("known_item", self.data, {**values, "title": title, "attr": h.attr}), "known_item"
        if mode == "plain" and roll < KNOWN_ITEM + CROSS and id(doc) in self.other_docs:
            od = self.other_docs[id(doc)]
            oh = next((x for x in od.hooks if x.fact == h.fact), None)
            n = doc.version_at(t)
            if oh is not None and n:
                ofacts = od.versions[n - 1].facts
                ov = {
                    "attr": oh.alias_attr or oh.attr,
                    "q": self.other["interrogative"][oh.answer],
                    "_answers": [ofacts.get(h.fact, "")],
                }
                text = self.worded("paraphrase", self.other, ov, self.describe(od, ofacts, self.other, False, t), gold)
                if text:
                    return text, "cross_language"
        if mode == "plain" and roll < KNOWN_ITEM + CROSS + ABBREV:
            text = self.worded("paraphrase", self.data, values, self.describe(doc, facts, self.data, True, t), gold)
            if text:
                return text, "abbreviation"
        subjects = self.describe(doc, facts, self.data, False, t)
        if not subjects:
            return None
        style = "vague" if mode == "plain" and roll < KNOWN_ITEM + CROSS + ABBREV + VAGUE else template
        text = self.worded(style, self.data, values, subjects, gold)
        return (text, "vague" if style == "vague" else "paraphrase") if text else None

    def entity_question(self, doc: DocPlan, h: Hook) -> tuple[str, str] | None:
        """A question about the entity itself (the project's database, the event's date), not one document:
        every document of the entity that states the fact answers it. Phrasing ``vague``."""
        facts = doc.versions[-1].facts
        ent = self.entity(facts)
        if ent is None:
            return None
        # a project is as often named by its code (in every project document's text, in no title)
        name = facts["code"] if ent[0] == "project" and facts.get("code") else ent[1]
        if name.isdigit():  # a cohort's number says nothing on its own
            return None
        values = {"attr": h.alias_attr or h.attr, "q": self.data["interrogative"][h.answer]}
        names = [name, *self.data.get("aliases", {}).get(name, [])]
        gold = [doc, *self.others(doc, h.fact, CLOCK_NOW)[0]]
        text = self.worded("vague", self.data, {**values, "_answers": [facts.get(h.fact, "")]}, names, gold)
        return (text, "vague") if text else None

    def rationale(self, doc: DocPlan, fact: str, cogold: list[DocPlan], when: str) -> str:
        words = self.data["distractors"]
        for d in self.distractors.of(doc):
            if fact in d.changed:
                key = f"rationale_{d.kind}"
                return words[key].format(title=doc.title, other=d.doc.title, attr=fact, folder=d.doc.folder)
        if cogold:
            others = self.s.common.join_names([words["quoted_title"].format(title=d.title) for d in cogold])
            return words["rationale_cogold"].format(title=doc.title, others=others)
        if when:
            return words["rationale_asof"].format(title=doc.title, when=when)
        return words["rationale_plain"].format(title=doc.title)

    def tags(self, kind: str, doc: DocPlan, user: str, phrasing: str, hops: int, **extra: str) -> dict[str, str]:
        target = {"xlsx": "table_cell", "dxf": "drawing"}.get(doc.file_type, "text")
        return {
            "kind": kind,
            "hops": str(hops),
            "phrasing": phrasing,
            "target": target,
            "file_type": doc.file_type,
            "department": self.s.org.top_department(doc.department),
            "role": self.s.person(user).role,
            "secret_level": doc.secret_level,
            "language": self.s.lang,
            "doc_kind": doc.kind,
            **extra,
        }

    def add(self, q: EvalQuery, docs: Sequence[DocPlan]) -> None:
        assert q.user_id is not None
        self.asked.add((q.user_id, q.query))
        self.user_use[q.user_id] += 1
        for d in docs:
            self.doc_use[d.doc_id] += 1
        self.queries.append(q)

    def noisy(self, text: str, tags: dict[str, str]) -> str:
        if self.rng.random() < TYPO:
            changed = self.typo(text)
            if changed:
                tags["noise"] = "typo"
                return changed
        return text


def _askable(g: Gen) -> list[tuple[DocPlan, Hook]]:
    return [
        (d, h)
        for d in g.story
        if d.trashed_at is None
        for h in d.hooks
        if (id(d), h.fact) not in g.distractors.same and h.fact in d.versions[-1].facts
    ]


def _single_gold(
    g: Gen, doc: DocPlan, h: Hook, t: datetime, n: int, user: str
) -> tuple[list[GoldDoc], list[DocPlan]] | None:
    same, other = g.others(doc, h.fact, t)
    listed, listed_other = g.listing(doc, h.fact, t)
    same, other = same + listed, other + listed_other
    if other:
        g.report["dropped_contradicted"] += 1
        return None
    same = [d for d in same if g.sees(user, d, t)]
    gold = [GoldDoc(doc_id=doc.doc_id, version_id=doc.version_id(n), grade=2 if same else 1)]
    gold += [GoldDoc(doc_id=d.doc_id, version_id=d.version_id(d.version_at(t) or 1), grade=1) for d in same]
    return gold, same


def singles(g: Gen, quota: int) -> None:
    pool = _askable(g)
    g.rng.shuffle(pool)
    # questions several documents answer first (graded gold), then the least-asked documents
    pool.sort(key=lambda dh: (not g.others(dh[0], dh[1].fact, CLOCK_NOW)[0], g.doc_use[dh[0].doc_id]))
    done = 0
    for doc, h in pool:
        if done >= quota:
            break
        cogold = g.others(doc, h.fact, CLOCK_NOW)[0]
        if g.doc_use[doc.doc_id] >= 2 and not cogold:
            continue
        users = [u for u in g.users() if g.sees(u, doc)]
        users = [u for u in users if all(g.sees(u, d) for d in cogold)] or users  # who sees every valid answer
        if not users:
            continue
        user = g.asker(users)
        by_entity = g.entity_question(doc, h) if cogold and g.rng.random() < ENTITY_ASKED else None
        worded = g.phrase(doc, h, CLOCK_NOW)
        if by_entity is not None and (
            worded is None or g.titles.echo(by_entity[0], [doc, *cogold]) <= g.titles.echo(worded[0], [doc, *cogold])
        ):
            worded = by_entity  # the entity's name, unless it echoes the gold titles more than a description
        if worded is None:
            continue
        text, phrasing = worded
        picked = _single_gold(g, doc, h, CLOCK_NOW, len(doc.versions), user)
        if picked is None:
            continue
        gold, same = picked
        tags = g.tags("single", doc, user, phrasing, 1)
        text = g.noisy(text, tags)
        if (user, text) in g.asked:
            continue
        tags["rationale"] = g.rationale(doc, h.fact, same, "")
        g.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                gold=gold,
                tags=tags,
                answer_facts=[doc.versions[-1].facts[h.fact]],
            ),
            [doc],
        )
        done += 1


def versions(g: Gen, quota: int) -> None:
    pool = [
        (d, h) for d, h in _askable(g) if len(d.versions) > 1 and len({v.facts.get(h.fact) for v in d.versions}) > 1
    ]
    g.rng.shuffle(pool)
    done = 0
    for i, (doc, h) in enumerate(pool):
        if done >= quota:
            break
        vals = [v.facts.get(h.fact) for v in doc.versions]
        mode, at, when, k = ("as_of", "latest")[i % 2], CLOCK_NOW, "", len(vals)
        if mode == "as_of":
            moved = max((mv.at for mv in doc.moves), default=None)
            ks = [
                j
                for j in range(1, len(vals))
                if vals[j - 1] != vals[-1]
                and day(doc.versions[j].created_at) - day(doc.versions[j - 1].created_at) >= timedelta(days=2)
                and (moved is None or moved < day(doc.versions[j - 1].created_at))
            ]
            if not ks:
                mode = "latest"
            else:
                k = g.rng.choice(ks)
                lo, hi = day(doc.versions[k - 1].created_at), day(doc.versions[k].created_at)
                d = lo + timedelta(days=g.rng.randint(1, (hi - lo).days - 1))
                at, when = d + timedelta(hours=12), _YEAR.sub("", g.s.date(d))
        if mode == "latest" and vals[0] == vals[-1]:
            continue
        users = [u for u in g.users() if g.sees(u, doc, at)]
        if not users:
            continue
        user = g.asker(users)
        worded = g.phrase(doc, h, at, mode, when)
        picked = _single_gold(g, doc, h, at, k, user)
        if worded is None or picked is None:
            continue
        text, phrasing = worded
        gold, same = picked
        tags = g.tags("version", doc, user, phrasing, 1, version=mode)
        text = g.noisy(text, tags)
        if (user, text) in g.asked:
            continue
        tags["rationale"] = g.rationale(doc, h.fact, same, when)
        g.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                gold=gold,
                tags=tags,
                answer_facts=[str(vals[k - 1])],
                as_of=at if mode == "as_of" else None,
            ),
            [doc],
        )
        done += 1


def chains(g: Gen, pool: list[Chain], quota: int) -> None:
    """Version 1's chains whose later hops the question alone does not find (BM25 top 3 over all documents)."""
    styles = ("medium", "long", "short")
    candidates = [c for c in pool if all(d.trashed_at is None for d in c.hops)]
    g.rng.shuffle(candidates)
    done = 0
    for c in candidates:
        if done >= quota:
            break
        text = c.texts[styles[done % len(styles)]]
        users = [u for u in g.users() if all(g.sees(u, d) for d in c.hops)]
        if not users:
            continue
        last = c.hops[-1]
        user = g.asker(users)
        # as the asker sees the drive: fewer competitors than in the whole corpus
        top = g.index.top(text, SHORTCUT_DEPTH, g.access.get(user, set()))
        if any(d in top for d in c.hops[1:]):
            g.report["chains_rejected"] += 1
            continue
        g.report["chains_accepted"] += 1
        tags = g.tags("multi_hop", last, user, "chain", len(c.hops), chain=c.kind)
        words = g.data["distractors"]
        tags["rationale"] = words["rationale_plain"].format(title=" → ".join(d.title for d in c.hops))
        g.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                hops=[d.doc_id for d in c.hops],
                gold=[GoldDoc(doc_id=d.doc_id, version_id=d.version_id(len(d.versions))) for d in c.hops],
                tags=tags,
                answer_facts=[last.versions[-1].facts[c.fact]],
            ),
            c.hops,
        )
        done += 1


def permission_pairs(g: Gen, quota: int) -> None:
    """The same question from an allowed and a forbidden principal, where the document is the question's
    best lexical match (so a leaky index would hand it to the forbidden one first)."""
    pool = [(d, h) for d, h in _askable(g) if not g.doc_use[d.doc_id]]
    g.rng.shuffle(pool)
    done = 0
    for doc, h in pool:
        if done >= quota:
            break
        allowed = [u for u in g.users() if g.sees(u, doc)]
        denied = [u for u in g.users() if u not in allowed]
        if not allowed or not denied:
            continue
        worded = g.phrase(doc, h, CLOCK_NOW)
        if worded is None:
            continue
        text, phrasing = worded
        top = g.index.top(text, 1)  # over the whole drive: what a leaky index would rank first
        if not top or top[0] is not doc:
            continue
        good, bad = g.asker(allowed), g.asker(denied)
        picked = _single_gold(g, doc, h, CLOCK_NOW, len(doc.versions), good)
        if picked is None or (good, text) in g.asked or (bad, text) in g.asked:
            continue
        gold, same = picked
        reason = g.model.reason(bad, doc.doc_id, CLOCK_NOW)
        pair = f"p{done + 1:03d}"
        fact = doc.versions[-1].facts[h.fact]
        tags = g.tags("permission", doc, good, phrasing, 1, principal="allowed", pair=pair)
        tags["rationale"] = g.rationale(doc, h.fact, same, "")
        g.add(EvalQuery(query_id="", query=text, user_id=good, gold=gold, tags=tags, answer_facts=[fact]), [doc])
        bad_tags = g.tags("permission", doc, bad, phrasing, 1, principal="forbidden", pair=pair, reason=reason)
        bad_tags["withheld_fact"] = fact
        bad_tags["rationale"] = f"{reason}: {doc.doc_id}"
        g.add(EvalQuery(query_id="", query=text, user_id=bad, forbidden=[doc.doc_id], tags=bad_tags), [])
        done += 1


_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub("", text)


def typos_to_share(g: Gen) -> int:
    """Bring the share of questions with a typo or homophone up to ``TYPO``: ``noisy`` rolls ``TYPO`` per
    single and version question, but only questions one of the data file's ``[typos]`` occurs in can take
    one (so ~3.6-4% came out); pick the missing ones, seeded, among the other single and version questions
    a substitution applies to. Returns how many were added."""
    want = round(TYPO * len(g.queries)) - sum(1 for q in g.queries if q.tags.get("noise") == "typo")
    rng = random.Random(g.rng.getrandbits(64))
    pool = [q for q in g.queries if q.tags.get("kind") in ("single", "version") and "noise" not in q.tags]
    rng.shuffle(pool)
    added = 0
    for q in pool:
        if added >= want:
            break
        changed = g.typo(q.query, rng)
        if changed is None or (q.user_id, changed) in g.asked:
            continue
        g.asked.add((q.user_id or "", changed))
        q.query = changed
        q.tags["noise"] = "typo"
        added += 1
    return added


def build_evalset(g: Gen, chain_pool: list[Chain]) -> list[EvalQuery]:
    n = max(12, round(len(g.story) * QUERIES_PER_DOC))
    q = {k: max(1, round(n * v)) for k, v in SHARES.items()}
    chains(g, chain_pool, q["hop"])
    versions(g, q["version"])
    permission_pairs(g, q["pairs"])
    singles(g, n - len(g.queries))
    g.report["typos_added"] += typos_to_share(g)
    for i, query in enumerate(g.queries, 1):
        query.query_id = f"q{i:04d}"
        query.query = _WS.sub(" ", query.query).strip()
    return g.queries
