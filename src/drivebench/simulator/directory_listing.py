"""The drive's organisation and policy as one admin read: users, departments, projects, folders and every
grant with its path. What an outside harness needs to plan permission changes from the drive's own state
(``eval sync`` picks which grant to remove, which user to move) without reading the simulator's memory."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from drivebench.formats.corpus import SECRET_LEVELS

if TYPE_CHECKING:
    from drivebench.simulator.ports import DriveHost


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def directory(host: DriveHost) -> dict[str, Any]:
    drive = host.drive
    with drive.lock:
        memberships: dict[str, list[dict[str, Any]]] = {}
        for p in drive.projects.values():
            for m in p.members:
                memberships.setdefault(m.user_id, []).append(
                    {
                        "project_id": p.id,
                        "role": m.role,
                        "valid_from": _iso(m.valid_from),
                        "valid_until": _iso(m.valid_until),
                    }
                )
        users = [
            {
                "user_id": u.user_id,
                "department": u.department,
                "clearance": SECRET_LEVELS[u.clearance],
                "roles": list(u.roles),
                "projects": memberships.get(u.user_id, []),
            }
            for u in sorted(drive.users.values(), key=lambda u: u.user_id)
        ]
        departments = [
            {"id": d.id, "name": d.name, "parent": d.parent}
            for d in sorted(drive.departments.values(), key=lambda d: d.id)
        ]
        projects = [{"id": p.id, "name": p.name} for p in sorted(drive.projects.values(), key=lambda p: p.id)]
        folders = [
            {"folder_id": f.folder_id, "path": drive.folder_path(f.folder_id), "break_inheritance": f.break_inheritance}
            for f in sorted(drive.folders.values(), key=lambda f: drive.folder_path(f.folder_id))
        ]
        grants = []
        for g in sorted(drive.grants.values(), key=lambda g: g.grant_id):
            if g.doc_id is not None:
                doc = drive.documents.get(g.doc_id)
                if doc is None:
                    continue
                path = drive.doc_path(doc)
            else:
                if g.folder_id not in drive.folders:
                    continue
                path = drive.folder_path(g.folder_id or "")
            grants.append(
                {
                    "grant_id": g.grant_id,
                    "path": path,
                    "folder_id": g.folder_id,
                    "doc_id": g.doc_id,
                    "subject": g.subject,
                    "actions": list(g.actions),
                    "effect": g.effect,
                    "valid_from": _iso(g.valid_from),
                    "valid_until": _iso(g.valid_until),
                }
            )
        return {
            "at": drive.clock.now().isoformat(),
            "users": users,
            "departments": departments,
            "projects": projects,
            "folders": folders,
            "grants": grants,
        }
