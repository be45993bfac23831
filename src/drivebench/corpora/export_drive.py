"""Export a corpus as files and CSVs a team can load into a test space of its real drive.

``export_drive(corpus_dir, out)`` writes::

    drive/<folder>/<name>              every document's current file, at its drive path
    drive/<folder>/<stem>.v<N><ext>    its older versions, beside it (N = version number)
    folders.csv      path, owner_department, break_inheritance, kind
    users.csv        user_id, name, department, roles (|-separated), clearance, email
    departments.csv  id, name, parent
    projects.csv     project_id, name, user_id, role, valid_from, valid_until (one row per member)
    grants.csv       grant_id, target (folder|document), path, doc_id, subject_kind, subject_id,
                     actions (|-separated), effect, valid_from, valid_until, note
    documents.csv    doc_id, path, name, file_type, secret_level, owner, created_at, trashed_at,
                     versions, past_paths (|-separated)
    versions.csv     doc_id, version, version_id, file (relative to drive/), created_at, author, note
    id_map.csv       foreign_id (the drive path), doc_id; then foreign_version_id (path#vN), version_id

Load ``drive/`` with the drive's own admin tools (upload older versions first, then the current
file as a new version of the same file), re-create users, departments and grants from the CSVs,
and evaluate with ``[ids] match = "path"`` (or ``match = "id_map.csv"``) and ``--corpus`` pointing
at the original corpus: its policies are the leak oracle. A grant's ``path`` for a document grant
is the document's drive path. Times are ISO-8601 with offset, as in the corpus (simulated clock).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from drivebench.formats.corpus import Document, Manifest, load_manifest

DRIVE_DIR = "drive"


def doc_path(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def older_version_name(name: str, number: int) -> str:
    """``报价单.pdf`` v1 -> ``报价单.v1.pdf``."""
    p = PurePosixPath(name)
    return f"{p.stem}.v{number}{p.suffix}" if p.suffix else f"{name}.v{number}"


def _iso(value: Any) -> str:
    return "" if value is None else value.isoformat()


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(["" if x is None else x for x in row] for row in rows)


def _files(corpus_dir: Path, d: Document) -> list[tuple[str, Path, int]]:
    """(path inside drive/, source file, version number) for every version of ``d``."""
    head = d.versions[-1]
    out = [(doc_path(d.folder, d.name), corpus_dir / head.file, head.version)]
    for v in d.versions[:-1]:
        out.append((doc_path(d.folder, older_version_name(d.name, v.version)), corpus_dir / v.file, v.version))
    return out


def export_drive(corpus_dir: str | Path, out: str | Path) -> dict[str, int]:
    """Write the export into ``out`` (see the module docs); returns counts. ValueError when two files
    would land on one path."""
    corpus_dir, out = Path(corpus_dir), Path(out)
    m: Manifest = load_manifest(corpus_dir)
    drive = out / DRIVE_DIR
    drive.mkdir(parents=True, exist_ok=True)
    for f in m.folders:
        (drive / f.path.lstrip("/")).mkdir(parents=True, exist_ok=True)
    placed: dict[str, str] = {}
    files = 0
    version_rows = []
    for d in m.documents:
        for rel, src, number in _files(corpus_dir, d):
            if rel in placed:
                raise ValueError(f"{rel}: both {placed[rel]} and {d.doc_id} would be written there")
            placed[rel] = d.doc_id
            target = drive / rel.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            files += 1
            v = d.versions[number - 1]
            version_rows.append(
                [d.doc_id, v.version, v.version_id, rel.lstrip("/"), _iso(v.created_at), v.author, v.note]
            )
    paths = {d.doc_id: doc_path(d.folder, d.name) for d in m.documents}
    _write_csv(
        out / "folders.csv",
        ["path", "owner_department", "break_inheritance", "kind"],
        [[f.path, f.owner_department, str(f.break_inheritance).lower(), f.kind] for f in m.folders],
    )
    _write_csv(
        out / "users.csv",
        ["user_id", "name", "department", "roles", "clearance", "email"],
        [[u.user_id, u.name, u.department, "|".join(u.roles), u.clearance, u.email] for u in m.users],
    )
    _write_csv(out / "departments.csv", ["id", "name", "parent"], [[d.id, d.name, d.parent] for d in m.departments])
    _write_csv(
        out / "projects.csv",
        ["project_id", "name", "user_id", "role", "valid_from", "valid_until"],
        [
            [p.id, p.name, mem.user_id, mem.role, _iso(mem.valid_from), _iso(mem.valid_until)]
            for p in m.projects
            for mem in p.members
        ],
    )
    _write_csv(
        out / "grants.csv",
        ["grant_id", "target", "path", "doc_id", "subject_kind", "subject_id", "actions", "effect", "valid_from",
         "valid_until", "note"],
        [
            [g.grant_id, "folder" if g.path is not None else "document", g.path if g.path is not None else paths[g.doc_id or ""],
             g.doc_id, g.subject.kind, g.subject.id, "|".join(g.actions), g.effect, _iso(g.valid_from),
             _iso(g.valid_until), g.note]
            for g in m.grants
        ],
    )  # fmt: skip
    _write_csv(
        out / "documents.csv",
        ["doc_id", "path", "name", "file_type", "secret_level", "owner", "created_at", "trashed_at", "versions",
         "past_paths"],
        [
            [d.doc_id, paths[d.doc_id], d.name, d.file_type, d.secret_level, d.owner, _iso(d.created_at),
             _iso(d.trashed_at), len(d.versions), "|".join(doc_path(mv.from_folder, d.name) for mv in d.moves)]
            for d in m.documents
        ],
    )  # fmt: skip
    _write_csv(
        out / "versions.csv", ["doc_id", "version", "version_id", "file", "created_at", "author", "note"], version_rows
    )
    id_rows = [[paths[d.doc_id], d.doc_id, "", ""] for d in m.documents]
    id_rows += [["", "", f"{paths[d.doc_id]}#v{v.version}", v.version_id] for d in m.documents for v in d.versions]
    _write_csv(out / "id_map.csv", ["foreign_id", "doc_id", "foreign_version_id", "version_id"], id_rows)
    return {
        "documents": len(m.documents),
        "files": files,
        "folders": len(m.folders),
        "users": len(m.users),
        "grants": len(m.grants),
    }
