"""The drive's file operations for a caller: who may do what, and what a caller may learn. No HTTP:
``api/files.py`` translates these to routes, tests call them directly.

Who may do what (a user acts as its user; the admin token, ``Caller.principal is None``, may do
everything):

====================================  =====================================================================
new document                          ``upload`` on the destination folder
new version, restore a version        ``edit`` on the document
metadata, versions                    ``list`` on the document
folder listing                        ``list`` on the folder; shows what you may list in it (or below it: ``recursive``)
download                              ``download`` on the document
rename / move                         ``edit`` on the document (+ ``upload`` on the destination folder)
trash, untrash                        ``delete`` on the document
purge, retention settings             the admin token
change feed                           entries about documents (or folders) you could ``list`` when the
                                      entry was written **and** may list now (point-in-time rule)
====================================  =====================================================================

What a user may learn: nothing about an item they may not ``list``. A document or folder they may not
list answers 404 exactly like a missing one; a name held in a folder only by documents they may not list
is free for them (no 409: both documents then exist, and path lookups pick the one they may list); the
change feed skips entries about such items. An item they may list but not act on answers 403.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from drivebench.drive.errors import Conflict, Forbidden, InvalidRequest, NotFound, PermissionCheckFailed, Unprocessable
from drivebench.drive.model import DocumentRec, VersionRec
from drivebench.drive.operations import Change, check_feed_epoch
from drivebench.drive.permissions import pointintime
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.engine import PermissionEngine, Principal
from drivebench.drive.tokens import TokenInfo
from drivebench.formats.corpus import SECRET_LEVELS

if TYPE_CHECKING:
    from drivebench.extract import ExtractConfig
    from drivebench.simulator.backend import Simulator
    from drivebench.simulator.ports import DriveHost

DEFAULT_LEVEL = 1  # internal


@dataclass(frozen=True)
class Caller:
    token: TokenInfo
    principal: Principal | None  # None: the admin token (may do everything)

    @property
    def actor(self) -> str:
        return self.token.subject


def caller_for(host: DriveHost, token: TokenInfo) -> Caller:
    if token.user_id is not None:
        return Caller(token, host.engine.user_principal(token.user_id))
    if token.has("admin"):
        return Caller(token, None)
    raise Forbidden("the files API needs a user token or the admin token (the evaluation token only evaluates recall)")


def authorize_doc(host: DriveHost, caller: Caller, doc_id: str, action: str) -> DocumentRec:
    """The document if the caller may ``action`` it; 404 (as if missing) when they may not even list it.
    A hidden id and a missing one take the same path (a mask read, no Casbin call: no timing oracle);
    Casbin decides only for a document the caller may list."""
    p = caller.principal
    if p is None:
        return host.drive.doc(doc_id)
    engine, now = host.engine, host.drive.clock.now()
    obj = doc_obj(doc_id)
    doc = host.drive.documents.get(doc_id)
    if not _visible(engine, p, obj, now) or doc is None:
        raise NotFound(f"no document {doc_id!r}")
    pointintime.confirm(_enforce(engine, p, obj, "list", now, doc.secret_level), obj)
    if action != "list" and not _enforce(engine, p, obj, action, now, doc.secret_level):
        raise Forbidden(f"{caller.actor} may not {action} document {doc_id}")
    return doc


def authorize_folder(host: DriveHost, caller: Caller, path: str, action: str) -> str:
    """The folder id if the caller may ``action`` in it; 404 (as if missing) when they may not list it.
    A hidden folder and a missing one take the same path (a mask read, no Casbin call)."""
    try:
        folder = host.drive.folder_by_path(path.rstrip("/") or "/")
    except InvalidRequest as exc:
        raise InvalidRequest(f"folder: {exc}") from None
    except NotFound:
        folder = None
    p = caller.principal
    if p is None:
        if folder is None:
            raise NotFound(f"no folder {path}")
        return folder.folder_id
    engine, now = host.engine, host.drive.clock.now()
    obj = folder_obj(folder.folder_id if folder is not None else "")
    if not _visible(engine, p, obj, now) or folder is None:
        raise NotFound(f"no folder {path}")
    pointintime.confirm(_enforce(engine, p, obj, "list", now), obj)
    if action != "list" and not _enforce(engine, p, obj, action, now):
        raise Forbidden(f"{caller.actor} may not {action} in folder {path}")
    return folder.folder_id


def _visible(engine: PermissionEngine, p: Principal, obj: str, now: datetime) -> bool:
    """May ``p`` list ``obj`` (existing or not), off the masks; a failure fails closed (503)."""
    try:
        return engine.visible(p, obj, "list", now)
    except Exception as exc:
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc


def _enforce(engine: PermissionEngine, p: Principal, obj: str, act: str, now: datetime, level: int = 0) -> bool:
    try:
        return engine.enforce(p, obj, act, now, level)
    except Exception as exc:  # fail closed
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc


def list_folder(
    host: DriveHost, caller: Caller, path: str, trashed: bool = False, recursive: bool = False
) -> tuple[str, list[DocumentRec]]:
    """(the folder's path, the documents in it, or in its recycle bin, the caller may list), by name.
    ``recursive``: the documents in the folder and every folder below it, by path."""
    folder_id = authorize_folder(host, caller, path, "list")
    drive = host.drive
    with drive.lock:
        if recursive:
            below = drive.folder_subtree(folder_id)
            docs = sorted(
                (d for d in drive.documents.values() if d.folder_id in below),
                key=lambda d: (drive.folder_path(d.folder_id), d.name, d.doc_id),
            )
        else:
            docs = sorted((d for d in drive.documents.values() if d.folder_id == folder_id), key=lambda d: d.name)
    docs = [d for d in docs if (d.trashed_at is not None) == trashed]
    p = caller.principal
    if p is None:
        return drive.folder_path(folder_id), docs
    engine, now = host.engine, drive.clock.now()
    if not recursive:
        return drive.folder_path(folder_id), [
            d for d in docs if engine.enforce(p, doc_obj(d.doc_id), "list", now, d.secret_level)
        ]
    try:  # a whole subtree: the fast path (proven equal to enforce), one mask instead of a check per document
        mask, index = engine.allowed_mask(p, "list", now), engine.doc_index
    except Exception as exc:  # fail closed
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc
    out = [
        d
        for d in docs
        if (
            bool(mask[index[d.doc_id]])
            if d.doc_id in index
            else engine.enforce(p, doc_obj(d.doc_id), "list", now, d.secret_level)
        )
    ]
    return drive.folder_path(folder_id), out


def secret_level(value: str | None, caller: Caller) -> int:
    if value is None:
        level = DEFAULT_LEVEL
    elif value in SECRET_LEVELS:
        level = SECRET_LEVELS.index(value)
    else:
        raise InvalidRequest(f"secret_level must be one of {', '.join(SECRET_LEVELS)}")
    if caller.principal is not None and level > caller.principal.clearance:
        raise Forbidden(
            f"{caller.actor} may not upload above their clearance ({SECRET_LEVELS[caller.principal.clearance]})"
        )
    return level


def check_extractable(config: ExtractConfig, data: bytes, name: str) -> None:
    from drivebench.extract import ExtractionError, extract

    try:
        extract(data, name, config)
    except ExtractionError as exc:
        raise Unprocessable(f"the file cannot be indexed: {exc.message}", reason=exc.reason) from None


def after_write(sim: Simulator) -> None:
    """Acknowledged = indexed: a recall that starts after the answer finds it; then retention (which
    checkpoints a durable simulator first: the whole simulator, not a narrow view)."""
    from drivebench.simulator.persistence import lifecycle

    sim.sync_index()
    lifecycle.enforce_retention(sim)


def upload(
    sim: Simulator,
    caller: Caller,
    folder: str,
    name: str,
    data: bytes,
    level: str | None = None,
    strict: bool = False,
) -> DocumentRec:
    """A new document in ``folder`` (a path). Validates everything before anything is stored."""
    from drivebench.extract.detect import claimed_type

    _check_text(name, "name")
    folder_id = authorize_folder(sim, caller, folder, "upload")
    rank = secret_level(level, caller)
    if strict:
        check_extractable(sim.config.extract, data, name)
    doc = sim.drive.create_document(
        folder_id,
        name,
        data,
        file_type=claimed_type(name) or "other",
        secret_level=rank,
        author=caller.actor,
        visible=sim.doc_lister(caller.principal),
    )
    after_write(sim)
    return doc


def new_version(
    sim: Simulator, caller: Caller, doc_id: str, data: bytes, note: str | None = None, strict: bool = False
) -> tuple[DocumentRec, VersionRec]:
    doc = authorize_doc(sim, caller, doc_id, "edit")
    if note is not None:
        _check_text(note, "note", 1000)
    if strict:
        check_extractable(sim.config.extract, data, doc.name)
    version = sim.drive.add_version(doc_id, data, caller.actor, note)
    after_write(sim)
    return doc, version


def restore(sim: Simulator, caller: Caller, doc_id: str, version_id: str) -> tuple[DocumentRec, VersionRec]:
    doc = authorize_doc(sim, caller, doc_id, "edit")
    version = sim.drive.restore_version(doc_id, version_id, caller.actor)
    after_write(sim)
    return doc, version


def rename_or_move(
    host: DriveHost, caller: Caller, doc_id: str, name: str | None = None, folder: str | None = None
) -> DocumentRec:
    if name is None and folder is None:
        raise InvalidRequest("give `name` (rename) and/or `folder` (move)")
    authorize_doc(host, caller, doc_id, "edit")
    folder_id = authorize_folder(host, caller, folder, "upload") if folder is not None else None
    visible = host.doc_lister(caller.principal)
    doc = host.drive.move_document(doc_id, folder_id, name, caller.actor, visible=visible)
    host.sync_index()
    return doc


def trash(host: DriveHost, caller: Caller, doc_id: str, restore: bool = False) -> DocumentRec:
    authorize_doc(host, caller, doc_id, "delete")
    doc = host.drive.untrash(doc_id, caller.actor) if restore else host.drive.trash(doc_id, caller.actor)
    host.sync_index()
    return doc


def download(host: DriveHost, caller: Caller, doc_id: str, version_id: str | None) -> tuple[DocumentRec, VersionRec]:
    doc = authorize_doc(host, caller, doc_id, "download")
    versions = list(doc.versions)
    version = versions[-1] if version_id is None else next((v for v in versions if v.version_id == version_id), None)
    if version is None:
        raise NotFound(f"document {doc_id} has no version {version_id}")
    return doc, version


# the one answer to a user's cursor that this feed did not give them, or one past its end (after a reset):
# the same words whatever the feed holds, so an error never states its length
BAD_USER_CURSOR = "cursor is not one this feed gave you (was the drive reset?); start again from 0"
_FEED_SCAN = 256  # entries judged per step while a user's page is gathered


@dataclass(frozen=True)
class FeedPage:
    changes: list[tuple[int, Change]]  # (the seq the caller is shown, the entry)
    next_cursor: int
    has_more: bool
    latest_cursor: int
    epoch: str  # the history these cursors belong to (``Drive.feed_epoch``)


def feed_page(sim: Simulator, caller: Caller, cursor: int, limit: int, epoch: str | None = None) -> FeedPage:
    """A page of the change feed from ``cursor``, given in ``epoch`` (None: not said; another epoch than the
    drive's is a ``ResyncRequired``, whatever the cursor: the history it pointed into was replaced).

    The admin token reads the feed itself: ``seq`` is the entry's position, the cursor the last position
    read, ``limit`` counts entries read. A user's page holds up to ``limit`` entries they may see
    (``visible_changes``), however many others lie between them, and every number in it is opaque
    (``TokenRegistry.opaque``, one numbering per user): an entry's ``seq`` is the cursor that resumes after
    it, ``next_cursor`` the ``seq`` of the page's last entry (the cursor given when the page is empty),
    ``latest_cursor`` the ``seq`` of the last entry they may see in the whole feed (0: none) and ``has_more``
    whether they may see one after the page. So nothing in the answer moves when only hidden entries are
    added, and no number counts them."""
    drive = sim.drive  # one drive throughout: a reset swaps it, and its epoch goes with it
    if caller.principal is None:
        with drive.lock:
            batch, next_cursor = drive.changes_since(cursor, limit, epoch)
            latest = len(drive.changes)
        return FeedPage([(c.seq, c) for c in batch], next_cursor, next_cursor < latest, latest, drive.feed_epoch)
    with drive.lock:
        check_feed_epoch(drive, epoch)
        feed = list(drive.changes)
    # keyed by the epoch too: a cursor from before a reset decodes to nothing in the new history
    codec = sim.tokens.opaque(f"change-feed\x00{drive.feed_epoch}", caller.actor)
    if cursor == 0:
        start = 0
    else:
        decoded = codec.decode(cursor)
        if decoded is None or not 0 < decoded <= len(feed):
            raise Conflict(BAD_USER_CURSOR)  # 409 like the admin's: about the feed's state, not the request
        start = decoded
    found: list[Change] = []
    pos = start
    while pos < len(feed) and len(found) <= limit:
        found += visible_changes(sim, caller, feed[pos : pos + _FEED_SCAN])
        pos += _FEED_SCAN
    page = found[:limit]
    shown = [(codec.encode(c.seq), c) for c in page]
    next_cursor = shown[-1][0] if shown else cursor
    if len(found) > limit:  # the last entry they may see lies beyond the page: look from the end
        latest_seq = _last_visible(sim, caller, feed, found[limit].seq)
    elif page:
        latest_seq = page[-1].seq
    else:
        latest_seq = _last_visible(sim, caller, feed[:start], 0)
    latest = codec.encode(latest_seq) if latest_seq else 0
    return FeedPage(shown, next_cursor, len(found) > limit, latest, drive.feed_epoch)


def _last_visible(sim: Simulator, caller: Caller, feed: list[Change], floor: int) -> int:
    """The seq of the last entry of ``feed`` the caller may see, ``floor`` when none after it is."""
    end = len(feed)
    while end > floor:
        lo = max(floor, end - _FEED_SCAN)
        seen = visible_changes(sim, caller, feed[lo:end])
        if seen:
            return seen[-1].seq
        end = lo
    return floor


def visible_changes(host: DriveHost, caller: Caller, batch: list[Change]) -> list[Change]:
    """The entries of ``batch`` the caller may see: all for the admin token; for a user, entries about a
    document (or folder) they could list when the entry was written and may list now."""
    p = caller.principal
    if p is None:
        return list(batch)
    now = host.drive.clock.now()
    masks: dict[datetime, tuple[dict[str, int], np.ndarray]] = {}
    # "may list now" is necessary for every entry: judged first, with one mask, so an entry about something
    # hidden costs a lookup (a user's page may read far past such entries), not a mask of its own instant
    now_index, now_mask = host.engine_at(now).doc_index, pointintime.allowed_mask(host, p, "list", now, now)
    out = []
    for c in batch:
        at = min(c.at, now)
        if c.doc_id is not None:
            if c.doc_id not in host.drive.documents:
                continue
            now_pos = now_index.get(c.doc_id)
            if now_pos is None or not now_mask[now_pos]:
                continue
            if at not in masks:
                engine = host.engine_at(at)
                masks[at] = (engine.doc_index, pointintime.allowed_mask(host, p, "list", at, now))
            index, mask = masks[at]
            pos = index.get(c.doc_id)
            if pos is not None and mask[pos]:
                out.append(c)
        elif c.folder_id in host.drive.folders and pointintime.enforce(
            host, p, folder_obj(c.folder_id), "list", at, now
        ):
            out.append(c)
    return out


def _check_text(value: str, field: str, limit: int = 255) -> None:
    if len(value) > limit:
        raise InvalidRequest(f"{field}: at most {limit} characters")
