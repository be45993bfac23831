"""The drive as the permission engine must see it for point-in-time (``as_of``) decisions.

Casbin stays the decision; this module only chooses what it is compiled from:

* **grants with their history.** Every grant ever in force is compiled, bounded by when it existed:
  ``nbf = max(valid_from, created_at)`` and ``exp = min(valid_until, removed_at)`` (a grant that never
  overlapped its own validity compiles to nothing). Grants loaded with the corpus have no
  ``created_at`` and count from the beginning. One compiled policy therefore answers for any instant.
* **the tree at one instant.** ``g2`` links (document -> folder -> parent) are not time-bounded in
  the model, so a past tree is compiled separately: ``Drive.placement_times()`` cuts time into
  epochs between moves, and one engine per epoch (cached by the simulator) is compiled from
  ``PolicyView(drive, at)``, whose folders and documents sit where they were at ``at``.

``PolicyView`` quacks like a ``Drive`` for the compiler and ``PermissionEngine``: anything it does not
override is read from the live drive.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from datetime import datetime
from typing import Any

from drivebench.drive.model import DocumentRec, FolderNode, GrantRec
from drivebench.drive.state import Drive


def effective_grant(grant: GrantRec) -> GrantRec | None:
    """The grant with its validity narrowed to the time it existed in the drive (None: never in force)."""
    lo = max((x for x in (grant.valid_from, grant.created_at) if x is not None), default=None)
    hi = min((x for x in (grant.valid_until, grant.removed_at) if x is not None), default=None)
    if lo is not None and hi is not None and lo >= hi:
        return None
    if lo == grant.valid_from and hi == grant.valid_until:
        return grant
    return replace(grant, valid_from=lo, valid_until=hi)


def history_grants(drive: Drive) -> dict[str, GrantRec]:
    """Current and removed grants, keyed uniquely, each bounded by when it existed."""
    out: dict[str, GrantRec] = {}
    for gid, g in drive.grants.items():
        eff = effective_grant(g)
        if eff is not None:
            out[gid] = eff
    for i, g in enumerate(drive.removed_grants):
        eff = effective_grant(g)
        if eff is not None:
            out[f"{g.grant_id}~removed{i:06d}"] = eff
    return out


class PolicyView:
    """A read-only view of ``drive`` for compiling Casbin policy: grant history, and the tree at ``at``
    (None: the tree now). Build it under ``drive.lock``."""

    def __init__(self, drive: Drive, at: datetime | None = None) -> None:
        self._drive = drive
        self.at = at
        self.grants = history_grants(drive)
        self.policy_version = drive.policy_version
        if at is None:
            self.folders: dict[str, FolderNode] = drive.folders
            self.documents: dict[str, DocumentRec] = drive.documents
        else:
            self.folders = {
                fid: (f if not f.moves else replace(f, parent_id=f.parent_at(at))) for fid, f in drive.folders.items()
            }
            self.documents = {}
            for did, d in drive.documents.items():
                folder_id, name = d.placement_at(at)
                self.documents[did] = d if folder_id == d.folder_id else replace(d, folder_id=folder_id, name=name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._drive, name)


def epoch_of(times: list[datetime], at: datetime) -> int:
    """Index of the tree epoch containing ``at`` (``len(times)``: the current tree)."""
    return bisect_right(times, at)


def epoch_start(times: list[datetime], epoch: int) -> datetime | None:
    """An instant inside ``epoch`` to compile its tree from (None for the current epoch)."""
    if epoch >= len(times):
        return None
    if epoch == 0:
        return datetime.min.replace(tzinfo=times[0].tzinfo)
    return times[epoch - 1]
