"""Recall, the product's central path: who asks (``principal_for``: the token decides; ``recall_for`` asks it),
then at most ``top_k`` documents that principal may preview as of an instant, best chunk each (``recall_as``).

Every front door calls these: the HTTP recall (``server/api/recall.py``), the answer (``simulator/answer``), the
MCP tools, the console's playground and the in-process target. They translate their own request into a
``RecallQuery`` and the ``RecallOutcome`` into their own response; nothing of who may see what is decided there.

Written against ``RecallHost``, the narrow view of the simulator recall reads (a ``Simulator`` is one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from drivebench.drive.errors import Forbidden, IndexUnavailable, PermissionCheckFailed, UnknownPrincipal
from drivebench.drive.permissions import pointintime
from drivebench.drive.permissions.engine import Principal

if TYPE_CHECKING:
    import numpy as np

    from drivebench.drive.model import DocumentRec
    from drivebench.drive.permissions import PermissionEngine
    from drivebench.drive.permissions.pointintime import PolicyEngines
    from drivebench.drive.state import Drive
    from drivebench.drive.tokens import TokenInfo, TokenRegistry
    from drivebench.search.index.chunk_store import ChunkStore
    from drivebench.search.retrieval.pipelines import Retriever
    from drivebench.search.retrieval.rerank import RerankingRetriever
    from drivebench.simulator.faults import FaultSet

log = logging.getLogger("drivebench.simulator")


@dataclass(frozen=True)
class RecallQuery:
    """One recall request, whatever door it came in by: the query, how many documents, who it is asked as
    (``user_id``/``user_role``/``department``: judged against the token), the instant (None: now), the filters
    (judged as of that instant; 400 when they cannot be applied) and, for the console's playground, another
    retrieval pipeline than the server's."""

    query: str
    top_k: int
    user_id: str | None = None
    user_role: str | None = None
    department: str | None = None
    as_of: datetime | None = None
    file_types: list[str] | None = None
    folder: str | None = None
    pipeline: str | None = None

    @property
    def filtered(self) -> bool:
        return self.file_types is not None or self.folder is not None


@dataclass(frozen=True)
class RecallHit:
    rank: int
    doc_id: str
    version_id: str
    name: str
    path: str
    file_type: str
    score: float
    chunk_id: int
    snippet: str
    part: str
    secret_level: int
    # the chunk id the caller is shown: None for a service token (the store's row, ``chunk_id``); for a user,
    # an opaque per-user number (rows are a global sequence: their gaps would count hidden chunks)
    shown_chunk_id: int | None = None

    @property
    def public_chunk_id(self) -> int:
        return self.chunk_id if self.shown_chunk_id is None else self.shown_chunk_id


@dataclass(frozen=True)
class RecallOutcome:
    """``snapshot`` and ``policy_version`` are the drive's global ones for a service token (evaluating as
    someone) and None for a user acting as itself: both move when anything changes, hidden things included."""

    principal: Principal
    at: datetime
    hits: list[RecallHit]
    snapshot: str | None
    policy_version: int | None


class RecallHost(Protocol):
    """What recall reads of the simulator: the drive and its policies, the index and its retrievers, the tokens
    (opaque chunk ids), the faults, and the simulator's own operations recall needs (index in sync first, the
    visible set, who a token acts as, the snapshot)."""

    policies: PolicyEngines
    store: ChunkStore
    faults: FaultSet
    tokens: TokenRegistry
    retriever: Retriever | RerankingRetriever

    @property
    def drive(self) -> Drive: ...

    @property
    def engine(self) -> PermissionEngine: ...

    def engine_at(self, at: datetime) -> PermissionEngine: ...

    def sync_index(self) -> object: ...

    def retriever_for(self, pipeline: str | None) -> Retriever | RerankingRetriever: ...

    def principal_for(
        self,
        token: TokenInfo,
        *,
        user_id: str | None = None,
        user_role: str | None = None,
        department: str | None = None,
    ) -> Principal: ...

    def visible_chunks(
        self,
        principal: Principal,
        at: datetime,
        doc_filter: Callable[[DocumentRec], bool] | None = None,
        fault_leaked: frozenset[str] = frozenset(),
        now: datetime | None = None,
        *,
        unfiltered: bool = False,
    ) -> np.ndarray: ...

    def snapshot(self) -> str: ...


# Every evaluate-as is logged; the in-memory trail keeps the newest ones only. Unbounded, a long probe session
# (tens of thousands of evaluate-as requests a minute) grew it without end, and every full garbage collection
# walked all of it while requests, writes included, waited.
AUDIT_KEEP = 10_000


def principal_for(
    policies: PolicyEngines,
    audit: list[dict[str, object]],
    token: TokenInfo,
    *,
    user_id: str | None = None,
    user_role: str | None = None,
    department: str | None = None,
    trust_body: bool = False,
) -> Principal:
    """Resolve who a request acts as. The token decides; the body may only narrow or, with the
    ``evaluate-as`` scope, name someone else (appended to ``audit`` and logged). ``trust_body`` is only ever
    true under the role-from-body fault: the body names who acts, whatever the token (``body_principal``)."""
    engine, drive = policies.engine, policies.drive
    if trust_body:
        return body_principal(policies, token, user_id=user_id, user_role=user_role, department=department)
    if token.user_id is not None:
        # a user token is judged against its own user before anything is looked up, so naming another
        # user, role or department answers the same 403 whether that name exists or not (no oracle)
        me = drive.user(token.user_id)
        if user_id is not None and user_id != me.user_id:
            raise Forbidden(f"this token acts as {me.user_id}; evaluating as {user_id} needs the evaluate-as scope")
        if user_role is not None and user_role not in me.roles:
            raise Forbidden(f"user {me.user_id} does not hold the role {user_role!r}")
        if department is not None and department != me.department:
            raise Forbidden(f"user {me.user_id} is not in department {department!r}")
        return engine.user_principal(me.user_id)
    if not token.has("evaluate-as"):
        raise Forbidden("this token may not evaluate as another principal")
    if user_id is not None and user_id not in drive.users:
        raise UnknownPrincipal(f"unknown user_id {user_id!r}")
    if user_role is not None and user_role not in drive.roles:
        raise UnknownPrincipal(f"unknown user_role {user_role!r}")
    if department is not None and department not in drive.departments:
        raise UnknownPrincipal(f"unknown department {department!r}")
    if user_id is not None:
        p = engine.user_principal(user_id)
        if user_role is not None and user_role not in p.roles:
            raise UnknownPrincipal(f"user {user_id} does not hold the role {user_role!r}")
    elif user_role is not None:
        p = engine.role_principal(user_role, department)
    else:
        raise UnknownPrincipal("a service token must name the principal: give user_id or user_role")
    principal = Principal(p.subject, p.user_id, p.roles, p.department, p.clearance, True, token.subject)
    entry: dict[str, object] = {"caller": token.subject, "as": p.subject, "at": drive.clock.now().isoformat()}
    audit.append(entry)
    if len(audit) > 2 * AUDIT_KEEP:  # the newest AUDIT_KEEP (the log has every one), trimmed in batches
        del audit[:-AUDIT_KEEP]
    log.info("evaluate-as %s by %s", p.subject, token.subject)
    return principal


def body_principal(
    policies: PolicyEngines,
    token: TokenInfo,
    *,
    user_id: str | None = None,
    user_role: str | None = None,
    department: str | None = None,
) -> Principal:
    """FAULT role-from-body: the principal the request body describes, as a vendor API that reads the role from
    the body would: the user ``user_id``; else the role ``user_role`` (in ``department``); else the token user's
    first role in ``department``. Unknown names answer 400 as they do for an evaluate-as."""
    engine, drive = policies.engine, policies.drive
    for kind, name, known in (
        ("user_id", user_id, drive.users),
        ("user_role", user_role, drive.roles),
        ("department", department, drive.departments),
    ):
        if name is not None and name not in known:
            raise UnknownPrincipal(f"unknown {kind} {name!r}")
    if user_id is not None:
        p = engine.user_principal(user_id)
        if user_role is not None and user_role not in p.roles:
            raise UnknownPrincipal(f"user {user_id} does not hold the role {user_role!r}")
    elif user_role is not None:
        p = engine.role_principal(user_role, department)
    elif token.user_id is not None and drive.user(token.user_id).roles:
        p = engine.role_principal(drive.user(token.user_id).roles[0], department)
    else:
        raise UnknownPrincipal("name the principal: give user_id or user_role")
    log.info("role-from-body: token %s acts as %s named in the body", token.subject, p.subject)
    return Principal(p.subject, p.user_id, p.roles, p.department, p.clearance, False, token.subject)


def principal_of(host: RecallHost, token: TokenInfo, query: RecallQuery) -> Principal:
    """Who ``query`` is asked as: the token decides; the query may only narrow it or, with the ``evaluate-as``
    scope, name someone else (``principal_for``: 403 for what the token may not do, 400 for a name the drive
    does not know)."""
    return host.principal_for(token, user_id=query.user_id, user_role=query.user_role, department=query.department)


def recall_for(host: RecallHost, token: TokenInfo, query: RecallQuery) -> RecallOutcome:
    """The whole recall for one caller: who the token acts as, then ``recall_as``."""
    return recall_as(host, principal_of(host, token, query), query)


def recall_as(
    host: RecallHost,
    principal: Principal,
    query: RecallQuery,
    doc_filter: Callable[[DocumentRec], bool] | None = None,
) -> RecallOutcome:
    """At most ``query.top_k`` documents ``principal`` may preview as of ``query.as_of`` (point-in-time rule:
    ``permissions.pointintime``), best chunk each. The filters are judged as of then (400 when they cannot be
    applied; a hidden folder answers like a missing one); ``doc_filter`` narrows further (in-process callers).
    ``query.pipeline``: another retrieval pipeline than the server's over the same index (the console's
    playground); everything else (mask, re-check, response) is the same code."""
    retriever = host.retriever_for(query.pipeline)
    with host.drive.lock:  # no write half-done: every change up to `at` is in the feed
        now = host.drive.clock.now()
        at = pointintime.resolve_as_of(host.policies, query.as_of)
    if query.filtered:
        request_filter = pointintime.recall_filter(host.policies, principal, at, now, query.file_types, query.folder)
        if doc_filter is None:
            doc_filter = request_filter
        elif request_filter is not None:
            first, second = doc_filter, request_filter
            doc_filter = lambda d: first(d) and second(d)  # noqa: E731
    host.sync_index()
    engine = host.engine_at(at)
    current = host.engine
    recheck_now = pointintime.intersects_now(principal, at, now)
    when = at if query.as_of is not None else None  # names and paths as they were then
    faults = host.faults if host.faults.touches_recall else None  # a clean recall asks no fault hook
    leaked = frozenset[str]()
    if faults is not None:  # FAULT leaky-acl: documents let through although hidden
        leaked = faults.leaky_acl_docs(host.policies, principal, query.query, at)
    try:
        mask = host.visible_chunks(principal, at, doc_filter, leaked, now)
    except IndexUnavailable:  # Milvus did not take the rows' validity: 503 index-unavailable, nothing shown
        raise
    except Exception as exc:  # fail closed
        raise PermissionCheckFailed(f"could not compute the visible set: {exc}") from exc
    top_k = query.top_k
    fetch_k = None if faults is None else faults.post_filter_fetch_k(top_k)  # FAULT post-filter; clean: None
    if fetch_k is None:
        doc_hits = retriever.search(query.query, mask, top_k)
    else:  # a fixed-size top-k without the filter, then what the principal may not see is dropped: under-fills
        wide = host.visible_chunks(principal, at, doc_filter, leaked, now, unfiltered=True)
        doc_hits = [h for h in retriever.search(query.query, wide, fetch_k) if mask[h.chunk_id]][:top_k]
    # a user sees per-user opaque chunk ids and no global counters (the evaluate-as tokens see them)
    shown = None if principal.evaluated_as else host.tokens.opaque("chunk-id", principal.subject)
    hits: list[RecallHit] = []
    for rank, h in enumerate(doc_hits, 1):
        doc = host.drive.doc(h.doc_id)
        # Defense in depth: every hit re-checked by the compiled decision (engine.decide_doc, proven equal
        # to Casbin's enforce; shares nothing with the search mask), at `at` and, for a principal acting
        # as itself in the past, now too. FAULT leaky-acl: bypassed, deliberately, for leaked docs only.
        if doc.doc_id not in leaked:
            try:
                allowed = engine.decide_doc(principal, doc.doc_id, "preview", at, doc.secret_level)
                if allowed and recheck_now:  # point in time: still previewable now
                    allowed = current.decide_doc(principal, doc.doc_id, "preview", now, doc.secret_level)
            except Exception as exc:
                raise PermissionCheckFailed(f"the permission re-check failed for {doc.doc_id}: {exc}") from exc
            if not allowed:
                raise PermissionCheckFailed(f"the search mask allowed {doc.doc_id} but the re-check denies it")
        hits.append(recall_hit(host, rank, doc, h.chunk_id, float(h.score), when, shown))
    if shown is not None:
        return RecallOutcome(principal, at, hits, None, None)
    return RecallOutcome(principal, at, hits, host.snapshot(), engine.policy_version)


def recall_hit(
    host: RecallHost, rank: int, doc: DocumentRec, chunk_id: int, score: float, when: datetime | None, shown: Any
) -> RecallHit:
    """One result: the document's name and path as of ``when`` (None: now), the chunk's text as its snippet,
    the chunk id the caller is shown (``shown``: a user's opaque numbering; None: the store's row)."""
    store = host.store
    text = store.texts[chunk_id]
    body = text.split("\n", 1)[1] if "\n" in text else text
    name, path = host.drive.doc_name_path_at(doc, when)
    return RecallHit(
        rank=rank,
        doc_id=doc.doc_id,
        version_id=store.version_ids[chunk_id],
        name=name,
        path=path,
        file_type=doc.file_type,
        score=score,
        chunk_id=chunk_id,
        snippet=body[:300],
        part=store.parts[chunk_id],
        secret_level=doc.secret_level,
        shown_chunk_id=None if shown is None else shown.encode(chunk_id),
    )


def answer_context(
    host: RecallHost, outcome: RecallOutcome, query: RecallQuery
) -> tuple[RecallOutcome, frozenset[str] | None]:
    """What the answer to ``outcome``'s recall is composed from, and the documents it may cite (None: every
    one it quotes). Clean: ``outcome`` itself. FAULT answer-unfiltered-context: the same search without the
    permission filter (never re-checked), citing only what ``outcome`` returned: the text may state what
    the principal may not preview while the results and citations stay clean."""
    if not host.faults.answer_unfiltered():
        return outcome, None
    principal, at = outcome.principal, outcome.at
    doc_filter = None
    if query.filtered:
        doc_filter = pointintime.recall_filter(
            host.policies, principal, at, host.drive.clock.now(), query.file_types, query.folder
        )
    wide = host.visible_chunks(principal, at, doc_filter, unfiltered=True)
    when = at if query.as_of is not None else None  # names and paths as they were then, as recall gives them
    hits = [
        recall_hit(host, rank, host.drive.doc(h.doc_id), h.chunk_id, float(h.score), when, None)
        for rank, h in enumerate(host.retriever.search(query.query, wide, query.top_k), 1)
    ]
    context = RecallOutcome(principal, at, hits, outcome.snapshot, outcome.policy_version)
    return context, frozenset(h.doc_id for h in outcome.hits)
