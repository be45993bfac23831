"""The drive as one principal sees it, for the console: folder tree, documents, versions, trash, extracted text.

Plain Python, no HTTP (the console's router, ``server/console/router.py``, only renders what these return). Every visibility question is
answered by ``permissions.pointintime`` (the functions recall, the MCP tools and the drive API call): a
document is shown when the principal may **preview** it as of ``at`` under the point-in-time rule, so the
console never names a document that recall would withhold. Nothing here decides a permission itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from drivebench.drive.errors import DriveError, NotFound
from drivebench.drive.model import DocumentRec, VersionRec
from drivebench.drive.permissions import pointintime
from drivebench.drive.permissions.compiler import folder_obj
from drivebench.drive.permissions.engine import Principal
from drivebench.extract import ExtractionError, extract
from drivebench.formats.corpus import SECRET_LEVELS

if TYPE_CHECKING:
    from drivebench.simulator.backend import Simulator


@dataclass(frozen=True)
class Instant:
    """When a page asks: ``at`` (the clock, or the requested ``as_of``), ``now`` (the clock) and ``when``
    (None when asking about now: names and paths as they are; else ``at``: as they were then)."""

    at: datetime
    now: datetime
    when: datetime | None


def instant(sim: Simulator, as_of: datetime | None) -> Instant:
    """The instant a page is judged at: after the clock or out of range is a 400, as for the API."""
    now = sim.drive.clock.now()
    at = pointintime.resolve_as_of(sim, as_of)
    return Instant(at, now, None if as_of is None else at)


@dataclass(frozen=True)
class DocRow:
    doc_id: str
    name: str
    path: str
    file_type: str
    secret_level: str
    version: int
    version_id: str
    versions: int
    updated: datetime


@dataclass(frozen=True)
class FolderRow:
    path: str
    name: str
    depth: int
    documents: int  # documents shown directly in it


@dataclass
class DriveView:
    folder: str
    folders: list[FolderRow] = field(default_factory=list)
    documents: list[DocRow] = field(default_factory=list)
    trash: list[DocRow] = field(default_factory=list)
    total: int = 0  # documents the principal may preview (not in the trash), in every folder


def _fail_closed(exc: Exception) -> Exception:
    from drivebench.drive.errors import PermissionCheckFailed

    return PermissionCheckFailed(f"permission check failed: {exc}")


def previewable(sim: Simulator, principal: Principal, moment: Instant) -> list[DocumentRec]:
    """Every document ``principal`` may preview as of ``moment.at`` (point-in-time rule), trash ignored."""
    try:
        engine = sim.engine_at(moment.at)
        mask = pointintime.allowed_mask(sim, principal, "preview", moment.at, moment.now)
    except Exception as exc:  # fail closed: no page rather than a guess
        raise _fail_closed(exc) from exc
    docs = [sim.drive.documents.get(engine.doc_ids[i]) for i in np.flatnonzero(mask)]
    return [d for d in docs if d is not None and d.version_at(moment.at) is not None]


def _row(sim: Simulator, doc: DocumentRec, moment: Instant) -> DocRow:
    head = doc.version_at(moment.at)
    assert head is not None
    kept = [v for v in doc.versions if v.created_at <= moment.at]
    return DocRow(
        doc_id=doc.doc_id,
        name=doc.placement_at(moment.when)[1],
        path=sim.drive.doc_path_at(doc, moment.when),
        file_type=doc.file_type,
        secret_level=SECRET_LEVELS[doc.secret_level],
        version=head.version,
        version_id=head.version_id,
        versions=len(kept),
        updated=head.created_at,
    )


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def drive_view(sim: Simulator, principal: Principal, folder: str, moment: Instant) -> DriveView:
    """The folder tree (folders the principal may list, and the folders holding what it may preview), the
    documents of ``folder`` it may preview, and its trash, all as of ``moment``."""
    docs = previewable(sim, principal, moment)
    rows = [_row(sim, d, moment) for d in docs]
    trashed = {d.doc_id for d in docs if d.trashed_at_time(moment.at)}
    live = [r for r in rows if r.doc_id not in trashed]
    view = DriveView(folder=folder, total=len(live))
    view.trash = sorted((r for r in rows if r.doc_id in trashed), key=lambda r: r.path)
    paths: set[str] = {"/"}
    with sim.drive.lock:
        folder_ids = list(sim.drive.folders)
    for fid in folder_ids:
        try:
            visible = pointintime.enforce(sim, principal, folder_obj(fid), "list", moment.at, moment.now)
        except Exception as exc:
            raise _fail_closed(exc) from exc
        if visible:
            paths.add(sim.drive.folder_path_at(fid, moment.when))
    for r in live:  # the folders on the way to a document it may preview (its path names them anyway)
        p = _parent(r.path)
        while p != "/":
            paths.add(p)
            p = _parent(p)
    counts: dict[str, int] = {}
    for r in live:
        counts[_parent(r.path)] = counts.get(_parent(r.path), 0) + 1
    for p in sorted(paths, key=lambda s: [part for part in s.split("/") if part]):
        parts = [part for part in p.split("/") if part]
        view.folders.append(FolderRow(p, parts[-1] if parts else "/", len(parts), counts.get(p, 0)))
    if folder not in paths:
        raise NotFound(f"no folder {folder}")  # a folder it may not list answers like a missing one
    view.documents = sorted((r for r in live if _parent(r.path) == folder), key=lambda r: r.name)
    return view


@dataclass(frozen=True)
class PartText:
    label: str
    text: str


@dataclass
class DocumentView:
    row: DocRow
    title: str | None
    versions: list[VersionRec]
    current_id: str
    shown: VersionRec
    parts: list[PartText]
    extraction_error: str | None = None


def document_view(
    sim: Simulator, principal: Principal, doc_id: str, moment: Instant, version_id: str | None = None
) -> DocumentView:
    """One document the principal may preview as of ``moment``, its versions then, and the extracted text
    of one of them per part. A document it may not preview answers exactly like an unknown id (404)."""
    try:
        doc = pointintime.document_as_of(sim, principal, doc_id, moment.at, moment.now)
    except DriveError:
        raise
    except Exception as exc:  # fail closed
        raise _fail_closed(exc) from exc
    versions = [v for v in doc.versions if v.created_at <= moment.at]
    current = doc.version_at(moment.at)
    assert current is not None
    shown = current if version_id is None else next((v for v in versions if v.version_id == version_id), None)
    if shown is None:
        raise NotFound(f"document {doc_id} has no version {version_id}")
    view = DocumentView(_row(sim, doc, moment), doc.title, versions, current.version_id, shown, [])
    try:
        extraction = extract(sim.drive.blob(shown.blob), doc.name, sim.faults.extract_config(sim.config.extract))
        view.parts = [PartText(p.label, p.text) for p in extraction.parts] or [PartText("text", extraction.text)]
    except ExtractionError as exc:
        view.extraction_error = f"{exc.reason}: {exc.message}"
    return view
