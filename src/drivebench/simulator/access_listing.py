"""Who may preview each document now: what an outside system syncing permissions from the drive reads
(``api/access.py`` translates it to HTTP; tests call it directly). No HTTP.

The answer is the drive's own decision: for every user, the permission engine's fast path
``allowed_mask(principal, "preview", now)`` over ``engine.doc_ids`` (proven equal to Casbin's
``enforce``), taken from the engine of the current policy with the drive locked at the same policy
version, after ``sync_index`` (so a document written a moment ago is judged by an engine that knows
it). A trashed document is previewable by nobody (``users`` empty), whatever its grants say. This is the
truth a syncing system is measured against, so it ignores the faults that make recall lag behind the
policy (``stale-acl`` serves recall an older engine; the listing compiles the current one then).

Only the admin token and the evaluation token (scope ``evaluate-as``) may read it: it names, for every
document, who may see it. Anything that goes wrong in the check fails closed (``PermissionCheckFailed``,
HTTP 503), never a partial list.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from drivebench.drive.errors import Forbidden, InvalidRequest, NotFound, PermissionCheckFailed
from drivebench.drive.permissions.engine import PermissionEngine
from drivebench.drive.tokens import TokenInfo

if TYPE_CHECKING:
    from drivebench.simulator.ports import DriveHost


@dataclass(frozen=True)
class DocumentAccess:
    doc_id: str
    users: tuple[str, ...]  # user ids, sorted
    trashed: bool


@dataclass(frozen=True)
class AccessListing:
    at: datetime  # the drive's clock when the decision was taken
    documents: tuple[DocumentAccess, ...]  # sorted by doc_id


def authorize(token: TokenInfo) -> None:
    """The admin token or the evaluation token; a user token may not read who else sees what (403)."""
    if token.user_id is not None or not token.has("evaluate-as"):  # the admin token holds evaluate-as too
        raise Forbidden("the access listing needs the admin token or the evaluation token")


def access_listing(
    host: DriveHost, token: TokenInfo, folder: str | None = None, doc_ids: list[str] | None = None
) -> AccessListing:
    """Every document (``folder``: only those in that folder and below it; ``doc_ids``: only those, each of
    which must exist) with the users who may preview it now, sorted by doc_id."""
    authorize(token)
    host.sync_index()
    with _current_engine(host) as engine:
        drive = host.drive
        now = drive.clock.now()
        if doc_ids is not None:
            for doc_id in doc_ids:
                drive.doc(doc_id)  # NotFound for an unknown id
            chosen = sorted(set(doc_ids))
        elif folder is not None:
            below = drive.folder_subtree(_folder_id(host, folder))
            chosen = sorted(d.doc_id for d in drive.documents.values() if d.folder_id in below)
        else:
            chosen = sorted(drive.documents)
        trashed = {doc_id: drive.documents[doc_id].trashed_at is not None for doc_id in chosen}
        missing = [doc_id for doc_id in chosen if doc_id not in engine.doc_index]
        if missing:  # cannot happen at a consistent policy version (a new document bumps it): fail closed
            raise PermissionCheckFailed(f"the permission engine does not know {', '.join(missing[:5])}")
        positions = np.array([engine.doc_index[doc_id] for doc_id in chosen], dtype=np.int64)
        users = sorted(drive.users)
        try:
            allowed = np.zeros((len(users), len(chosen)), dtype=bool)
            for row, user_id in enumerate(users):
                mask = engine.allowed_mask(engine.user_principal(user_id), "preview", now)
                allowed[row] = mask[positions]
        except Exception as exc:  # fail closed: never a partial answer
            raise PermissionCheckFailed(f"permission check failed: {type(exc).__name__}: {exc}") from exc
    documents = tuple(
        DocumentAccess(
            doc_id,
            () if trashed[doc_id] else tuple(users[row] for row in np.flatnonzero(allowed[:, col])),
            trashed[doc_id],
        )
        for col, doc_id in enumerate(chosen)
    )
    return AccessListing(now, documents)


def document_access(host: DriveHost, token: TokenInfo, doc_id: str) -> tuple[datetime, DocumentAccess]:
    """(the decision's instant, who may preview ``doc_id`` now); 404 for an unknown id."""
    listing = access_listing(host, token, doc_ids=[doc_id])
    return listing.at, listing.documents[0]


@contextmanager
def _current_engine(host: DriveHost) -> Iterator[PermissionEngine]:
    """The engine of the drive's policy now, with the drive locked at that policy version (engine first, then
    the lock, as ``permission_admin.consistent``). When the simulator serves an older engine on purpose (the
    ``stale-acl`` fault), one of the current policy is compiled for this answer."""
    for _ in range(20):
        engine = host.engine
        if engine.policy_version != host.drive.policy_version:
            engine = PermissionEngine(host.drive)
        with host.drive.lock:
            if engine.policy_version == host.drive.policy_version:
                yield engine
                return
    raise PermissionCheckFailed("the policy kept changing while the access listing was computed")


def _folder_id(host: DriveHost, path: str) -> str:
    try:
        return host.drive.folder_by_path(path.rstrip("/") or "/").folder_id
    except InvalidRequest as exc:
        raise InvalidRequest(f"folder: {exc}") from None
    except NotFound:
        raise NotFound(f"no folder {path}") from None
