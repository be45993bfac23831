"""Validate a corpus directory: schema, references, files, and the eval set against the corpus's own policies.

Checks (each problem names where it is):

* the manifest parses and its references resolve (``format.manifest_problems``);
* every version's file exists and is non-empty;
* the eval set parses; every gold document exists, and its pinned ``version_id`` belongs to it and was
  current at the query's time (``as_of``, else the corpus clock's ``now``);
* gold is previewable by its asker at that time (per the corpus's Casbin policies) and not trashed,
  unless it is listed in ``forbidden``; every ``forbidden`` document really is not previewable;
* ``hops`` name existing documents, at least two, no repeats, each one a gold document;
* type coverage: with ``min_gold_per_type``, every file type in the corpus is the gold of that many queries;
* duplicate paths (kind ``duplicate-path``): no two documents held one path (folder + name) at one moment, from
  their creation until the corpus clock's ``now``, following their ``moves``; a trashed document holds no path
  from its ``trashed_at`` (``corpora.drive_paths``). A real drive holds one file per path, so such a corpus
  cannot be loaded into one (``corpus export-drive`` refuses it) and a path names two documents. The frozen
  ``acme-zh@2`` (19 paths) and ``acme-en@2`` (22) fail this check.

Every problem has a ``kind`` (``manifest``, ``file``, ``evalset``, ``query``, ``coverage``, ``duplicate-path``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from drivebench.corpora.drive_paths import path_clashes
from drivebench.drive.clock import as_utc
from drivebench.drive.errors import DriveError
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.state import Drive
from drivebench.formats.corpus import EVALSET_NAME, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery, load_evalset

DUPLICATE_PATH = "duplicate-path"


@dataclass(frozen=True)
class Problem:
    level: str  # "error" | "warning"
    where: str
    message: str
    kind: str  # which check: manifest, file, evalset, query, coverage, duplicate-path

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"


def _files(corpus_dir: Path, m: Manifest) -> list[Problem]:
    out = []
    for d in m.documents:
        for v in d.versions:
            path = corpus_dir / v.file
            if not path.is_file():
                out.append(Problem("error", f"document {d.doc_id}", f"version file {v.file} is missing", "file"))
            elif path.stat().st_size == 0:
                out.append(Problem("warning", f"document {d.doc_id}", f"version file {v.file} is empty", "file"))
    return out


def _duplicate_paths(m: Manifest) -> list[Problem]:
    return [
        Problem(
            "error",
            f"path {c.path}",
            f"held by {len(c.doc_ids)} documents at once ({', '.join(c.doc_ids)}, from {c.since.isoformat()}); "
            "a drive holds one file per path",
            DUPLICATE_PATH,
        )
        for c in path_clashes(m)
    ]


def _query_time(q: EvalQuery, m: Manifest) -> datetime:
    return as_utc(q.as_of) if q.as_of is not None else as_utc(m.clock.now)


def _check_query(q: EvalQuery, m: Manifest, engine: PermissionEngine, drive: Drive) -> list[Problem]:
    where = f"query {q.query_id}"

    def bad(message: str) -> Problem:
        return Problem("error", where, message, "query")

    out: list[Problem] = []
    at = _query_time(q, m)
    try:
        principal = (
            engine.user_principal(q.user_id) if q.user_id else engine.role_principal(q.user_role or "", q.department)
        )
    except DriveError as exc:
        return [bad(str(exc))]
    forbidden = set(q.forbidden)
    for g in q.gold:
        doc = drive.documents.get(g.doc_id)
        if doc is None:
            out.append(bad(f"gold document {g.doc_id} does not exist"))
            continue
        if g.version_id is not None:
            current = doc.version_at(at)
            if g.version_id not in {v.version_id for v in doc.versions}:
                out.append(bad(f"gold version {g.version_id} is not a version of {g.doc_id}"))
            elif current is None or current.version_id != g.version_id:
                now_id = current.version_id if current else "none"
                out.append(bad(f"gold version {g.version_id} was not current at {at} ({now_id} was)"))
        if g.doc_id in forbidden:
            continue
        if doc.trashed_at is not None and doc.trashed_at <= at:
            out.append(bad(f"gold document {g.doc_id} is trashed at the query's time"))
        if not engine.enforce(principal, doc_obj(g.doc_id), "preview", at, doc.secret_level):
            out.append(bad(f"gold document {g.doc_id} is not previewable by the asker at {at}"))
    for doc_id in forbidden:
        if doc_id not in drive.documents:
            out.append(bad(f"forbidden document {doc_id} does not exist"))
        elif engine.enforce(principal, doc_obj(doc_id), "preview", at, drive.doc(doc_id).secret_level):
            out.append(bad(f"forbidden document {doc_id} IS previewable by the asker at {at}"))
    if q.hops is not None:
        gold_ids = set(q.gold_ids)
        if len(q.hops) < 2:
            out.append(bad("hops must name at least two documents"))
        if len(set(q.hops)) != len(q.hops):
            out.append(bad("hops repeat a document"))
        for h in q.hops:
            if h not in drive.documents:
                out.append(bad(f"hop {h} does not exist"))
            elif h not in gold_ids:
                out.append(bad(f"hop {h} is not in the gold"))
    return out


def validate_corpus(corpus_dir: Path, *, min_gold_per_type: int = 0) -> list[Problem]:
    corpus_dir = Path(corpus_dir)
    try:
        m = load_manifest(corpus_dir)
    except (FileNotFoundError, ValidationError, ValueError) as exc:
        return [
            Problem(
                "error",
                "corpus.json",
                str(exc).splitlines()[0] if isinstance(exc, FileNotFoundError) else str(exc),
                "manifest",
            )
        ]
    problems = _files(corpus_dir, m) + _duplicate_paths(m)
    evalset = corpus_dir / EVALSET_NAME
    if not evalset.is_file():
        return [*problems, Problem("warning", EVALSET_NAME, "no eval set", "evalset")]
    try:
        queries = load_evalset(evalset)
    except ValueError as exc:
        return [*problems, Problem("error", EVALSET_NAME, str(exc), "evalset")]
    drive = Drive.from_manifest(m, None)
    engine = PermissionEngine(drive)
    for q in queries:
        problems.extend(_check_query(q, m, engine, drive))
    if min_gold_per_type:
        types = {d.doc_id: d.file_type for d in m.documents}
        gold_by_type = Counter(types[g] for q in queries for g in set(q.gold_ids) if g in types)
        for t in sorted(set(types.values())):
            if gold_by_type[t] < min_gold_per_type:
                problems.append(
                    Problem(
                        "error",
                        "type coverage",
                        f"{t} is the gold of {gold_by_type[t]} queries (< {min_gold_per_type})",
                        "coverage",
                    )
                )
    return problems
