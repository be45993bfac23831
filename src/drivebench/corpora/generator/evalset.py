"""The evaluation set: questions with a principal, gold documents (pinned versions) and answer facts.

Kinds (``tags.kind``):

* ``single``: one fact of one document; gold = its version current at ``clock.now``.
* ``multi_hop``: follow a chain of references (``hops``, 2 or 3 documents); gold = the whole chain,
  the answer fact sits in the last hop.
* ``version``: a fact that changed between versions: ``tags.version`` = ``as_of`` (``as_of`` set to a
  day between two versions, gold = the version current then, the answer differs from the latest
  one) or ``latest`` (gold = the current version, whose answer differs from v1). A pinned version is
  always the one current at the query's time.
* ``permission``: the same question asked twice, by a principal who may preview the document
  (``tags.principal = allowed``, gold = the document) and by one who may not
  (``tags.principal = forbidden``, gold empty, ``forbidden`` = the document, ``tags.reason`` = why,
  ``tags.withheld_fact`` = what must not leak). ``tags.pair`` links the two.

Single-hop and permission questions carry ``tags.phrasing``: ``literal`` (the document's title and
field label) or ``paraphrase`` (synonyms the document does not contain, so lexical overlap is not
free). Version and multi-hop questions are literal.

Drawings (dxf) are asked about by what they say, never by their title or number, which make up their
file name: a part drawing by the part number in its title block, an assembly drawing by the overall
dimensions in its notes (``Hook.content``, ``common.content_question``), and so are the chains that
start at a drawing. A retriever that reads drawings as their file name only (the ``cad-blind``
fault) cannot find them.

Every gold document is visible to the asker at the query's time (``as_of`` or ``clock.now``), exists
then and is never trashed; every answer fact appears in the gold version's text. Askers are picked to
spread roles (with a preference for the document's own department); ``tags.length`` is measured on
the question (see ``content.CommonText.style_of`` and ``[length]`` in ``scenario/<lang>/common.toml``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.model import CLOCK_NOW, Chain, DocPlan, Hook, day
from drivebench.corpora.common.scenario import Scenario
from drivebench.formats.evalset import EvalQuery, GoldDoc

QUERIES_PER_DOC = 0.84
SHARES = {"hop2": 0.17, "hop3": 0.15, "pairs": 0.11, "version": 0.14}  # pairs count twice
STYLES = ("medium", "short", "long", "medium", "short", "medium", "long", "short", "medium", "long")
VERSION_MODES = ("as_of", "latest", "as_of")
PARAPHRASED = 0.4  # share of single-hop and permission questions asked in other words than the document's


def quotas(n: int) -> dict[str, int]:
    q = {k: max(1, round(n * v)) for k, v in SHARES.items()}
    q["single"] = max(1, n - q["hop2"] - q["hop3"] - 2 * q["pairs"] - q["version"])
    return q


@dataclass
class Ctx:
    s: Scenario
    model: AccessModel
    rng: random.Random
    role_use: Counter[str] = field(default_factory=Counter)
    user_use: Counter[str] = field(default_factory=Counter)
    type_use: Counter[str] = field(default_factory=Counter)
    doc_use: Counter[str] = field(default_factory=Counter)
    reason_use: Counter[str] = field(default_factory=Counter)
    alias_use: Counter[str] = field(default_factory=Counter)  # paraphrased subject -> documents it names
    asked: set[tuple[str, str]] = field(default_factory=set)
    queries: list[EvalQuery] = field(default_factory=list)
    n_style: int = 0

    def style(self) -> str:
        self.n_style += 1
        return STYLES[self.n_style % len(STYLES)]

    def sees(self, user: str, doc: DocPlan, t: datetime = CLOCK_NOW) -> bool:
        return doc.trashed_at is None and doc.created_at <= t and self.model.decide(user, doc.doc_id, t)

    def users(self) -> list[str]:
        return [p.user_id for p in self.s.org.people]

    def choose(self, users: Sequence[str], doc: DocPlan) -> str:
        """An asker: the least-used role first, then the least-used user, preferring the doc's department."""
        org = self.s.org
        top = org.top_department(doc.department)

        def key(u: str) -> tuple[float, float]:
            p = self.s.person(u)
            near = 3.0 if org.top_department(p.department) == top else 0.0
            return (self.role_use[p.role] + 0.5 * self.user_use[u] - near, self.rng.random())

        return min(users, key=key)

    def add(self, q: EvalQuery, gold_docs: Sequence[DocPlan]) -> None:
        assert q.user_id is not None
        self.asked.add((q.user_id, q.query))
        self.role_use[self.s.person(q.user_id).role] += 1
        self.user_use[q.user_id] += 1
        for ft in {d.file_type for d in gold_docs}:
            self.type_use[ft] += 1
        for d in gold_docs:
            self.doc_use[d.doc_id] += 1
        self.queries.append(q)

    def tags(self, kind: str, doc: DocPlan, user: str, text: str, hops: int, **extra: str) -> dict[str, str]:
        return {
            "kind": kind,
            "hops": str(hops),
            "length": str(self.s.common.style_of(text)),
            "file_type": doc.file_type,
            "department": self.s.org.top_department(doc.department),
            "role": self.s.person(user).role,
            "secret_level": doc.secret_level,
            "language": self.s.lang,
            "doc_kind": doc.kind,
            **extra,
        }


def _pick_balanced(ctx: Ctx, pool: list[tuple[DocPlan, Hook]]) -> tuple[DocPlan, Hook]:
    """The least-used file type, then the least-used document, at random among ties."""
    best = min(pool, key=lambda c: (ctx.type_use[c[0].file_type], ctx.doc_use[c[0].doc_id], ctx.rng.random()))
    pool.remove(best)
    return best


def _ask(ctx: Ctx, h: Hook, subject: str, attr: str, mode: str = "plain", when: str = "") -> str:
    ask = ctx.s.common.content_question if h.content else ctx.s.common.single_question
    return str(ask(ctx.rng, ctx.style(), subject, attr, h.answer, mode, when))


def _question(ctx: Ctx, h: Hook, mode: str = "plain", when: str = "") -> str:
    return _ask(ctx, h, h.subject, h.attr, mode, when)


def _phrased(ctx: Ctx, h: Hook) -> tuple[str, str]:
    """A question in the document's own words (``literal``) or, for about PARAPHRASED of the hooks that
    have one, in other words (``paraphrase``: a synonym for the attribute and, when it names only this
    document, for the subject)."""
    subject = h.alias_subject if h.alias_subject and ctx.alias_use[h.alias_subject] == 1 else None
    if ctx.rng.random() >= PARAPHRASED or not (subject or h.alias_attr):
        return _question(ctx, h), "literal"
    return _ask(ctx, h, subject or h.subject, h.alias_attr or h.attr), "paraphrase"


def _hook_pool(docs: list[DocPlan], pred: Callable[[DocPlan, Hook], bool]) -> list[tuple[DocPlan, Hook]]:
    """Hooks of untrashed documents whose title, and the hook's subject, name only that document."""
    names = Counter(x for d in docs for x in {d.subject, *(h.subject for h in d.hooks)})
    return [
        (d, h)
        for d in docs
        if d.trashed_at is None and names[d.subject] == 1
        for h in d.hooks
        if names[h.subject] == 1 and pred(d, h)
    ]


def _singles(ctx: Ctx, docs: list[DocPlan], quota: int) -> None:
    pool = _hook_pool(docs, lambda d, h: True)
    done = 0
    while done < quota and pool:
        doc, h = _pick_balanced(ctx, pool)
        users = [u for u in ctx.users() if ctx.sees(u, doc)]
        if not users:
            continue
        user = ctx.choose(users, doc)
        text, phrasing = _phrased(ctx, h)
        if (user, text) in ctx.asked:
            continue
        ctx.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                gold=[GoldDoc(doc_id=doc.doc_id, version_id=doc.version_id(len(doc.versions)))],
                tags=ctx.tags("single", doc, user, text, 1, phrasing=phrasing),
                answer_facts=[doc.versions[-1].facts[h.fact]],
            ),
            [doc],
        )
        done += 1


def _versions(ctx: Ctx, docs: list[DocPlan], quota: int) -> None:
    def changed(d: DocPlan, h: Hook) -> bool:
        return len({v.facts[h.fact] for v in d.versions}) > 1

    pool = _hook_pool([d for d in docs if len(d.versions) > 1], changed)
    done = 0
    while done < quota and pool:
        doc, h = _pick_balanced(ctx, pool)
        vals = [v.facts[h.fact] for v in doc.versions]
        mode = VERSION_MODES[done % len(VERSION_MODES)]
        at, when, k = CLOCK_NOW, "", len(vals)  # k: the 1-based version that answers
        if mode == "as_of":
            # a day strictly between versions i and i+1, the answer differing from the latest one, and
            # no move after it (so the document's folder then is its folder now; loaders that ignore
            # move history still agree on who could see it)
            moved = max((mv.at for mv in doc.moves), default=None)
            ks = [
                i
                for i in range(1, len(vals))
                if vals[i - 1] != vals[-1]
                and day(doc.versions[i].created_at) - day(doc.versions[i - 1].created_at) >= timedelta(days=2)
                and (moved is None or moved < day(doc.versions[i - 1].created_at))
            ]
            if not ks:
                mode = "latest"
            else:
                k = ctx.rng.choice(ks)
                lo, hi = day(doc.versions[k - 1].created_at), day(doc.versions[k].created_at)
                d = lo + timedelta(days=ctx.rng.randint(1, (hi - lo).days - 1))
                at, when = d + timedelta(hours=12), ctx.s.date(d)
        if mode == "latest" and vals[0] == vals[-1]:
            continue
        users = [u for u in ctx.users() if ctx.sees(u, doc, at)]
        if not users:
            continue
        user = ctx.choose(users, doc)
        text = _question(ctx, h, mode, when)
        if (user, text) in ctx.asked:
            continue
        ctx.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                gold=[GoldDoc(doc_id=doc.doc_id, version_id=doc.version_id(k))],
                tags=ctx.tags("version", doc, user, text, 1, version=mode),
                answer_facts=[vals[k - 1]],
                as_of=at if mode == "as_of" else None,
            ),
            [doc],
        )
        done += 1


def _multi_hop(ctx: Ctx, chains: list[Chain], hops: int, quota: int) -> None:
    pool = [c for c in chains if len(c.hops) == hops and all(d.trashed_at is None for d in c.hops)]
    kind_use: Counter[str] = Counter()
    chain_use: Counter[int] = Counter()
    done = 0
    for _ in range(3 * quota + 10):
        if done >= quota or not pool:
            break
        c = min(pool, key=lambda c: (chain_use[id(c)], kind_use[c.kind], ctx.rng.random()))
        chain_use[id(c)] += 1
        users = [u for u in ctx.users() if all(ctx.sees(u, d) for d in c.hops)]
        if not users or chain_use[id(c)] > 2:
            pool.remove(c)
            continue
        last = c.hops[-1]
        user = ctx.choose(users, last)
        text = c.texts[ctx.style()]
        if (user, text) in ctx.asked:
            continue
        kind_use[c.kind] += 1
        ctx.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=user,
                hops=[d.doc_id for d in c.hops],
                gold=[GoldDoc(doc_id=d.doc_id, version_id=d.version_id(len(d.versions))) for d in c.hops],
                tags=ctx.tags("multi_hop", last, user, text, hops, chain=c.kind),
                answer_facts=[last.versions[-1].facts[c.fact]],
            ),
            c.hops,
        )
        done += 1


def _permission_pairs(ctx: Ctx, docs: list[DocPlan], quota: int) -> None:
    """Documents no other query uses first; then any."""
    fresh = _hook_pool(docs, lambda d, h: not ctx.doc_use[d.doc_id])
    rest = _hook_pool(docs, lambda d, h: bool(ctx.doc_use[d.doc_id]))
    done = 0
    while done < quota and (fresh or rest):
        src = fresh or rest
        doc, h = _pick_balanced(ctx, src)
        if src is fresh and ctx.doc_use[doc.doc_id]:
            continue
        allowed = [u for u in ctx.users() if ctx.sees(u, doc)]
        denied = [u for u in ctx.users() if u not in allowed]
        if not allowed or not denied:
            continue
        reasons = {u: ctx.model.reason(u, doc.doc_id, CLOCK_NOW) for u in denied}
        present = set(reasons.values())
        reason = min(sorted(present), key=lambda r: (r == "no_grant", ctx.reason_use[r]))
        bad = ctx.choose([u for u in denied if reasons[u] == reason], doc)
        good = ctx.choose(allowed, doc)
        text, phrasing = _phrased(ctx, h)
        if (good, text) in ctx.asked or (bad, text) in ctx.asked:
            continue
        ctx.reason_use[reason] += 1
        pair = f"p{done + 1:03d}"
        fact = doc.versions[-1].facts[h.fact]
        ctx.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=good,
                gold=[GoldDoc(doc_id=doc.doc_id, version_id=doc.version_id(len(doc.versions)))],
                tags=ctx.tags("permission", doc, good, text, 1, principal="allowed", pair=pair, phrasing=phrasing),
                answer_facts=[fact],
            ),
            [doc],
        )
        ctx.add(
            EvalQuery(
                query_id="",
                query=text,
                user_id=bad,
                forbidden=[doc.doc_id],
                tags=ctx.tags(
                    "permission",
                    doc,
                    bad,
                    text,
                    1,
                    principal="forbidden",
                    pair=pair,
                    reason=reason,
                    withheld_fact=fact,
                    phrasing=phrasing,
                ),
            ),
            [],
        )
        done += 1


def build_evalset(
    s: Scenario, docs: list[DocPlan], chains: list[Chain], model: AccessModel, rng: random.Random, n: int | None = None
) -> list[EvalQuery]:
    """About ``QUERIES_PER_DOC`` queries per document unless ``n`` is given."""
    q = quotas(n if n is not None else max(12, round(len(docs) * QUERIES_PER_DOC)))
    ctx = Ctx(s, model, rng)
    for d in docs:
        ctx.alias_use.update({h.alias_subject for h in d.hooks if h.alias_subject})
    _multi_hop(ctx, chains, 2, q["hop2"])
    _multi_hop(ctx, chains, 3, q["hop3"])
    _versions(ctx, docs, q["version"])
    _permission_pairs(ctx, docs, q["pairs"])
    _singles(ctx, docs, sum(q.values()) + q["pairs"] - len(ctx.queries))  # fill up to the total
    for i, query in enumerate(ctx.queries, 1):
        query.query_id = f"q{i:04d}"
    return ctx.queries
