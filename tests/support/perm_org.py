"""Random organisations for the permission property tests, and an independent reference oracle.

``orgs()`` draws a small organisation as a ``corpora.format.Manifest`` (nested departments, users
with roles and clearances, projects with time-bounded memberships, a folder tree with breaks and a
``/fin`` vs ``/fin-secret`` name trap, documents with secret levels, second versions and trash, and
allow/deny grants with validity windows on folders and documents) plus the text of every version.
``build_drive`` loads it with ``Drive.from_manifest(manifest, None)`` and puts the blobs itself.

``ref_may`` decides from the drive's records by the corpus format's written rules, without Casbin,
the compiler or the actions module: it is the oracle ``enforce`` and the fast path are held to.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from drivebench.drive.permissions import PermissionEngine, Principal
from drivebench.drive.state import Drive
from drivebench.formats.corpus import (
    SECRET_LEVELS,
    Clock,
    Department,
    Document,
    Folder,
    Grant,
    Manifest,
    Project,
    ProjectMember,
    Subject,
    User,
    Version,
)
from drivebench.simulator.backend import SimConfig, Simulator

# ---------------------------------------------------------------------------- example budgets
# `make test` runs the default profile (>= 2,000 examples over the property tests in this folder);
# HYPOTHESIS_PROFILE=more runs 10x as many, =quick a tenth.
_SCALE = {"quick": 0.1, "default": 1.0, "more": 10.0, "huge": 50.0}[os.environ.get("HYPOTHESIS_PROFILE", "default")]


def examples(n: int) -> settings:
    return settings(
        max_examples=max(5, int(n * _SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=True,
    )


# ---------------------------------------------------------------------------- time
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
TIMES = [T0 + timedelta(hours=h) for h in range(5)]
US = timedelta(microseconds=1)
# request times: every boundary, and one microsecond either side of it
QUERY_TIMES = sorted({t + d for t in TIMES for d in (-US, timedelta(0), US)} | {T0 + timedelta(hours=6)})
CREATED = T0 - timedelta(days=10)

ROLES = ("r0", "r1", "r2")
GHOST_ROLE = "r9"  # granted to, held by nobody
FOLDER_NAMES = ("fin", "fin-secret", "a", "b", "c")
WORDS = [
    "budget",
    "approval",
    "contract",
    "salary",
    "roadmap",
    "design",
    "review",
    "audit",
    "invoice",
    "release",
    "security",
    "policy",
    "vendor",
    "hiring",
    "travel",
    "expense",
    "项目",
    "预算",
    "审批",
    "合同",
    "设计",
    "安全",
]
ACTIONS = ("list", "preview", "download", "upload", "edit", "delete", "share", "manage")
# The corpus format's rule, written out independently of drivebench.drive.permissions.actions:
# an allow of X grants IMPLIES[X]; a deny of X takes away every action whose IMPLIES contains X.
IMPLIES = {
    "list": {"list"},
    "preview": {"preview", "list"},
    "download": {"download", "preview", "list"},
    "upload": {"upload", "preview", "list"},
    "delete": {"delete", "preview", "list"},
    "share": {"share", "preview", "list"},
    "edit": {"edit", "upload", "download", "preview", "list"},
    "manage": set(ACTIONS),
}


@dataclass
class Org:
    manifest: Manifest
    texts: dict[str, list[str]] = field(default_factory=dict)  # doc_id -> text per version


# Building a strategy costs more than drawing from it (hypothesis validates it and computes its labels each
# time), and ``orgs`` draws a few hundred values per organisation: the strategies are built once per distinct
# argument. Same elements in the same order, so the same draws as building them on the spot.
@lru_cache(maxsize=4096)
def _sampled(items: tuple[Hashable, ...]) -> st.SearchStrategy:
    return st.sampled_from(items)


@lru_cache(maxsize=4096)
def _none_or_sampled(items: tuple[Hashable, ...]) -> st.SearchStrategy:
    return st.one_of(st.none(), st.sampled_from(items))


@lru_cache(maxsize=256)
def _integers(lo: int, hi: int) -> st.SearchStrategy:
    return st.integers(lo, hi)


@lru_cache(maxsize=256)
def _unique_lists(items: tuple[Hashable, ...], min_size: int, max_size: int) -> st.SearchStrategy:
    return st.lists(st.sampled_from(items), min_size=min_size, max_size=max_size, unique=True)


_WORD_LISTS = st.lists(st.sampled_from(WORDS), min_size=3, max_size=12)
_TRASHED_AT = st.one_of(st.none(), st.none(), st.sampled_from(TIMES))
_SUBJECT_KINDS = st.sampled_from(("user", "role", "department", "project", "everyone"))


def _window(draw: st.DrawFn) -> tuple[datetime | None, datetime | None]:
    lo = draw(_none_or_sampled(tuple(TIMES)))
    hi = draw(_none_or_sampled(tuple(TIMES)))
    if lo is not None and hi is not None and lo >= hi:
        hi = None
    return lo, hi


@st.composite
def orgs(
    draw: st.DrawFn,
    max_depts: int = 5,
    max_users: int = 5,
    max_folders: int = 8,
    max_docs: int = 10,
    max_grants: int = 12,
    max_projects: int = 2,
) -> Org:
    n_depts = draw(_integers(1, max_depts))
    depts = []
    for i in range(n_depts):
        parent = None if i == 0 else draw(_none_or_sampled(tuple(f"d{j}" for j in range(i))))
        depts.append(Department(id=f"d{i}", name=f"dept {i}", parent=parent))
    dept_ids = [d.id for d in depts]

    users = [
        User(
            user_id=f"u{i}",
            name=f"user {i}",
            department=draw(_sampled(tuple(dept_ids))),
            roles=draw(_unique_lists(ROLES, 0, 2)),
            clearance=draw(_sampled(tuple(SECRET_LEVELS))),
        )
        for i in range(draw(_integers(1, max_users)))
    ]
    user_ids = [u.user_id for u in users]

    projects = []
    for p in range(draw(_integers(0, max_projects))):
        members = []
        for uid in draw(_unique_lists(tuple(user_ids), 0, 3)):
            lo, hi = _window(draw)
            members.append(ProjectMember(user_id=uid, valid_from=lo, valid_until=hi))
        projects.append(Project(id=f"p{p}", name=f"project {p}", members=members))

    paths = ["/"]
    breaks: dict[str, bool] = {"/": False}
    for _ in range(draw(_integers(0, max_folders))):
        parent = draw(_sampled(tuple(paths)))
        taken = {p.rsplit("/", 1)[1] for p in paths if p != "/" and (p.rsplit("/", 1)[0] or "/") == parent}
        free = [n for n in FOLDER_NAMES if n not in taken]
        if not free:
            continue
        path = ("" if parent == "/" else parent) + "/" + draw(_sampled(tuple(free)))
        paths.append(path)
        breaks[path] = draw(_integers(0, 4)) == 0
    folders = [Folder(path=p, break_inheritance=breaks[p]) for p in paths]

    docs, texts = [], {}
    for i in range(draw(_integers(1, max_docs))):
        doc_id = f"x{i:02d}"
        n_versions = draw(_integers(1, 2))
        created = [CREATED] + ([draw(_sampled(tuple(TIMES[1:])))] if n_versions == 2 else [])
        versions = [
            Version(version_id=f"{doc_id}-v{n}", version=n, file=f"files/{doc_id}/v{n}.md", created_at=at)
            for n, at in enumerate(created, 1)
        ]
        texts[doc_id] = [f"{doc_id} v{n} " + " ".join(draw(_WORD_LISTS)) for n in range(1, n_versions + 1)]
        docs.append(
            Document(
                doc_id=doc_id,
                name=f"{doc_id}.md",
                folder=draw(_sampled(tuple(paths))),
                file_type="md",
                secret_level=draw(_sampled(tuple(SECRET_LEVELS))),
                created_at=CREATED,
                versions=versions,
                trashed_at=draw(_TRASHED_AT),
            )
        )
    doc_ids = [d.doc_id for d in docs]

    grants = []
    for i in range(draw(_integers(0, max_grants))):
        kind = draw(_SUBJECT_KINDS)
        if kind == "project" and not projects:
            kind = "everyone"
        ident = {
            "user": lambda: draw(_sampled(tuple(user_ids))),
            "role": lambda: draw(_sampled((*ROLES, GHOST_ROLE))),
            "department": lambda: draw(_sampled(tuple(dept_ids))),
            "project": lambda: draw(_sampled(tuple(p.id for p in projects))),
            "everyone": lambda: None,
        }[kind]()
        on_doc = draw(_integers(0, 3)) == 0
        lo, hi = _window(draw)
        grants.append(
            Grant(
                grant_id=f"g{i:02d}",
                path=None if on_doc else draw(_sampled(tuple(paths))),
                doc_id=draw(_sampled(tuple(doc_ids))) if on_doc else None,
                subject=Subject(kind=kind, id=ident),
                actions=draw(_unique_lists(ACTIONS, 1, 2)),
                effect="deny" if draw(_integers(0, 3)) == 0 else "allow",
                valid_from=lo,
                valid_until=hi,
            )
        )
    manifest = Manifest(
        name="perm-prop",
        language="en",
        clock=Clock(start=CREATED, now=TIMES[2]),
        departments=depts,
        users=users,
        projects=projects,
        folders=folders,
        documents=docs,
        grants=grants,
    )
    return Org(manifest, texts)


def build_drive(org: Org) -> Drive:
    drive = Drive.from_manifest(org.manifest, None)
    for doc_id, texts in org.texts.items():
        doc = drive.documents[doc_id]
        for v, text in zip(doc.versions, texts, strict=True):
            data = f"# {doc_id}\n\n{text}\n".encode()
            doc.versions[doc.versions.index(v)] = replace(v, blob=drive.put_blob(data), size=len(data))
    return drive


def build_sim(org: Org) -> Simulator:
    sim = Simulator(build_drive(org), SimConfig(embedder="hash", use_cache=False, pipeline="dense"))
    sim.ingest_all()
    assert not sim.ingest_report.rejected, sim.ingest_report.rejected
    return sim


# ---------------------------------------------------------------------------- principals
def principals(drive: Drive, engine: PermissionEngine) -> list[Principal]:
    """Every user, and every held role alone and within each department."""
    out = [engine.user_principal(u) for u in sorted(drive.users)]
    for role in sorted(drive.roles):
        out.append(engine.role_principal(role))
        out.extend(engine.role_principal(role, d) for d in sorted(drive.departments))
    return out


# ---------------------------------------------------------------------------- the oracle
def _valid(lo: datetime | None, hi: datetime | None, t: datetime) -> bool:
    return (lo is None or lo <= t) and (hi is None or t < hi)


def _subject_matches(drive: Drive, p: Principal, subject: str, t: datetime) -> bool:
    if subject == "everyone":
        return True
    kind, _, ident = subject.partition(":")
    if p.user_id is not None:
        u = drive.users[p.user_id]
        if kind == "user":
            return ident == u.user_id
        if kind == "role":
            return ident in u.roles
        if kind == "dept":
            return ident in drive.department_chain(u.department)
        if kind == "project":
            project = drive.projects.get(ident)
            return project is not None and any(
                m.user_id == u.user_id and _valid(m.valid_from, m.valid_until, t) for m in project.members
            )
        return False
    if kind == "role":
        return ident in p.roles
    if kind == "dept":
        return p.department is not None and ident in drive.department_chain(p.department)
    return False


def _reaches(drive: Drive, grant_folder: str | None, grant_doc: str | None, kind: str, ident: str) -> bool:
    if grant_doc is not None:
        return kind == "doc" and grant_doc == ident
    node: str | None = drive.documents[ident].folder_id if kind == "doc" else ident
    while node is not None:
        if node == grant_folder:
            return True
        folder = drive.folders[node]
        if folder.break_inheritance:
            return False
        node = folder.parent_id
    return False


def ref_may(drive: Drive, p: Principal, kind: str, ident: str, act: str, t: datetime) -> bool:
    """May ``p`` do ``act`` on a document (kind ``doc``) or folder (kind ``fld``) at ``t``?"""
    level = drive.documents[ident].secret_level if kind == "doc" else 0
    allow = deny = False
    for g in drive.grants.values():
        if not _valid(g.valid_from, g.valid_until, t):
            continue
        if not _reaches(drive, g.folder_id, g.doc_id, kind, ident):
            continue
        if not _subject_matches(drive, p, g.subject, t):
            continue
        if g.effect == "allow" and any(act in IMPLIES[a] for a in g.actions):
            allow = True
        if g.effect == "deny" and any(a in IMPLIES[act] for a in g.actions):
            deny = True
    return allow and not deny and p.clearance >= level


def ref_visible_docs(drive: Drive, p: Principal, t: datetime) -> set[str]:
    """Documents recall may show at ``t``: previewable, not in the trash then, with a version then."""
    return {
        d.doc_id
        for d in drive.documents.values()
        if ref_may(drive, p, "doc", d.doc_id, "preview", t)
        and (d.trashed_at is None or t < d.trashed_at)
        and d.version_at(t) is not None
    }


# ---------------------------------------------------------------------------- brute-force ranking
def brute_force_topk(sim: Simulator, query: str, visible: set[str], t: datetime, top_k: int) -> list[tuple[str, float]]:
    """Best chunk per visible document (its version current at ``t``) by inner product, top ``top_k``."""
    store = sim.store
    q = sim.embedder.encode([query], kind="query")[0]
    best: dict[str, float] = {}
    for cid in np.flatnonzero(store.alive):
        doc_id = store.doc_ids[cid]
        if doc_id not in visible:
            continue
        current = sim.drive.documents[doc_id].version_at(t)
        if current is None or store.version_ids[cid] != current.version_id:
            continue
        score = float(np.dot(store.index.reconstruct(int(cid)), q))
        if score > best.get(doc_id, -np.inf):
            best[doc_id] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:top_k]


# ---------------------------------------------------------------------------- hand-built organisations
def org_from(
    *,
    departments: list[tuple[str, str | None]] = (("d0", None),),
    users: list[tuple[str, str, list[str], str]] = (("u0", "d0", [], "internal"),),
    folders: list[str] | tuple[str, ...] = (),
    breaks: set[str] | frozenset[str] = frozenset(),
    docs: list[tuple[str, str, str]] = (),
    grants: list[dict] = (),
    projects: list[Project] = (),
    now: datetime = TIMES[2],
) -> Org:
    """A small organisation for regression tests. ``users``: (id, department, roles, clearance);
    ``docs``: (doc_id, folder path, secret level); ``grants``: ``corpora.format.Grant`` fields."""
    paths = ["/", *folders]
    manifest = Manifest(
        name="perm-regression",
        language="en",
        clock=Clock(start=CREATED, now=now),
        departments=[Department(id=d, name=d, parent=p) for d, p in departments],
        users=[User(user_id=u, name=u, department=d, roles=list(r), clearance=c) for u, d, r, c in users],
        projects=list(projects),
        folders=[Folder(path=p, break_inheritance=p in breaks) for p in paths],
        documents=[
            Document(
                doc_id=doc_id,
                name=f"{doc_id}.md",
                folder=folder,
                file_type="md",
                secret_level=level,
                created_at=CREATED,
                versions=[Version(version_id=f"{doc_id}-v1", version=1, file=f"f/{doc_id}.md", created_at=CREATED)],
            )
            for doc_id, folder, level in docs
        ],
        grants=[Grant(grant_id=g.pop("grant_id", f"g{i:02d}"), **g) for i, g in enumerate(dict(x) for x in grants)],
    )
    texts = {doc_id: [f"{doc_id} budget approval report {doc_id}"] for doc_id, _, _ in docs}
    return Org(manifest, texts)
