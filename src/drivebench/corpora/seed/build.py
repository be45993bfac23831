"""Build the hand-written seed corpus: ``build_seed(out_dir) -> Manifest``.

Writes ``corpus.json`` (with the ``access`` ground truth), ``files/<doc_id>/v<n>.<ext>``, ``evalset.jsonl``
and ``facts.jsonl`` (the facts each document owns, from ``facts.toml``: ``facts.py``). Everything is deterministic: no wall clock, fixed content, sorted output.

Run ``python -m drivebench.corpora.seed.build OUT_DIR`` to build it from the shell.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from drivebench.corpora.render import render
from drivebench.corpora.seed.content import (
    CLOCK_NOW,
    CLOCK_START,
    DEPARTMENTS,
    DOCS,
    FOLDERS,
    GRANTS,
    PROJECTS,
    USERS,
)
from drivebench.corpora.seed.facts import seed_facts
from drivebench.corpora.seed.model import SeedDoc
from drivebench.corpora.seed.queries import eval_queries
from drivebench.extract import extract
from drivebench.formats.corpus import (
    ACTIONS,
    EVALSET_NAME,
    Clock,
    Document,
    Grant,
    Manifest,
    User,
    Version,
    level_rank,
    parent_path,
    write_manifest,
)
from drivebench.formats.evalset import write_jsonl
from drivebench.formats.facts import write_facts

CORPUS_NAME = "seed"
DESCRIPTION = (
    "Hand-written seed corpus of 星辰科技 (Xingchen Technology): company policies and the R&D, finance, HR, "
    "legal and IT departments' documents, plus 项目X (Project X). Mostly Chinese, about a third English. "
    "Exercises break_inheritance, a /finance-secret prefix trap, an explicit deny, expired and valid "
    "temporary grants, an expired project membership, clearance checks and multi-version documents."
)

_PREVIEW = ACTIONS.index("preview")


def _document(doc: SeedDoc) -> Document:
    versions = [
        Version(
            version_id=doc.version_id(n),
            version=n,
            file=doc.file(n),
            created_at=datetime.fromisoformat(v.created_at),
            author=v.author,
            note=v.note,
        )
        for n, v in enumerate(doc.versions, 1)
    ]
    return Document(
        doc_id=doc.doc_id,
        name=doc.name,
        folder=doc.folder,
        file_type=doc.file_type,
        secret_level=doc.secret_level,
        title=doc.title,
        owner=doc.owner,
        created_at=datetime.fromisoformat(doc.created_at),
        versions=versions,
        tags={"department": doc.department, "language": doc.language, "length": doc.length},
    )


# ---- access ground truth ----------------------------------------------------------------------


def _in_time(start: datetime | None, end: datetime | None, t: datetime) -> bool:
    return (start is None or start <= t) and (end is None or t < end)


def _subject_matches(g: Grant, user: User, m: Manifest, t: datetime) -> bool:
    s = g.subject
    if s.kind == "everyone":
        return True
    if s.kind == "user":
        return s.id == user.user_id
    if s.kind == "role":
        return s.id in user.roles
    if s.kind == "department":
        parents = {d.id: d.parent for d in m.departments}
        dept: str | None = user.department
        while dept is not None:  # the user's department and every ancestor of it
            if dept == s.id:
                return True
            dept = parents.get(dept)
        return False
    # project: members whose membership is valid at t
    for p in m.projects:
        if p.id == s.id:
            return any(
                mem.user_id == user.user_id and _in_time(mem.valid_from, mem.valid_until, t) for mem in p.members
            )
    return False


def _folder_chain(folder: str) -> list[str]:
    """``/a/b`` -> ``["/a/b", "/a", "/"]``: the folder and its ancestors, nearest first."""
    chain: list[str] = []
    current: str | None = folder
    while current is not None:
        chain.append(current)
        current = parent_path(current)
    return chain


def _grant_reaches(g: Grant, doc: Document, breaks: set[str]) -> bool:
    """Does grant ``g`` target ``doc``: directly, or through its folder's subtree without crossing a
    ``break_inheritance`` folder below the grant's folder? Path components are compared whole, so a
    grant on ``/finance`` never reaches ``/finance-secret``."""
    if g.doc_id is not None:
        return g.doc_id == doc.doc_id
    for folder in _folder_chain(doc.folder):
        if folder == g.path:
            return True
        if folder in breaks:  # a break below the grant folder stops inheritance from above it
            return False
    return False


def may_preview(user: User, doc: Document, m: Manifest, t: datetime) -> bool:
    """Preview needs clearance >= the document's level, an applicable allow of ``preview`` or a stronger
    action, and no applicable deny of ``list`` or ``preview``."""
    if level_rank(user.clearance) < level_rank(doc.secret_level):
        return False
    breaks = {f.path for f in m.folders if f.break_inheritance}
    allowed = False
    for g in m.grants:
        if not _in_time(g.valid_from, g.valid_until, t):
            continue
        if not _grant_reaches(g, doc, breaks) or not _subject_matches(g, user, m, t):
            continue
        ranks = [ACTIONS.index(a) for a in g.actions]
        if g.effect == "deny":
            if min(ranks) <= _PREVIEW:  # a deny of list or preview forbids preview
                return False
        elif max(ranks) >= _PREVIEW:  # an allow of preview or anything stronger implies preview
            allowed = True
    return allowed


def compute_access(m: Manifest, at: datetime | None = None) -> dict[str, list[str]]:
    """user_id -> sorted doc_ids the user may preview at ``at`` (default ``clock.now``).

    Documents not yet created at ``at`` are left out; trash is ignored.
    """
    t = at or m.clock.now
    return {
        u.user_id: sorted(d.doc_id for d in m.documents if d.created_at <= t and may_preview(u, d, m, t))
        for u in m.users
    }


# ---- build ------------------------------------------------------------------------------------


def seed_manifest() -> Manifest:
    """The seed manifest (without files), including the ``access`` ground truth."""
    m = Manifest(
        name=CORPUS_NAME,
        language="zh",
        seed=None,
        description=DESCRIPTION,
        clock=Clock(start=datetime.fromisoformat(CLOCK_START), now=datetime.fromisoformat(CLOCK_NOW)),
        departments=[d.model_copy() for d in DEPARTMENTS],
        users=[u.model_copy() for u in USERS],
        projects=[p.model_copy(deep=True) for p in PROJECTS],
        folders=[f.model_copy() for f in FOLDERS],
        documents=[_document(d) for d in DOCS],
        grants=[g.model_copy(deep=True) for g in GRANTS],
    )
    m.access = compute_access(m)
    return m


def build_seed(out_dir: Path) -> Manifest:
    """Write the seed corpus into ``out_dir`` (created if missing) and return its manifest."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = seed_manifest()
    version_texts: dict[str, str] = {}  # what each file's text says, as the simulator will index it
    for doc in DOCS:
        for n, version in enumerate(doc.versions, 1):
            path = out / doc.file(n)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = render(version.spec)
            path.write_bytes(data)
            version_texts[doc.version_id(n)] = extract(data, path.name).text
    write_manifest(manifest, out)
    write_jsonl(out / EVALSET_NAME, eval_queries())
    write_facts(out, seed_facts(version_texts))
    return manifest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m drivebench.corpora.seed.build OUT_DIR", file=sys.stderr)
        return 2
    m = build_seed(Path(args[0]))
    print(f"seed corpus: {len(m.documents)} documents, {len(m.users)} users -> {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
