"""Export a corpus as files and CSVs a team can load into a test space of its real drive.

``export_drive(corpus_dir, out)`` writes::

    drive/<folder>/<name>              every live document's current file, at its drive path
    drive/<folder>/<stem>.v<N><ext>    its older versions, beside it (N = version number)
    trash/<doc_id>/<name>              a document trashed at the corpus clock's ``now``, and its older
    trash/<doc_id>/<stem>.v<N><ext>    versions: the trash is not a path (documents.csv says where it was)
    folders.csv      path, owner_department, break_inheritance, kind
    users.csv        user_id, name, department, roles (|-separated), clearance, email
    departments.csv  id, name, parent
    projects.csv     project_id, name, user_id, role, valid_from, valid_until (one row per member)
    grants.csv       grant_id, target (folder|document), path, doc_id, subject_kind, subject_id,
                     actions (|-separated), effect, valid_from, valid_until, note
    documents.csv    doc_id, path, name, file_type, secret_level, owner, created_at, trashed_at,
                     versions, past_paths (|-separated)
    versions.csv     doc_id, version, version_id, file (relative to the export directory), created_at,
                     author, note
    id_map.csv       foreign_id (the drive path), doc_id; then foreign_version_id (path#vN), version_id
    facts.jsonl      the facts each document owns (``formats.facts``, corpus ids), copied when the corpus has
                     them; without it the export does not say (answer leaks: not measured)

Load ``drive/`` with the drive's own admin tools (upload older versions first, then the current
file as a new version of the same file; upload a ``trash/`` document at its ``path`` and trash it),
re-create users, departments and grants from the CSVs, and evaluate with ``[ids] match = "path"`` (or
``match = "id_map.csv"``) and ``--corpus`` pointing at the original corpus: its policies are the leak
oracle. A grant's ``path`` for a document grant is the document's drive path. Times are ISO-8601 with
offset, as in the corpus (simulated clock).

The export is all or nothing. Before writing anything it refuses (``ExportRefused``) a corpus that puts two
files at one path: two live documents at one folder + name (a drive holds one file per path), an older
version's ``<stem>.v<N><ext>`` that is another document's file name, a file where a folder is, or paths
that differ only in case or Unicode form (one file on a case-insensitive drive or file system); and names
that are not a file name, or version files outside the corpus directory (never copied out). It writes
into a temporary directory beside ``out`` (``.<name>.partial-*``) and renames it to ``out`` only when
complete; on any error or interruption it removes it and re-raises, so ``out`` does not exist afterwards.
An existing ``out`` is refused unless it is an empty directory, or ``force=True`` and it is an earlier
export (``drive/`` and ``documents.csv``). Into an existing directory (it may be a mount point, which
cannot be renamed) the export is written in a temporary directory inside it, and its entries are moved up
only when complete, an earlier export's set aside first and deleted after (put back on a failure): never
merged with the new one, and a failure leaves the directory as it was.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from drivebench.corpora.drive_paths import doc_path, is_trashed
from drivebench.formats.corpus import Document, Manifest, load_manifest
from drivebench.formats.facts import FACTS_NAME, load_facts

DRIVE_DIR = "drive"
TRASH_DIR = "trash"
PARTIAL_PREFIX = ".{name}.partial-"
_REPLACED_PREFIX = ".{name}.replaced-"


class ExportRefused(ValueError):
    """The export cannot be written as asked (two files at one path, an existing target); nothing was written."""


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


@dataclass(frozen=True)
class _File:
    rel: str  # inside the export directory: drive/... or trash/<doc_id>/...
    src: Path
    doc: Document
    number: int  # version number
    current: bool

    def describe(self) -> str:
        what = "current file" if self.current else f"version {self.number} of {self.doc.name}"
        return f"{self.doc.doc_id} ({what}{', trashed' if self.rel.startswith(TRASH_DIR + '/') else ''})"


def _plan(corpus_dir: Path, m: Manifest) -> list[_File]:
    """Every file the export writes: each version of each document, current file last per document."""
    out = []
    for d in m.documents:
        base = f"{TRASH_DIR}/{d.doc_id}" if is_trashed(d, m.clock.now) else f"{DRIVE_DIR}{d.folder.rstrip('/')}"
        for v in d.versions[:-1]:
            out.append(
                _File(f"{base}/{older_version_name(d.name, v.version)}", corpus_dir / v.file, d, v.version, False)
            )
        head = d.versions[-1]
        out.append(_File(f"{base}/{d.name}", corpus_dir / head.file, d, head.version, True))
    return out


def _fold(rel: str) -> str:
    return unicodedata.normalize("NFKC", rel).casefold()


def _shown(rel: str) -> str:
    return rel[len(DRIVE_DIR) :] if rel.startswith(DRIVE_DIR + "/") else rel


def _unsafe(name: str) -> bool:
    return name in ("", ".", "..") or any(c in name for c in "/\\\x00")


def _refusals(corpus_dir: Path, m: Manifest, files: list[_File]) -> list[str]:
    """What stops the export, one line each (empty when it can be written)."""
    trashed = {f.doc.doc_id for f in files if f.rel.startswith(TRASH_DIR + "/")}
    bad_names = sorted(d.doc_id for d in m.documents if _unsafe(d.name))
    bad_ids = sorted(doc_id for doc_id in trashed if _unsafe(doc_id))  # a trashed document's folder is its id
    unsafe = []
    if bad_names:
        unsafe.append(
            f"documents whose name is not a file name (empty, ., .., or holding /, \\ or NUL): {', '.join(bad_names)}"
        )
    if bad_ids:
        unsafe.append(
            f"trashed documents whose id is not a folder name (their folder under trash/): {', '.join(bad_ids)}"
        )
    root = corpus_dir.resolve()
    outside = sorted({f.doc.doc_id for f in files if not f.src.resolve().is_relative_to(root)})
    if outside:  # a version file like ../../.ssh/id_rsa would copy a local file into what is uploaded
        unsafe.append(f"documents with a version file outside the corpus directory: {', '.join(outside)}")
    if unsafe:
        return unsafe
    by_key: dict[str, list[_File]] = {}
    for f in files:
        by_key.setdefault(_fold(f.rel), []).append(f)
    live_dups: list[str] = []
    other: list[str] = []
    for group in by_key.values():
        if len(group) < 2:
            continue
        shown = sorted({_shown(f.rel) for f in group})
        line = f"{' = '.join(shown)}: {', '.join(f.describe() for f in group)}"
        if len(shown) == 1 and all(f.current and f.rel.startswith(DRIVE_DIR + "/") for f in group):
            live_dups.append(f"{shown[0]}: {', '.join(sorted(f.doc.doc_id for f in group))}")
        else:
            other.append(line)
    dirs = {_fold(f"{DRIVE_DIR}{fo.path.rstrip('/')}") for fo in m.folders}
    for f in files:
        dirs |= {_fold(str(parent)) for parent in PurePosixPath(f.rel).parents}
    other += [f"{_shown(f.rel)}: {f.describe()} is where a folder is" for f in files if _fold(f.rel) in dirs]
    out = []
    if live_dups:
        out.append(f"{len(live_dups)} path(s) held by two or more live documents (a drive holds one file per path):")
        out += [f"  {line}" for line in sorted(live_dups)]
    if other:
        out.append(f"{len(other)} other path(s) where two files, or a file and a folder, would land:")
        out += [f"  {line}" for line in sorted(other)]
    return out


def _looks_like_export(path: Path) -> bool:
    return (path / DRIVE_DIR).is_dir() and (path / "documents.csv").is_file()


def _check_target(out: Path, force: bool, ours: Path | None = None) -> None:
    """Refuse an ``out`` the export may not fill (``ours``: the export's own temporary directory inside it)."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not out.is_symlink() and all(p == ours for p in out.iterdir()):
        return  # an empty directory holds nothing to lose
    if not force:
        raise ExportRefused(f"{out} already exists; choose another --out, or --force to replace an earlier export")
    if out.is_symlink() or not out.is_dir() or not _looks_like_export(out):
        raise ExportRefused(
            f"{out} is not an earlier export (no {DRIVE_DIR}/ and documents.csv): --force replaces only an "
            "export; remove it yourself or choose another --out"
        )


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _fill_directory(tmp: Path, out: Path) -> None:
    """Move the finished export in ``tmp`` (inside the existing directory ``out``) up into ``out``: an earlier
    export's entries are set aside first and deleted after; on any failure everything goes back as it was.
    ``out`` itself stays (its owner, mode, a shell inside it, a mount point: none of which a rename keeps)."""
    aside = Path(tempfile.mkdtemp(dir=out, prefix=_REPLACED_PREFIX.format(name=out.name)))
    old = [p.name for p in out.iterdir() if p not in (tmp, aside)]
    moved_old: list[str] = []
    moved_new: list[str] = []
    try:
        for name in old:
            os.rename(out / name, aside / name)
            moved_old.append(name)
        for entry in sorted(tmp.iterdir()):
            os.rename(entry, out / entry.name)
            moved_new.append(entry.name)
    except BaseException:
        for name in moved_new:
            with contextlib.suppress(OSError):
                os.rename(out / name, tmp / name)
        for name in moved_old:
            with contextlib.suppress(OSError):
                os.rename(aside / name, out / name)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def export_drive(corpus_dir: str | Path, out: str | Path, *, force: bool = False) -> dict[str, int]:
    """Write the export into ``out`` (see the module docs), all or nothing; returns counts.

    ``ExportRefused`` (nothing written) when two files would land on one path or ``out`` exists (see the
    module docs for ``force``); any other error (a missing version file, a full disk, an interruption)
    removes the partial export and is re-raised."""
    corpus_dir, out = Path(corpus_dir), Path(os.path.abspath(out))  # "." and "a/.." name their directory
    _check_target(out, force)
    m: Manifest = load_manifest(corpus_dir)
    files = _plan(corpus_dir, m)
    refusals = _refusals(corpus_dir, m, files)
    if refusals:
        raise ExportRefused("\n".join([f"cannot export {corpus_dir} (nothing was written):", *refusals]))
    # Beside a new target (one rename puts it in place); inside an existing directory, which may be a mount
    # point: the only place sure to be on its file system.
    existing = out.is_dir()
    if not existing:
        out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out if existing else out.parent, prefix=PARTIAL_PREFIX.format(name=out.name)))
    try:
        counts = _write(corpus_dir, m, files, tmp)
        _check_target(out, force, tmp)  # something may have appeared there while it was written
        if existing:
            _fill_directory(tmp, out)
            tmp.rmdir()
        else:
            tmp.chmod(_default_mode())  # mkdtemp's 0700 would make the export private to its writer
            os.rename(tmp, out)  # fails (nothing replaced) if a non-empty directory appeared there meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


def _write(corpus_dir: Path, m: Manifest, files: list[_File], out: Path) -> dict[str, int]:
    (out / DRIVE_DIR).mkdir()
    for f in m.folders:
        (out / DRIVE_DIR / f.path.lstrip("/")).mkdir(parents=True, exist_ok=True)
    version_rows = []
    for file in files:
        target = out / file.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file.src, target)
        v = file.doc.versions[file.number - 1]
        version_rows.append([file.doc.doc_id, v.version, v.version_id, file.rel, _iso(v.created_at), v.author, v.note])
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
    counts = {
        "documents": len(m.documents),
        "files": len(files),
        "trashed": sum(1 for d in m.documents if is_trashed(d, m.clock.now)),
        "folders": len(m.folders),
        "users": len(m.users),
        "grants": len(m.grants),
    }
    facts = load_facts(corpus_dir)  # validated before it is copied: a malformed file fails the export
    if facts is not None:
        shutil.copyfile(corpus_dir / FACTS_NAME, out / FACTS_NAME)
        counts["facts"] = len(facts)
    return counts
