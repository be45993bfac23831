"""acme@3's eval set, drawn from the world's facts and chains with the words of ``scenario/<lang>/world.toml``.

Kinds (``tags.kind``), in the order they are drawn:

* ``multi_hop``: a chain of 2, 3 or 4 documents (``tags.hops``); the question names only the first hop's
  entity; every hop is gold (the last, which holds the answer, grade 2). Rejected when a later hop is in the
  top 3 of the independent whole-drive BM25 (``lexical.py``) over the question alone. The asker may preview
  every hop.
* ``version``: a fact that changed between versions, asked as of a time between two versions (``as_of``; the
  gold pins the version current then) or as of now (``tags.version = latest``; the head).
* ``permission``: a fact whose only source the asker may not preview: no gold, the source in ``forbidden``;
  kept only where that source is in the whole-drive BM25 top 5 for the question (a strong match).
* ``single``: one fact of one document the asker may preview, described by what it is about.

Every answered question carries ``answer_facts`` (the fact's value in the pinned version) and ``anchors``
(what names the entity whose fact is asked), which ``corpus audit``'s gold linter reads. Askers are
drawn with probability inversely proportional to how much they see, at most ``PER_ASKER`` questions each;
administrators and auditors do not ask.
"""

from __future__ import annotations

import itertools
import random
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from drivebench.corpora.acme3.world import Chain, Fact, World, described
from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.lexical import TextIndex
from drivebench.corpora.common.model import CLOCK_NOW, DocPlan, office_time
from drivebench.formats.evalset import EvalQuery, GoldDoc

PER_ASKER = 14


CROSS_LANGUAGE = 0.12
TYPO = 0.08
_PROTECTED = re.compile(r"[0-9A-Za-z]*[0-9][0-9A-Za-z-]*")  # numbers, dates' digits, codes


def _typo(text: str, names: list[str], keep: list[str], rng: random.Random, homophones: dict[str, str]) -> str:
    """``text`` with one slip in one of ``names``: a character typed as its homophone (``homophones``: what an
    input method offers first by mistake) where the data has one, else two neighbouring letters swapped;
    never in a digit, a code or anything of ``keep``."""
    sounds = []
    for name in names:
        start = text.find(name)
        for i in range(start, start + len(name)) if start >= 0 else ():
            if text[i] in homophones and not any(
                k and text.find(k) <= i < text.find(k) + len(k) for k in keep if k in text
            ):
                sounds.append(i)
    if sounds:
        i = rng.choice(sounds)
        return text[:i] + homophones[text[i]] + text[i + 1 :]
    spots = []
    for name in names:
        start = text.find(name)
        if start < 0:
            continue
        for i in range(start, start + len(name) - 1):
            a, b = text[i], text[i + 1]
            if a == b or not (a.isalpha() and b.isalpha()):
                continue
            if any(m.start() <= i + 1 and i < m.end() for m in _PROTECTED.finditer(text)):
                continue
            if any(k and k in text and text.find(k) <= i + 1 < text.find(k) + len(k) + 1 for k in keep):
                continue
            spots.append(i)
    if not spots:
        return text
    i = rng.choice(spots)
    return text[:i] + text[i + 1] + text[i] + text[i + 2 :]


# How people name what they ask about: by a code they copy from somewhere, by the entity's name, or by what
# they remember of it (who, when, where). Weights of the styles a question is drawn in.
STYLES = {"code": 0.2, "name": 0.2, "description": 0.6}
CODE_FIELDS = frozenset({"no", "po", "iqc", "dwg", "pn", "model", "code", "cost_center"})
NAME_FIELDS = frozenset({"project", "supplier", "candidate", "event", "topic"})


def _style(template: str) -> str:
    fields = _fields(template)
    if fields & CODE_FIELDS:
        return "code"
    if fields & NAME_FIELDS:
        return "name"
    return "description"


def _is_name(value: str) -> bool:
    """Letters and no digit: a name a typo may touch (``Project Galaxy``, ``云启精密机械有限公司``), never a code,
    a date or a number."""
    return any(c.isalpha() for c in value) and not any(c.isdigit() for c in value)


def _ambiguous(answer: str, others: dict[str, str]) -> bool:
    """The answer is part of another value the document states (``17`` people on a meeting held on March 17):
    a reader, or a linter, could not tell which one the question means."""
    return any(answer in v for v in others.values())


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _says(doc: DocPlan, key: str, value: str) -> bool:
    """Some version of ``doc`` has ``value`` for ``key``: a wording that fits it at any time is ambiguous."""
    return any(v.facts.get(key) == value for v in doc.versions)


SHORTCUT_DEPTH = 3  # a later hop in the top 3 over the question alone: the chain can be skipped
# the same among what the asker sees, with the simulator's tokenizer, deeper: a margin for what the
# simulator does differently (chunks, statistics over the visible set)
VISIBLE_SHORTCUT_DEPTH = 5
STRONG_MATCH = (
    2  # the forbidden source is in the whole-drive top 2 (the audit asks for its top 5 of the extracted text)
)
TARGET = {"multi_hop": 32, "as_of": 32, "latest": 20, "permission": 72}  # multi_hop: per hop count
MIN_GOLD_PER_TYPE = 22
TOTAL = 340


@dataclass
class Draw:
    world: World
    model: AccessModel
    index: TextIndex
    simulator_index: TextIndex
    words: dict[str, Any]
    rng: random.Random
    visible: dict[str, int]
    askers: list[str]
    asked: Counter[str] = field(default_factory=Counter)
    report: Counter[str] = field(default_factory=Counter)
    queries: list[EvalQuery] = field(default_factory=list)
    other_words: dict[str, Any] = field(default_factory=dict)
    kin: dict[tuple[str, str], list[Fact]] = field(default_factory=dict)
    last_tags: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in self.world.facts:
            self.kin.setdefault((f.doc.kind, f.key), []).append(f)

    # ------------------------------------------------------------------ helpers
    def seen_by(self, user: str, at: datetime = CLOCK_NOW) -> set[str]:
        return {d.doc_id for d in self.world.docs if self.model.decide(user, d.doc_id, at)}

    def sees(self, user: str, docs: list[DocPlan], at: datetime) -> bool:
        """``user`` may preview ``docs`` at ``at`` and still may now: a revoked grant takes effect at once, also
        for questions asked as of a past time, so an asker who lost access since would see nothing."""
        return all(self.model.decide(user, d.doc_id, at) and self.model.decide(user, d.doc_id, CLOCK_NOW) for d in docs)

    def asker(self, docs: list[DocPlan], at: datetime = CLOCK_NOW, forbidden: DocPlan | None = None) -> str | None:
        """One of the users who may preview ``docs`` at ``at`` (and may not preview ``forbidden``), at random
        among those who asked fewer than ``PER_ASKER`` questions."""
        ok = [
            u
            for u in self.askers
            if self.sees(u, docs, at) and (forbidden is None or not self.model.decide(u, forbidden.doc_id, at))
        ]
        fresh = [u for u in ok if self.asked[u] < PER_ASKER] or ok
        if not fresh:
            return None
        return self.rng.choice(fresh)

    def phrase(self, templates: tuple[str, ...], values: dict[str, str]) -> str:
        usable = [t for t in templates if _fields(t) <= values.keys()]
        if not usable:
            raise KeyError(f"no question template fits {sorted(values)}: {templates}")
        return self.rng.choice(usable).format(**values)

    def ask(self, fact: Fact, version: int | None = None) -> str | None:
        """A question about ``fact`` (of the 0-based ``version``, default the head) in one of the data's
        wordings that names exactly one document of its kind and does not state the answer; None if none does.
        About ``CROSS_LANGUAGE`` of them are asked in the scenario's other language where the wording needs
        only language-neutral values (codes, model numbers) or none; about ``TYPO`` get a typo in a word
        that names the entity (never in a number, a code or the answer)."""
        doc = fact.doc
        k = len(doc.versions) - 1 if version is None else version
        values = described(doc, k, fact.key)
        answer = doc.versions[k].facts[fact.key]
        key = f"{doc.kind}.{fact.key}"
        if _ambiguous(answer, values):
            self.report["ambiguous_answer"] += 1
            return None
        own = self.fitting(self.words["ask"][key], fact, values, answer)
        other = [
            t
            for t in self.fitting(self.other_words["ask"].get(key, ()), fact, values, answer)
            if all(values[f].isascii() for f in _fields(t))
        ]
        self.last_tags = {}
        if other and self.rng.random() < CROSS_LANGUAGE:
            self.last_tags = {"phrasing": "cross_language"}
            return self.rng.choice(other).format(**values)
        if not own:
            self.report["no_unambiguous_wording"] += 1
            return None
        template = self.choose(own)
        text = template.format(**values)
        if self.rng.random() < TYPO:
            names = [values[f] for f in sorted(_fields(template)) if _is_name(values[f])]
            typo = _typo(text, names, [answer, *fact.anchors], self.rng, dict(self.words.get("homophones", {})))
            if typo != text:
                self.last_tags["noise"] = "typo"
                return typo
        return text

    def choose(self, templates: list[str]) -> str:
        """A template, its style first (``STYLES``: naming a code, naming the entity, describing it by people,
        dates and places), then one of that style; styles the fact has no wording for drop out."""
        by_style: dict[str, list[str]] = {}
        for t in templates:
            by_style.setdefault(_style(t), []).append(t)
        styles = sorted(by_style)
        style = self.rng.choices(styles, weights=[STYLES[x] for x in styles])[0]
        self.last_tags = {"style": style}
        return self.rng.choice(by_style[style])

    def version_words(self) -> dict[str, str]:
        """How to say "as of" and "now" in the language the last question was asked in."""
        cross = self.last_tags.get("phrasing") == "cross_language"
        return dict((self.other_words if cross else self.words)["version"])

    def fitting(self, templates: tuple[str, ...], fact: Fact, values: dict[str, str], answer: str) -> list[str]:
        """The templates whose fields ``values`` fill, that do not state the answer and that fit no other
        document of the fact's kind (at any of its versions)."""
        doc = fact.doc
        fits = []
        for t in templates:
            fields = _fields(t)
            if not fields <= values.keys() or any(answer in values[f] for f in fields):
                continue
            same = [
                g
                for g in self.kin.get((doc.kind, fact.key), [])
                if g.doc is not doc and all(_says(g.doc, f, values[f]) for f in fields)
            ]
            if not same:
                fits.append(t)
        return fits

    def add(self, query: str, user: str, *, kind: str, gold: list[GoldDoc], fact: Fact | None, **extra: Any) -> None:
        self.asked[user] += 1
        tags = {"kind": kind, **self.last_tags, **{k: v for k, v in extra.pop("tags", {}).items()}}
        self.last_tags = {}
        if fact is not None:
            tags.setdefault("file_type", fact.doc.file_type)
            tags.setdefault("department", fact.doc.department)
            title = fact.doc.title
            named = any(a in title and a in query for a in fact.anchors)
            tags.setdefault("phrasing", "known_item" if named else "paraphrase")
        self.queries.append(
            EvalQuery(
                query_id=f"q{len(self.queries) + 1:04d}",
                query=query,
                user_id=user,
                gold=gold,
                tags=tags,
                **extra,
            )
        )

    # ------------------------------------------------------------------ kinds
    def chains(self) -> None:
        by_len: dict[int, list[Chain]] = {}
        for c in self.world.chains:
            by_len.setdefault(len(c.hops), []).append(c)
        for n in sorted(by_len):
            # round-robin over the chain kinds of this length, each kind's chains in a seeded order
            kinds: dict[str, list[Chain]] = {}
            for c in by_len[n]:
                kinds.setdefault(c.kind, []).append(c)
            for chains in kinds.values():
                self.rng.shuffle(chains)
            pool = [c for group in itertools.zip_longest(*kinds.values()) for c in group if c is not None]
            taken = 0
            ends: set[str] = set()
            for c in pool:
                if taken >= TARGET["multi_hop"]:
                    break
                if c.hops[-1].doc_id in ends:  # one question per answering document and length
                    continue
                text = self.phrase(self.words["chain"][c.kind], c.start)
                top = {d.doc_id for d in self.index.top(text, SHORTCUT_DEPTH)}
                if any(h.doc_id in top for h in c.hops[1:]):
                    self.report["chains_rejected_shortcut"] += 1
                    continue
                user = self.asker(c.hops)
                if user is None:
                    self.report["chains_rejected_no_asker"] += 1
                    continue
                seen = self.seen_by(user)
                top = {d.doc_id for d in self.simulator_index.top(text, VISIBLE_SHORTCUT_DEPTH, seen)}
                if any(h.doc_id in top for h in c.hops[1:]):  # what the asker sees ranks differently
                    self.report["chains_rejected_shortcut_visible"] += 1
                    continue
                last = c.hops[-1]
                if _ambiguous(last.versions[-1].facts[c.fact.key], described(last, len(last.versions) - 1, c.fact.key)):
                    self.report["ambiguous_answer"] += 1
                    continue
                gold = [
                    GoldDoc(doc_id=h.doc_id, version_id=h.version_id(len(h.versions)), grade=2 if h is last else 1)
                    for h in c.hops
                ]
                self.add(
                    text,
                    user,
                    kind="multi_hop",
                    gold=gold,
                    fact=c.fact,
                    hops=[h.doc_id for h in c.hops],
                    answer_facts=[last.versions[-1].facts[c.fact.key]],
                    anchors=list(c.fact.anchors),
                    tags={"hops": str(n), "chain": c.kind, "phrasing": "chain"},
                )
                ends.add(last.doc_id)
                taken += 1
            self.report[f"chains_{n}_hops"] = taken

    def versions(self) -> None:
        changes: list[tuple[Fact, int]] = []
        for f in self.world.facts:
            vs = f.doc.versions
            for k in range(len(vs) - 1):
                if vs[k].facts[f.key] != vs[k + 1].facts[f.key]:
                    changes.append((f, k))
        self.rng.shuffle(changes)
        as_of = latest = 0
        seen_latest: set[int] = set()
        for f, k in changes:
            vs = f.doc.versions
            if as_of < TARGET["as_of"]:
                lo, hi = vs[k].created_at, vs[k + 1].created_at
                t = office_time(self.rng, lo + (hi - lo) / 2)
                if lo < t < hi:
                    user = self.asker([f.doc], t)
                    q = self.ask(f, k)
                    if user is not None and q is not None:
                        text = self.version_words()["as_of"].format(
                            month=t.month, day=t.day, month_name=t.strftime("%B"), q=q, q_lower=q[:1].lower() + q[1:]
                        )
                        self.add(
                            text,
                            user,
                            kind="version",
                            gold=[GoldDoc(doc_id=f.doc.doc_id, version_id=f.doc.version_id(k + 1), grade=2)],
                            fact=f,
                            as_of=t,
                            answer_facts=[vs[k].facts[f.key]],
                            anchors=list(f.anchors),
                            tags={"version": "as_of"},
                        )
                        as_of += 1
                        continue
            if latest < TARGET["latest"] and id(f) not in seen_latest:
                user = self.asker([f.doc])
                q = self.ask(f)
                if user is None or q is None:
                    continue
                self.add(
                    self.version_words()["latest"].format(q=q, q_lower=q[:1].lower() + q[1:]),
                    user,
                    kind="version",
                    gold=[GoldDoc(doc_id=f.doc.doc_id, version_id=f.doc.version_id(len(vs)), grade=2)],
                    fact=f,
                    answer_facts=[vs[-1].facts[f.key]],
                    anchors=list(f.anchors),
                    tags={"version": "latest"},
                )
                seen_latest.add(id(f))
                latest += 1
        self.report["version_as_of"] = as_of
        self.report["version_latest"] = latest

    def permissions(self) -> None:
        pool = list(self.world.facts)
        self.rng.shuffle(pool)
        taken = 0
        docs_used: Counter[str] = Counter()
        for f in pool:
            if taken >= TARGET["permission"]:
                break
            if docs_used[f.doc.doc_id] >= 1:
                continue
            user = self.asker([], forbidden=f.doc)
            if user is None:
                continue
            text = self.ask(f)
            if text is None:
                continue
            strong = [{d.doc_id for d in index.top(text, STRONG_MATCH)} for index in (self.index, self.simulator_index)]
            if not all(f.doc.doc_id in top for top in strong):
                self.report["permission_rejected_weak_match"] += 1
                continue
            self.add(text, user, kind="permission", gold=[], fact=f, forbidden=[f.doc.doc_id], anchors=list(f.anchors))
            docs_used[f.doc.doc_id] += 1
            taken += 1
        self.report["permission"] = taken

    def singles(self) -> None:
        types = {d.doc_id: d.file_type for d in self.world.docs}
        gold_docs: dict[str, set[str]] = {}
        for q in self.queries:
            for g in q.gold:
                gold_docs.setdefault(types[g.doc_id], set()).add(g.doc_id)
        by_type: dict[str, list[Fact]] = {}
        for f in self.world.facts:
            by_type.setdefault(f.doc.file_type, []).append(f)
        for facts in by_type.values():
            self.rng.shuffle(facts)
        # first every file type up to MIN_GOLD_PER_TYPE gold documents (documents not yet gold first), then
        # round-robin over the types until the set has TOTAL questions
        queues = {t: sorted(fs, key=lambda f: f.doc.doc_id in gold_docs.get(t, set())) for t, fs in by_type.items()}
        used_docs: Counter[str] = Counter()

        def ask_one(f: Fact) -> bool:
            if used_docs[f.doc.doc_id] >= 2:
                return False
            user = self.asker([f.doc])
            text = self.ask(f)
            if user is None or text is None:
                return False
            self.add(
                text,
                user,
                kind="single",
                gold=[GoldDoc(doc_id=f.doc.doc_id, version_id=f.doc.version_id(len(f.doc.versions)), grade=2)],
                fact=f,
                answer_facts=[f.doc.versions[-1].facts[f.key]],
                anchors=list(f.anchors),
            )
            used_docs[f.doc.doc_id] += 1
            gold_docs.setdefault(f.doc.file_type, set()).add(f.doc.doc_id)
            return True

        for t in sorted(queues):
            for f in [f for f in queues[t] if f.doc.doc_id not in gold_docs.get(t, set())]:
                if len(gold_docs.get(t, set())) >= MIN_GOLD_PER_TYPE:
                    break
                if f.doc.doc_id not in gold_docs.get(t, set()) and ask_one(f):
                    queues[t].remove(f)
        while len(self.queries) < TOTAL and any(queues.values()):
            for t in sorted(queues):
                if queues[t] and len(self.queries) < TOTAL:
                    ask_one(queues[t].pop(0))
        self.report["single"] = sum(1 for q in self.queries if q.tags["kind"] == "single")


def build_evalset(draw: Draw) -> list[EvalQuery]:
    draw.chains()
    draw.versions()
    draw.permissions()
    draw.singles()
    return draw.queries
