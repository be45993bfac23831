"""The drive file API's boundary models and how drive records render into them (``api/files.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator

from drivebench.drive.model import DocumentRec, VersionRec
from drivebench.drive.operations import MAX_RETENTION_DAYS, MAX_VERSIONS_KEPT
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.server.api.schemas import not_bool, whole_number
from drivebench.simulator.backend import Simulator


# ---------------------------------------------------------------------------- models
class IndexStatusOut(BaseModel):
    state: Literal["indexed", "rejected", "pending"] = Field(
        description="indexed: searchable; rejected: no extractor could read it (never recalled); "
        "pending: not indexed yet (only under the stale-index fault)."
    )
    chunks: int | None = None
    reason: str | None = Field(default=None, description="The extractor's reason code when rejected (e.g. zip-bomb).")
    message: str | None = None


class VersionOut(BaseModel):
    version_id: str
    version: int
    size: int
    sha256: str
    created_at: datetime
    author: str | None
    note: str | None
    restored_from: str | None
    is_head: bool
    index: IndexStatusOut


class FileOut(BaseModel):
    doc_id: str
    name: str
    path: str
    folder: str
    file_type: str
    secret_level: str
    created_at: datetime
    owner: str | None
    trashed: bool
    trashed_at: datetime | None
    modified_at: datetime = Field(
        description="The latest of the head version's creation, the latest rename or move and the latest trash "
        "or untrash. Permission changes never move it: follow the change feed (acl_changed) for those."
    )
    versions: int
    head: VersionOut


class UploadOut(BaseModel):
    doc_id: str
    version_id: str
    version: int
    name: str
    path: str
    size: int
    sha256: str
    created_at: datetime
    index: IndexStatusOut


class VersionsOut(BaseModel):
    doc_id: str
    versions: list[VersionOut]


class FileListOut(BaseModel):
    folder: str
    files: list[FileOut]


# What the drive takes as a name and a folder path, stated in the schema so that a client (or a fuzzer) knows
# before it asks; the drive checks them again (".", ".." and NUL are refused there too).
# what the drive accepts (drive.operations._check_name), said in the schema: no slash, backslash or NUL, and
# neither "." nor ".." (a fuzzer sends what the schema allows; a stricter API reads as a broken contract)
NAME_PATTERN = r"^(?:[^/\\\x00.][^/\\\x00]*|\.[^/\\\x00.][^/\\\x00]*|\.\.[^/\\\x00]+)$"
FOLDER_PATTERN = r"^/"


class PatchIn(BaseModel):
    """Rename (``name``) and/or move (``folder``: the destination folder's path); at least one of them."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})
    name: str = Field(default=None, min_length=1, max_length=255, pattern=NAME_PATTERN)  # type: ignore[assignment]  # left out: None; not nullable in the schema
    folder: str = Field(default=None, min_length=1, max_length=4096, pattern=FOLDER_PATTERN)  # type: ignore[assignment]  # left out: None; not nullable in the schema

    @model_validator(mode="after")
    def _something(self) -> PatchIn:
        if self.name is None and self.folder is None:
            raise ValueError("give `name` (rename) and/or `folder` (move)")
        return self


class ChangeOut(BaseModel):
    seq: int = Field(
        description="The admin token: the entry's position in the feed. A user token: an opaque number, the "
        "cursor that resumes after this entry (not ordered, counts nothing)."
    )
    kind: str = Field(
        description="created, updated, restored, renamed, moved, trashed, untrashed, acl_changed, "
        "purged, version_deleted, settings"
    )
    at: datetime
    doc_id: str | None = None
    folder_id: str | None = None
    version_id: str | None = None
    grant_id: str | None = None
    actor: str | None = None
    detail: str | None = None


class ChangesOut(BaseModel):
    changes: list[ChangeOut]
    next_cursor: int = Field(description="Pass as `cursor` to continue; entries you may not see are skipped.")
    has_more: bool = Field(description="More entries (that you may see) follow this page.")
    latest_cursor: int = Field(
        description="The cursor after the last entry (for a user token: the last one you may see; 0 for none)."
    )
    epoch: str = Field(
        description="The feed's history: a reset or seed (or a restart without a data directory) starts another. "
        "Send it back as `epoch` with the cursor; a cursor from another epoch answers 410 `resync-required`."
    )


# Bounds before the validator: after it, pydantic writes them into the optional union's schema as non-standard
# "ge"/"gt" keys that no client (and no fuzzer) reads.
_VersionsKept = Annotated[StrictInt, Field(ge=1, le=MAX_VERSIONS_KEPT), BeforeValidator(whole_number)]
_Days = Annotated[float, Field(gt=0, le=MAX_RETENTION_DAYS, allow_inf_nan=False), BeforeValidator(not_bool)]


class RetentionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    versions_kept: _VersionsKept | None = Field(
        default=None, description="Keep at most this many versions per document."
    )
    days: _Days | None = Field(default=None, description="Delete versions superseded more than this many days ago.")
    trash_days: _Days | None = Field(default=None, description="Purge documents in the trash this many days.")


class RetentionOut(BaseModel):
    retention: RetentionIn
    deleted_versions: int = 0
    purged_documents: int = 0


class PurgeOut(BaseModel):
    doc_id: str
    purged: bool = True


# ---------------------------------------------------------------------------- rendering
def index_status(sim: Simulator, version_id: str) -> IndexStatusOut:
    ids = sim.store.by_version.get(version_id)
    if ids:
        return IndexStatusOut(state="indexed", chunks=len(ids))
    for r in reversed(sim.ingest_report.rejected):
        if r.version_id == version_id:
            return IndexStatusOut(state="rejected", reason=r.reason, message=r.message)
    return IndexStatusOut(state="pending")


def version_out(sim: Simulator, doc: DocumentRec, v: VersionRec) -> VersionOut:
    return VersionOut(
        version_id=v.version_id,
        version=v.version,
        size=v.size,
        sha256=v.blob,
        created_at=v.created_at,
        author=v.author,
        note=v.note,
        restored_from=v.restored_from,
        is_head=v is doc.versions[-1],
        index=index_status(sim, v.version_id),
    )


def file_out(sim: Simulator, doc: DocumentRec) -> FileOut:
    return FileOut(
        doc_id=doc.doc_id,
        name=doc.name,
        path=sim.drive.doc_path(doc),
        folder=sim.drive.folder_path(doc.folder_id),
        file_type=doc.file_type,
        secret_level=SECRET_LEVELS[doc.secret_level],
        created_at=doc.created_at,
        owner=doc.owner,
        trashed=doc.trashed_at is not None,
        trashed_at=doc.trashed_at,
        modified_at=doc.modified_at,
        versions=len(doc.versions),
        head=version_out(sim, doc, doc.head),
    )


def upload_out(sim: Simulator, doc: DocumentRec, v: VersionRec) -> UploadOut:
    return UploadOut(
        doc_id=doc.doc_id,
        version_id=v.version_id,
        version=v.version,
        name=doc.name,
        path=sim.drive.doc_path(doc),
        size=v.size,
        sha256=v.blob,
        created_at=v.created_at,
        index=index_status(sim, v.version_id),
    )
