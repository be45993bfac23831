"""The on-disk corpus format, version 1 (``drivebench-corpus/1``).

A corpus is a directory::

    corpus.json      the manifest below (organisation, folders, documents, grants)
    files/...        the real document bytes, one file per version, paths relative to the corpus
    evalset.jsonl    the evaluation set (see ``drivebench.formats.evalset.EvalQuery``)

Every timestamp is an ISO-8601 string with a UTC offset. Times are simulated: the
drive's clock starts at ``clock.now`` when the corpus is loaded.

Identity and permission vocabulary:

* secret levels, lowest to highest: ``public`` (公开), ``internal`` (内部),
  ``confidential`` (秘密), ``secret`` (机密). A user may preview a document only if
  ``clearance >= secret_level``, whatever the grants.
* grant subjects: ``{"kind": "user"|"role"|"department"|"project"|"everyone", "id": ...}``.
  A department grant covers its sub-departments' members; a project grant covers the
  project's members while their membership is valid.
* grant actions: ``list``, ``preview``, ``download``, ``upload``, ``edit``, ``delete``,
  ``share``, ``manage``. An allow implies every weaker action, a deny every stronger one
  (see ``drivebench.drive.permissions.actions``).
* a grant targets a folder (``path``; it then inherits to everything below until a folder
  with ``break_inheritance``) or one document (``doc_id``). ``effect`` is ``allow`` or
  ``deny``; a deny beats any allow. ``valid_from``/``valid_until`` bound it in time
  (``valid_until`` exclusive).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FORMAT_ID: Final = "drivebench-corpus/1"
MANIFEST_NAME = "corpus.json"
EVALSET_NAME = "evalset.jsonl"

SECRET_LEVELS: tuple[str, ...] = ("public", "internal", "confidential", "secret")
SECRET_LEVEL_ZH: dict[str, str] = {
    "public": "公开",
    "internal": "内部",
    "confidential": "秘密",
    "secret": "机密",
}
ACTIONS: tuple[str, ...] = ("list", "preview", "download", "upload", "edit", "delete", "share", "manage")
FILE_TYPES: tuple[str, ...] = ("pdf", "docx", "xlsx", "pptx", "dxf", "zip", "md", "txt")

SecretLevel = Literal["public", "internal", "confidential", "secret"]
Action = Literal["list", "preview", "download", "upload", "edit", "delete", "share", "manage"]
SubjectKind = Literal["user", "role", "department", "project", "everyone"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


def level_rank(level: str) -> int:
    """0 for ``public`` up to 3 for ``secret``; ValueError for anything else."""
    return SECRET_LEVELS.index(level)


class Clock(_Model):
    start: datetime
    now: datetime


class Department(_Model):
    id: str
    name: str
    parent: str | None = None


class User(_Model):
    user_id: str
    name: str
    department: str
    roles: list[str]
    clearance: SecretLevel = "internal"
    email: str | None = None


class ProjectMember(_Model):
    user_id: str
    role: Literal["leader", "assistant", "member", "external"] = "member"
    valid_from: datetime | None = None
    valid_until: datetime | None = None


class Project(_Model):
    id: str
    name: str
    members: list[ProjectMember] = Field(default_factory=list)


class Folder(_Model):
    path: str
    owner_department: str | None = None
    break_inheritance: bool = False
    kind: Literal["department", "project", "archive", "personal", "shared", "other"] = "other"

    @model_validator(mode="after")
    def _check_path(self) -> Folder:
        check_folder_path(self.path)
        return self


class Version(_Model):
    version_id: str
    version: int = Field(ge=1)
    file: str
    created_at: datetime
    author: str | None = None
    note: str | None = None


class Move(_Model):
    at: datetime
    from_folder: str
    to_folder: str


class Document(_Model):
    doc_id: str
    name: str
    folder: str
    file_type: str
    secret_level: SecretLevel = "internal"
    title: str | None = None
    owner: str | None = None
    created_at: datetime
    versions: list[Version]
    trashed_at: datetime | None = None
    moves: list[Move] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_versions(self) -> Document:
        if not self.versions:
            raise ValueError(f"document {self.doc_id} has no versions")
        numbers = [v.version for v in self.versions]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"document {self.doc_id}: versions must be numbered 1..n in order, got {numbers}")
        return self


class Subject(_Model):
    kind: SubjectKind
    id: str | None = None

    @model_validator(mode="after")
    def _check_id(self) -> Subject:
        if self.kind != "everyone" and not self.id:
            raise ValueError(f"a {self.kind} subject needs an id")
        return self

    def key(self) -> str:
        """The Casbin subject name: ``user:u1``, ``role:engineer``, ``dept:rd``, ``project:p``, ``everyone``."""
        prefix = {"user": "user", "role": "role", "department": "dept", "project": "project"}
        return "everyone" if self.kind == "everyone" else f"{prefix[self.kind]}:{self.id}"


class Grant(_Model):
    grant_id: str
    path: str | None = None
    doc_id: str | None = None
    subject: Subject
    actions: list[Action]
    effect: Literal["allow", "deny"] = "allow"
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _check_target(self) -> Grant:
        if (self.path is None) == (self.doc_id is None):
            raise ValueError(f"grant {self.grant_id}: give exactly one of path (a folder) or doc_id")
        if self.path is not None:
            check_folder_path(self.path)
        if not self.actions:
            raise ValueError(f"grant {self.grant_id}: no actions")
        return self


class Manifest(_Model):
    format: Literal["drivebench-corpus/1"] = FORMAT_ID
    name: str
    # The version of a built-in generator that wrote this corpus (``acme-zh@2`` -> name acme-zh, 2). Absent
    # (None) in hand-written corpora and in those of generators that predate it (acme version 1); written
    # only when set, so version-1 manifests stay byte-identical. See ``builtin.corpus_version``.
    corpus_version: int | None = None
    language: str
    seed: int | None = None
    description: str = ""
    clock: Clock
    departments: list[Department]
    users: list[User]
    projects: list[Project] = Field(default_factory=list)
    folders: list[Folder]
    documents: list[Document]
    grants: list[Grant]
    # Optional ground truth written by a generator from its own scenario logic, never read by
    # the simulator: user_id -> sorted doc_ids the user may preview at clock.now (trash ignored).
    access: dict[str, list[str]] | None = None

    @model_validator(mode="after")
    def _check_references(self) -> Manifest:
        problems = manifest_problems(self)
        if problems:
            raise ValueError("; ".join(problems[:20]))
        return self


def check_folder_path(path: str) -> None:
    """Folder paths are absolute, ``/``-separated, without a trailing slash (root is ``/``)."""
    if not path.startswith("/"):
        raise ValueError(f"folder path {path!r} must start with /")
    if path != "/" and path.endswith("/"):
        raise ValueError(f"folder path {path!r} must not end with /")
    if any(part in ("", ".", "..") for part in path.split("/")[1:]) and path != "/":
        raise ValueError(f"folder path {path!r} has an empty, . or .. segment")


def parent_path(path: str) -> str | None:
    if path == "/":
        return None
    head = path.rsplit("/", 1)[0]
    return head or "/"


def manifest_problems(m: Manifest) -> list[str]:
    """Referential checks: every id a record names exists. Empty list when consistent."""
    problems: list[str] = []
    dept_ids = {d.id for d in m.departments}
    user_ids = {u.user_id for u in m.users}
    project_ids = {p.id for p in m.projects}
    folder_paths = {f.path for f in m.folders}
    doc_ids = [d.doc_id for d in m.documents]
    for d in m.departments:
        if d.parent is not None and d.parent not in dept_ids:
            problems.append(f"department {d.id}: unknown parent {d.parent}")
    for u in m.users:
        if u.department not in dept_ids:
            problems.append(f"user {u.user_id}: unknown department {u.department}")
    if len(user_ids) != len(m.users):
        problems.append("duplicate user_id")
    for p in m.projects:
        for mem in p.members:
            if mem.user_id not in user_ids:
                problems.append(f"project {p.id}: unknown member {mem.user_id}")
    if "/" not in folder_paths:
        problems.append("the root folder / is missing")
    for f in m.folders:
        parent = parent_path(f.path)
        if parent is not None and parent not in folder_paths:
            problems.append(f"folder {f.path}: parent {parent} missing")
        if f.owner_department is not None and f.owner_department not in dept_ids:
            problems.append(f"folder {f.path}: unknown owner_department {f.owner_department}")
    if len(set(doc_ids)) != len(doc_ids):
        problems.append("duplicate doc_id")
    for doc in m.documents:
        if doc.folder not in folder_paths:
            problems.append(f"document {doc.doc_id}: unknown folder {doc.folder}")
        for mv in doc.moves:
            for folder in (mv.from_folder, mv.to_folder):
                if folder not in folder_paths:
                    problems.append(f"document {doc.doc_id}: move names unknown folder {folder}")
        if doc.moves and max(doc.moves, key=lambda m: m.at).to_folder != doc.folder:
            problems.append(f"document {doc.doc_id}: its last move does not end in its folder {doc.folder}")
    known_docs = set(doc_ids)
    for g in m.grants:
        if g.path is not None and g.path not in folder_paths:
            problems.append(f"grant {g.grant_id}: unknown folder {g.path}")
        if g.doc_id is not None and g.doc_id not in known_docs:
            problems.append(f"grant {g.grant_id}: unknown document {g.doc_id}")
        s = g.subject
        known = {"user": user_ids, "department": dept_ids, "project": project_ids}.get(s.kind)
        if known is not None and s.id not in known:
            problems.append(f"grant {g.grant_id}: unknown {s.kind} {s.id}")
    return problems


def load_manifest(corpus_dir: Path) -> Manifest:
    path = Path(corpus_dir) / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no corpus manifest (a corpus directory holds {MANIFEST_NAME})")
    return Manifest.model_validate_json(path.read_text(encoding="utf-8"))


def write_manifest(manifest: Manifest, corpus_dir: Path) -> Path:
    """Write ``corpus.json`` with sorted keys and a trailing newline, so equal manifests are equal bytes."""
    path = Path(corpus_dir) / MANIFEST_NAME
    data = manifest.model_dump(mode="json", exclude_none=False)
    if data.get("corpus_version") is None:
        data.pop("corpus_version", None)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
