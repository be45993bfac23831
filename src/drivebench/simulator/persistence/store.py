"""The drive's metadata in SQLite (WAL, ``synchronous=FULL``): one transaction per drive write.

``DriveStore`` is the drive's ``Journal``: ``Drive._write()`` calls ``commit(drive, dirty)`` with what
the write touched, inside the drive lock and before the write returns, so an acknowledged write is
on disk and a reader never sees a write that is not. Tables:

========================  ==================================================================
``kv``                    drive name, language, corpus, clock, counters, retention, the
                          ``generation`` (a new random id every time the whole state is replaced)
``departments``, ``users``, ``projects``   the organisation
``folders``               the tree, with each folder's move history (JSON)
``documents``             one row per document, with placements and trash spans (JSON)
``versions``              one row per kept version (blob = sha256 of the bytes on disk)
``grants``                grants in force; ``removed_grants`` keeps removed ones (history)
``changes``               the change feed; ``seq`` is the metadata version the index is tagged with
========================  ==================================================================

Times are ISO-8601 strings with offset (microsecond round trip).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from drivebench.drive.clock import SimClock
from drivebench.drive.model import (
    DepartmentRec,
    DocumentRec,
    FolderMove,
    FolderNode,
    GrantRec,
    MembershipRec,
    Placement,
    ProjectRec,
    TrashSpan,
    UserRec,
    VersionRec,
)
from drivebench.drive.operations import Change, Dirty, Retention
from drivebench.drive.state import BlobBackend, Drive

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS departments (id TEXT PRIMARY KEY, name TEXT NOT NULL, parent TEXT);
CREATE TABLE IF NOT EXISTS users (
  user_id TEXT PRIMARY KEY, name TEXT NOT NULL, department TEXT NOT NULL, roles TEXT NOT NULL,
  clearance INTEGER NOT NULL, email TEXT);
CREATE TABLE IF NOT EXISTS projects (id TEXT PRIMARY KEY, name TEXT NOT NULL, members TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS folders (
  folder_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, name TEXT NOT NULL, parent_id TEXT,
  break_inheritance INTEGER NOT NULL, owner_department TEXT, kind TEXT NOT NULL, moves TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
  doc_id TEXT PRIMARY KEY, name TEXT NOT NULL, folder_id TEXT NOT NULL, file_type TEXT NOT NULL,
  secret_level INTEGER NOT NULL, created_at TEXT NOT NULL, title TEXT, owner TEXT, trashed_at TEXT,
  tags TEXT NOT NULL, placements TEXT NOT NULL, trash_spans TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
  version_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, version INTEGER NOT NULL, blob TEXT NOT NULL,
  size INTEGER NOT NULL, created_at TEXT NOT NULL, author TEXT, note TEXT, restored_from TEXT);
CREATE INDEX IF NOT EXISTS versions_by_doc ON versions (doc_id, version);
CREATE TABLE IF NOT EXISTS grants (grant_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS removed_grants (id INTEGER PRIMARY KEY, grant_id TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
  seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, at TEXT NOT NULL, doc_id TEXT, folder_id TEXT,
  version_id TEXT, grant_id TEXT, actor TEXT, detail TEXT);
"""
_TABLES: tuple[str, ...] = ("kv", "departments", "users", "projects", "folders", "documents", "versions", "grants")
_TABLES += ("removed_grants", "changes")


def _t(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _d(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _d_set(value: str) -> datetime:
    """A NOT NULL time column."""
    return datetime.fromisoformat(value)


def _grant_json(g: GrantRec) -> str:
    body = asdict(g)
    for k in ("valid_from", "valid_until", "created_at", "removed_at"):
        body[k] = _t(body[k])
    return json.dumps(body, ensure_ascii=False, sort_keys=True)


def _grant_from(text: str) -> GrantRec:
    body = json.loads(text)
    for k in ("valid_from", "valid_until", "created_at", "removed_at"):
        body[k] = _d(body.get(k))
    return GrantRec(**body)


class StoreError(RuntimeError):
    pass


class DriveStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self.conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")  # a commit survives power loss, not just a process kill
        self.conn.execute("PRAGMA foreign_keys=OFF")
        self.conn.executescript(_SCHEMA)
        stored = self.kv("schema")
        if stored is not None and int(stored) != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema {stored}, this drivebench reads schema {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # ------------------------------------------------------------------ small reads
    def kv(self, key: str) -> Any:
        with self._lock:
            row = self.conn.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def is_empty(self) -> bool:
        return self.kv("generation") is None

    @property
    def generation(self) -> str | None:
        return self.kv("generation")

    def meta_seq(self) -> int:
        """The metadata version: the last change-feed sequence number committed."""
        with self._lock:
            row = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ writes
    def put_marker(self, key: str, value: Any) -> None:
        """One kv row in a transaction of its own: a commit readers of the directory notice, no drive change."""
        with self._lock:
            self.conn.execute(
                "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (key, json.dumps(value, ensure_ascii=False))
            )

    def _put_kv(self, cur: sqlite3.Cursor, drive: Drive, extra: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {
            "clock_now": _t(drive.clock.now()),
            "policy_version": drive.policy_version,
            "content_version": drive.content_version,
            "folder_seq": drive._folder_seq,
            "doc_seq": drive._doc_seq,
            "retention": asdict(drive.retention),
        }
        values.update(extra or {})
        cur.executemany(
            "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)",
            [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()],
        )

    def _put_doc(self, cur: sqlite3.Cursor, doc: DocumentRec) -> None:
        cur.execute(
            "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                doc.doc_id,
                doc.name,
                doc.folder_id,
                doc.file_type,
                doc.secret_level,
                _t(doc.created_at),
                doc.title,
                doc.owner,
                _t(doc.trashed_at),
                json.dumps(doc.tags, ensure_ascii=False, sort_keys=True),
                json.dumps([[_t(p.since), p.folder_id, p.name] for p in doc.placements], ensure_ascii=False),
                json.dumps([[_t(s.start), _t(s.end)] for s in doc.trash_spans]),
            ),
        )
        cur.execute("DELETE FROM versions WHERE doc_id = ?", (doc.doc_id,))
        cur.executemany(
            "INSERT INTO versions VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (
                    v.version_id,
                    doc.doc_id,
                    v.version,
                    v.blob,
                    v.size,
                    _t(v.created_at),
                    v.author,
                    v.note,
                    v.restored_from,
                )
                for v in doc.versions
            ],
        )

    def _put_folder(self, cur: sqlite3.Cursor, f: FolderNode) -> None:
        cur.execute(
            "INSERT OR REPLACE INTO folders VALUES (?,?,?,?,?,?,?,?)",
            (
                f.folder_id,
                int(f.folder_id.rpartition("-")[2]) if f.folder_id.rpartition("-")[2].isdigit() else 0,
                f.name,
                f.parent_id,
                int(f.break_inheritance),
                f.owner_department,
                f.kind,
                json.dumps([[_t(m.since), m.parent_id] for m in f.moves]),
            ),
        )

    def _put_user(self, cur: sqlite3.Cursor, u: UserRec) -> None:
        cur.execute(
            "INSERT OR REPLACE INTO users VALUES (?,?,?,?,?,?)",
            (u.user_id, u.name, u.department, json.dumps(u.roles), u.clearance, u.email),
        )

    def _put_project(self, cur: sqlite3.Cursor, p: ProjectRec) -> None:
        members = [[m.user_id, m.role, _t(m.valid_from), _t(m.valid_until)] for m in p.members]
        cur.execute(
            "INSERT OR REPLACE INTO projects VALUES (?,?,?)", (p.id, p.name, json.dumps(members, ensure_ascii=False))
        )

    @staticmethod
    def _put_change(cur: sqlite3.Cursor, c: Change) -> None:
        cur.execute(
            "INSERT INTO changes VALUES (?,?,?,?,?,?,?,?,?)",
            (c.seq, c.kind, _t(c.at), c.doc_id, c.folder_id, c.version_id, c.grant_id, c.actor, c.detail),
        )

    def commit(self, drive: Drive, dirty: Dirty) -> None:
        """Persist one write (the drive's ``Journal``): all of it or nothing."""
        with self._lock:
            cur = self.conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                for doc_id in sorted(dirty.docs):
                    doc = drive.documents.get(doc_id)
                    if doc is None:
                        cur.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
                        cur.execute("DELETE FROM versions WHERE doc_id = ?", (doc_id,))
                    else:
                        self._put_doc(cur, doc)
                for fid in sorted(dirty.folders):
                    self._put_folder(cur, drive.folders[fid])
                for gid in sorted(dirty.grants):
                    grant = drive.grants.get(gid)
                    if grant is None:
                        cur.execute("DELETE FROM grants WHERE grant_id = ?", (gid,))
                    else:
                        cur.execute("INSERT OR REPLACE INTO grants VALUES (?, ?)", (gid, _grant_json(grant)))
                for g in dirty.removed_grants:
                    cur.execute(
                        "INSERT INTO removed_grants (grant_id, body) VALUES (?, ?)", (g.grant_id, _grant_json(g))
                    )
                for did in sorted(dirty.departments):
                    d = drive.departments[did]
                    cur.execute("INSERT OR REPLACE INTO departments VALUES (?,?,?)", (d.id, d.name, d.parent))
                for uid in sorted(dirty.users):
                    self._put_user(cur, drive.users[uid])
                for pid in sorted(dirty.projects):
                    self._put_project(cur, drive.projects[pid])
                for c in dirty.changes:
                    self._put_change(cur, c)
                self._put_kv(cur, drive)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise

    def write_all(self, drive: Drive, corpus: str) -> str:
        """Replace the whole stored state with ``drive`` (first load, reset, seed); returns the new generation."""
        generation = uuid.uuid4().hex
        with self._lock:
            cur = self.conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                for table in _TABLES:
                    cur.execute(f"DELETE FROM {table}")
                cur.executemany(
                    "INSERT INTO departments VALUES (?,?,?)",
                    [(d.id, d.name, d.parent) for d in drive.departments.values()],
                )
                for u in drive.users.values():
                    self._put_user(cur, u)
                for p in drive.projects.values():
                    self._put_project(cur, p)
                for f in drive.folders.values():
                    self._put_folder(cur, f)
                for doc in drive.documents.values():
                    self._put_doc(cur, doc)
                for gid, g in drive.grants.items():
                    cur.execute("INSERT INTO grants VALUES (?, ?)", (gid, _grant_json(g)))
                for g in drive.removed_grants:
                    cur.execute(
                        "INSERT INTO removed_grants (grant_id, body) VALUES (?, ?)", (g.grant_id, _grant_json(g))
                    )
                for c in drive.changes:
                    self._put_change(cur, c)
                self._put_kv(
                    cur,
                    drive,
                    {
                        "schema": SCHEMA_VERSION,
                        "generation": generation,
                        "name": drive.name,
                        "language": drive.language,
                        "corpus": corpus,
                    },
                )
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        return generation

    # ------------------------------------------------------------------ load
    def load(self, blobs: BlobBackend | None = None) -> Drive:
        """The stored drive, journalled to this store from now on."""
        with self._lock:
            q = self.conn.execute
            if self.is_empty():
                raise StoreError(f"{self.path} holds no drive")
            drive = Drive(self.kv("name"), self.kv("language"), SimClock(_d_set(self.kv("clock_now"))))
            for did, name, parent in q("SELECT id, name, parent FROM departments ORDER BY id"):
                drive.departments[did] = DepartmentRec(did, name, parent)
            for uid, name, dept, roles, clearance, email in q("SELECT * FROM users ORDER BY user_id"):
                drive.users[uid] = UserRec(uid, name, dept, json.loads(roles), int(clearance), email)
            for pid, name, members in q("SELECT * FROM projects ORDER BY id"):
                ms = [MembershipRec(u, r, _d(a), _d(b)) for u, r, a, b in json.loads(members)]
                drive.projects[pid] = ProjectRec(pid, name, ms)
            for fid, _seq, name, parent, brk, owner, kind, moves in q("SELECT * FROM folders ORDER BY seq"):
                node = FolderNode(fid, name, parent, bool(brk), owner, kind)
                node.moves = [FolderMove(_d(a), p) for a, p in json.loads(moves)]
                drive.folders[fid] = node
                if parent is not None:
                    drive._children[(parent, name)] = fid
            versions: dict[str, list[VersionRec]] = {}
            for vid, did, number, blob, size, created, author, note, restored in q(
                "SELECT * FROM versions ORDER BY doc_id, version"
            ):
                versions.setdefault(did, []).append(
                    VersionRec(vid, int(number), blob, int(size), _d_set(created), author, note, restored)
                )
            for row in q("SELECT * FROM documents ORDER BY doc_id"):
                did, name, fid, ftype, level, created, title, owner, trashed, tags, placements, spans = row
                drive.documents[did] = DocumentRec(
                    doc_id=did,
                    name=name,
                    folder_id=fid,
                    file_type=ftype,
                    secret_level=int(level),
                    created_at=_d_set(created),
                    versions=versions.get(did, []),
                    title=title,
                    owner=owner,
                    trashed_at=_d(trashed),
                    tags=json.loads(tags),
                    placements=[Placement(_d(a), f, n) for a, f, n in json.loads(placements)],
                    trash_spans=[TrashSpan(_d_set(a), _d(b)) for a, b in json.loads(spans)],
                )
            for gid, body in q("SELECT grant_id, body FROM grants ORDER BY grant_id"):
                drive.grants[gid] = _grant_from(body)
            drive.removed_grants = [_grant_from(body) for (body,) in q("SELECT body FROM removed_grants ORDER BY id")]
            drive.changes = [
                Change(int(seq), kind, _d_set(at), did, fid, vid, gid, actor, detail)
                for seq, kind, at, did, fid, vid, gid, actor, detail in q("SELECT * FROM changes ORDER BY seq")
            ]
            drive.policy_version = int(self.kv("policy_version"))
            drive.content_version = int(self.kv("content_version"))
            drive._folder_seq = int(self.kv("folder_seq"))
            drive._doc_seq = int(self.kv("doc_seq") or 0)
            drive.retention = Retention(**(self.kv("retention") or {}))
            drive.feed_epoch = str(self.kv("generation"))  # the same history until a reset or seed rewrites it
        drive.blob_store = blobs
        drive.journal = self
        return drive

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {
                t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                for t in ("documents", "versions", "grants", "removed_grants", "changes")
            }
