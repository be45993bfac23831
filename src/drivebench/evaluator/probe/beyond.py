"""Leaks beyond the result list: two probe classes that ask as one principal and judge as another.

``body-identity`` ("the target trusts the request body"): a low principal's own token sends the body fields the
request shape accepts (``user_role``, ``department``, ``user_id``) set to a real role it does not hold, a real
other department (its own role there, as a trusting API reads it) or a real other user, asking for a document
only that claimed identity may see. Each trial sends a control first (the same question, no identity field, the
same token): a trial whose control fails is not measured (a target that refuses everyone must not pass). A
result or citation of the claim that the token's principal may not preview and that the control did not return
is a leak; a refusal (4xx) or an answer within the principal's permissions is closed.

``shared-cache`` ("the target's cache is shared between principals"): a principal who may see a document asks
for it, and one who may not asks the same right after. With per-user tokens the two bodies are identical (no
identity field; each with its own token); with one token that names its principal in the body (an evaluation
token and a body with ``user_id``) only ``user_id`` differs. A result or citation of the second answer that the
second may not preview and that the first answer carried is a leak.

A class the target cannot be asked in (no identity field in the body, no per-user token, MCP) is
``not measured`` with the reason, never closed. Trials are sampled with the seed from the corpus ground truth.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from drivebench.evaluator.idmap import IdMapper, MapStats, is_unmapped
from drivebench.evaluator.probe.groundtruth import GroundTruth
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.evaluator.targets.profile import placeholder_names, render
from drivebench.formats.evalset import EvalQuery, RunHit, RunRecord
from drivebench.formats.target import ERROR_KINDS, TargetResponse

BODY, CACHE = "body-identity", "shared-cache"
IDENTITY_FIELDS = ("user_role", "department", "user_id")
# a claim answered with one of these is refused: closed (its control answered, so the token itself works)
REFUSED_KINDS = frozenset({"http_401", "http_403", "http_404", "http_4xx", "app_error"})
WAVE = 64  # cache trials whose first askers go before their second askers: "right after", within a bounded cache


@dataclass(frozen=True)
class Trial:
    """One trial: ``user_id`` is the principal judged (the token's), ``doc_id`` the document aimed at."""

    trial_id: str
    cls: str
    user_id: str
    doc_id: str
    query_kind: str = ""  # filled by ``with_queries`` once the documents are known
    query: str = ""
    claim_field: str | None = None  # body-identity: the field set, and the value it claims
    claim_value: str | None = None
    first_user: str | None = None  # shared-cache: who asks first (may see doc_id)
    mode: str | None = None  # shared-cache: "own tokens" or "user_id in the body"

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Sent:
    """One request of a trial: the body as sent and the token it is sent with."""

    query_id: str
    trial: Trial
    role: str  # body-identity: "control" | "claim"; shared-cache: "first" | "second"
    surface: str
    body: dict[str, Any]
    token: str | None


@dataclass
class Access:
    """How the run reaches the target: per-user tokens (keyed by corpus user id), the one token that names its
    principal in the body (the single token, or the tokens file's ``*``), and the body template's fields."""

    user_tokens: dict[str, str]
    shared_token: str | None
    fields: set[str]
    channel: str = "http"

    @classmethod
    def of(cls, target: HttpTarget, users: list[str], channel: str = "http") -> Access:
        known = set(users)
        own = {k: v for k, v in target.tokens.items() if k in known}
        shared = target.tokens.get("*") if target.tokens else target.token
        return cls(own, shared, set(placeholder_names(target.body_template)), channel)


@dataclass
class ClassPlan:
    cls: str
    trials: list[Trial] = field(default_factory=list)
    population: int = 0  # the trials that exist (the sample's cap)
    not_measured: str | None = None


def _visible(gt: GroundTruth, mask: np.ndarray) -> set[str]:
    return {d for i, d in enumerate(gt.engine.doc_ids) if mask[i] and not gt.trashed(d)}


def _user_visible(gt: GroundTruth, cache: dict[str, set[str]], user: str) -> set[str]:
    if user not in cache:
        cache[user] = _visible(gt, gt.mask(user))
    return cache[user]


def with_queries(plan: ClassPlan, builder: QueryBuilder) -> ClassPlan:
    """Each trial's question: the first attack query of the document it aims at (a trial whose document gives
    none is dropped)."""
    trials = []
    for t in plan.trials:
        asked = builder.queries_for(t.doc_id, 1)
        if asked:
            trials.append(replace(t, query_kind=asked[0][0], query=asked[0][1]))
    plan.trials = trials
    return plan


def plan_body(gt: GroundTruth, access: Access, n: int, seed: int) -> ClassPlan:
    """Up to ``n`` (low user, field, claimed value, document) trials, round-robin over the fields."""
    out = ClassPlan(BODY)
    fields = [f for f in IDENTITY_FIELDS if f in access.fields]
    if access.channel != "http":
        out.not_measured = "probed over HTTP only: an MCP tool call names no identity field to claim"
    elif not fields:
        out.not_measured = "the request body has no user_role, department or user_id: nothing to claim"
    elif not access.user_tokens:
        out.not_measured = (
            "needs each low principal's own token ([auth] tokens_file keyed by user id): a single token may be an "
            "evaluation token, which names its principal in the body by right"
        )
    if out.not_measured:
        return out
    engine, drive = gt.engine, gt.drive
    seen: dict[str, set[str]] = {}
    cells: dict[str, list[tuple[str, str, list[str]]]] = defaultdict(list)
    for low in sorted(access.user_tokens):
        mine = _user_visible(gt, seen, low)
        user = drive.users[low]
        claims: list[tuple[str, str, set[str]]] = []
        if "user_id" in fields:
            claims += [("user_id", u, _user_visible(gt, seen, u)) for u in gt.users() if u != low]
        if "user_role" in fields:
            for role in sorted(set(drive.roles) - set(user.roles)):
                claims.append(("user_role", role, _visible(gt, _mask(gt, engine.role_principal(role)))))
        if "department" in fields and user.roles:
            for dept in sorted(set(drive.departments) - {user.department}):
                p = engine.role_principal(user.roles[0], dept)
                claims.append(("department", dept, _visible(gt, _mask(gt, p))))
        for f, value, theirs in claims:
            extra = sorted(theirs - mine)
            if extra:
                cells[f].append((low, value, extra))
    out.population = sum(len(docs) for cell in cells.values() for _, _, docs in cell)
    rng = random.Random(seed)
    order = [f for f in fields if cells[f]]
    while len(out.trials) < n and order:
        for f in list(order):
            if len(out.trials) >= n:
                break
            cell = cells[f]
            i = rng.randrange(len(cell))
            low, value, docs = cell[i]
            doc = docs.pop(rng.randrange(len(docs)))
            if not docs:
                cell.pop(i)
                if not cell:
                    order.remove(f)
            tid = f"b{len(out.trials) + 1:04d}"
            out.trials.append(Trial(tid, BODY, low, doc, claim_field=f, claim_value=value))
    return out


def _mask(gt: GroundTruth, principal: Any) -> np.ndarray:
    return gt.engine.allowed_mask(principal, "preview", gt.now)


def plan_cache(gt: GroundTruth, access: Access, n: int, seed: int) -> ClassPlan:
    """Up to ``n`` (second asker, forbidden document) trials, each with the principal who sees the most among
    those who may see the document as the first asker."""
    out = ClassPlan(CACHE)
    if access.channel != "http":
        out.not_measured = "probed over HTTP only"
        return out
    if len(access.user_tokens) >= 2:
        mode, askers = "own tokens", sorted(access.user_tokens)
    elif access.shared_token and "user_id" in access.fields:
        mode, askers = "user_id in the body", gt.users()
    else:
        out.not_measured = (
            "two principals cannot be told apart: give per-user tokens ([auth] tokens_file) or one token with "
            "user_id in the body"
        )
        return out
    seen: dict[str, set[str]] = {}
    by_reach = sorted(askers, key=lambda u: (-len(_user_visible(gt, seen, u)), u))
    population: list[tuple[str, str, str]] = []
    for second in askers:
        mine = _user_visible(gt, seen, second)
        for doc in gt.docs():
            if doc in mine:
                continue
            first = next((u for u in by_reach if u != second and doc in _user_visible(gt, seen, u)), None)
            if first is not None:
                population.append((second, doc, first))
    out.population = len(population)
    random.Random(seed).shuffle(population)
    for i, (second, doc, first) in enumerate(population[:n], 1):
        out.trials.append(Trial(f"c{i:04d}", CACHE, second, doc, first_user=first, mode=mode))
    return out


# ---------------------------------------------------------------------------------------------- sending


def _body(target: HttpTarget, query: str, query_id: str, top_k: int, **identity: str | None) -> dict[str, Any]:
    values: dict[str, Any] = {"query": query, "top_k": top_k, "as_of": None, "query_id": query_id}
    values.update({f: identity.get(f) for f in IDENTITY_FIELDS})
    body: dict[str, Any] = render(target.body_template, values)
    return body


def requests_for(trial: Trial, target: HttpTarget, access: Access, surface: str, top_k: int) -> list[Sent]:
    """The trial's requests in the order they must be sent."""
    qid = f"{trial.trial_id}-{surface}"
    if trial.cls == BODY:
        token = access.user_tokens[trial.user_id]
        claim = {trial.claim_field or "": trial.claim_value}
        return [
            Sent(f"{qid}-control", trial, "control", surface, _body(target, trial.query, qid, top_k), token),
            Sent(f"{qid}-claim", trial, "claim", surface, _body(target, trial.query, qid, top_k, **claim), token),
        ]
    first_token: str | None
    second_token: str | None
    if trial.mode == "own tokens":
        body = _body(target, trial.query, qid, top_k)
        first_token, second_token = access.user_tokens[trial.first_user or ""], access.user_tokens[trial.user_id]
        first_body = second_body = body
    else:
        first_body = _body(target, trial.query, qid, top_k, user_id=trial.first_user)
        second_body = _body(target, trial.query, qid, top_k, user_id=trial.user_id)
        first_token = second_token = access.shared_token
    return [
        Sent(f"{qid}-first", trial, "first", surface, first_body, first_token),
        Sent(f"{qid}-second", trial, "second", surface, second_body, second_token),
    ]


class _AsSent:
    """A ``Target`` that sends each request's own body and token (``run_queries`` gives retries, concurrency and
    error records); the raw answers are kept for their citations."""

    def __init__(self, target: HttpTarget, sent: dict[str, Sent]) -> None:
        self.target, self.sent, self.name = target, sent, target.name
        self.raw: dict[str, dict[str, Any]] = {}

    async def _call(self, query: EvalQuery) -> TargetResponse:
        s = self.sent[query.query_id]
        resp = await self.target.send_body(s.surface, s.body, s.token)
        self.raw[query.query_id] = resp.raw
        return resp

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await self._call(query)

    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await self._call(query)

    async def aclose(self) -> None:
        await self.target.aclose()


async def send(
    target: HttpTarget,
    batches: list[list[Sent]],
    cfg: RunConfig,
    progress: Callable[[], None] | None = None,
) -> tuple[dict[str, RunRecord], dict[str, dict[str, Any]]]:
    """Send the batches one after the other (each batch concurrently, by surface); records and raw answers by id."""
    sent = {s.query_id: s for batch in batches for s in batch}
    wrapper = _AsSent(target, sent)
    records: dict[str, RunRecord] = {}
    try:
        for batch in batches:
            for surface in ("recall", "answer"):
                mine = [s for s in batch if s.surface == surface]
                if not mine:
                    continue
                queries = [EvalQuery(query_id=s.query_id, query=s.trial.query, user_id=s.trial.user_id) for s in mine]
                for rec in await run_queries(wrapper, queries, replace(cfg, mode=surface), progress):
                    records[rec.query_id] = rec
    finally:
        await wrapper.aclose()
    return records, wrapper.raw


# ---------------------------------------------------------------------------------------------- judging


def returned(rec: RunRecord, raw: dict[str, Any] | None, id_mapper: IdMapper | None) -> dict[str, list[str]]:
    """The corpus documents an answer carried, each with where (``result``, ``citation``); unmapped ids out."""
    hits: list[tuple[str, RunHit]] = [("result", h) for h in rec.results]
    for c in (raw or {}).get("citations") or []:
        if isinstance(c, dict) and isinstance(c.get("doc_id"), str) and c["doc_id"]:
            hits.append(("citation", RunHit(doc_id=c["doc_id"], version_id=c.get("version_id"))))
    out: dict[str, list[str]] = {}
    stats = MapStats()
    for where, hit in hits:
        mapped = id_mapper.map_hit(hit, stats) if id_mapper is not None else hit
        if not is_unmapped(mapped):
            places = out.setdefault(mapped.doc_id, [])
            if where not in places:
                places.append(where)
    return out


def judge_class(
    gt: GroundTruth,
    plan: ClassPlan,
    sent: list[Sent],
    records: dict[str, RunRecord],
    raw: dict[str, dict[str, Any]],
    id_mapper: IdMapper | None,
    channel: str = "http",
) -> dict[str, Any]:
    """The class's section of ``probe.json``: trials, measured, leaked, closed, errors by kind, every leak."""
    by_trial: dict[str, dict[tuple[str, str], Sent]] = defaultdict(dict)
    for s in sent:
        by_trial[s.trial.trial_id][(s.surface, s.role)] = s
    errors: Counter[str] = Counter()
    samples: dict[str, str] = {}
    closed: Counter[str] = Counter()
    leaks: list[dict[str, Any]] = []
    measured: set[str] = set()
    for trial in plan.trials:
        surfaces = sorted({surface for surface, _ in by_trial[trial.trial_id]})
        for surface in surfaces:
            first_role, second_role = ("control", "claim") if trial.cls == BODY else ("first", "second")
            a = by_trial[trial.trial_id][(surface, first_role)]
            b = by_trial[trial.trial_id][(surface, second_role)]
            ra, rb = records.get(a.query_id), records.get(b.query_id)
            failed = [r for r in (ra, rb) if r is None or r.error is not None]
            refused = trial.cls == BODY and rb is not None and rb.error is not None and rb.error_kind in REFUSED_KINDS
            if ra is None or ra.error is not None or (rb is not None and rb.error is not None and not refused):
                for r in failed:
                    kind = (r.error_kind if r is not None else None) or "missing"
                    kind = kind if kind in ERROR_KINDS else "other"
                    errors[kind] += 1
                    samples.setdefault(kind, ((r.error if r is not None else None) or "no record")[:300])
                continue
            measured.add(trial.trial_id)
            if refused:
                closed["refused"] += 1
                continue
            assert ra is not None and rb is not None
            before = returned(ra, raw.get(a.query_id), id_mapper)
            after = returned(rb, raw.get(b.query_id), id_mapper)
            if trial.cls == BODY:  # new under the claim: what the control, the token alone, did not return
                suspects = {d: w for d, w in after.items() if d not in before}
            else:  # the first asker's, served to the second
                suspects = {d: w for d, w in after.items() if d in before}
            found = [(d, w) for d, w in suspects.items() if gt.forbidden(trial.user_id, d)]
            if not found:
                closed["ignored" if trial.cls == BODY else "own answer"] += 1
            for doc, where in found:
                known = doc in gt.drive.documents
                leaks.append(
                    {
                        "class": trial.cls,
                        "trial_id": trial.trial_id,
                        "user_id": trial.user_id,
                        **({"field": trial.claim_field, "claimed": trial.claim_value} if trial.cls == BODY else {}),
                        **({"first_user": trial.first_user, "mode": trial.mode} if trial.cls == CACHE else {}),
                        "doc_id": doc,
                        "doc_path": gt.doc_path(doc) if known else None,
                        "secret_level": gt.level(doc) if known else None,
                        "aimed_at": trial.doc_id,
                        "surface": surface if channel == "http" else f"{channel}-{surface}",
                        "where": where,
                        "query_kind": trial.query_kind,
                        "query": trial.query,
                        "request_id": b.query_id,
                        "why_forbidden": _why(gt, trial.user_id, doc),
                    }
                )
    leaked = {x["trial_id"] for x in leaks}
    docs = Counter(x["doc_id"] for x in leaks)
    return {
        "state": "not measured" if plan.not_measured else "measured",
        "reason": plan.not_measured,
        "trials_planned": len(plan.trials),
        "population": plan.population,
        "requests": len(sent),
        "measured": len(measured),
        "not_measured": len(plan.trials) - len(measured),
        "leaked": len(leaked),
        "leaks_count": len(leaks),
        "closed": dict(closed),
        "errors": {k: {"count": n, "meaning": ERROR_KINDS[k], "sample": samples[k]} for k, n in errors.most_common()},
        "leaked_documents": [
            {"doc_id": d, "path": gt.doc_path(d) if d in gt.drive.documents else None, "leaks": n}
            for d, n in docs.most_common()
        ],
        "trials": [t.as_dict() for t in plan.trials],
        "leaks": leaks,
    }


def _why(gt: GroundTruth, user: str, doc: str) -> dict[str, Any]:
    if doc not in gt.drive.documents:
        return {"reason": "no-grant", "meaning": "the corpus has no such document", "path": []}
    return gt.why(user, doc).as_dict()


def run_class(
    target: HttpTarget,
    gt: GroundTruth,
    plan: ClassPlan,
    access: Access,
    cfg: RunConfig,
    surfaces: tuple[str, ...],
    *,
    id_mapper: IdMapper | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Send a planned class and judge it. Body-identity trials go in one batch (control and claim together: the
    claim's leak is what the control lacks); cache trials in waves, every first asker of a wave before its
    second askers."""
    per_trial = [
        [s for surface in surfaces for s in requests_for(t, target, access, surface, cfg.top_k)] for t in plan.trials
    ]
    sent = [s for group in per_trial for s in group]
    batches: list[list[Sent]] = []
    if plan.cls == BODY:
        batches = [sent] if sent else []
    else:
        for i in range(0, len(per_trial), WAVE):
            wave = [s for group in per_trial[i : i + WAVE] for s in group]
            batches += [[s for s in wave if s.role == "first"], [s for s in wave if s.role == "second"]]
    if batches:
        records, raw = asyncio.run(send(target, batches, cfg, progress))
    else:
        records, raw = {}, {}
        asyncio.run(target.aclose())
    return judge_class(gt, plan, sent, records, raw, id_mapper)
