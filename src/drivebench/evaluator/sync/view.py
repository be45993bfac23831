"""One read of the drive's state (organisation, grants, folders, files, who may preview what), with the
questions the planner asks of it. Built fresh before each change: earlier changes are part of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drivebench.evaluator.sync.drive_client import DriveClient
from drivebench.formats.corpus import SECRET_LEVELS

# actions that include preview (the drive's action hierarchy: a grant of any of them lets one preview)
PREVIEWING = frozenset({"preview", "download", "edit", "share", "manage"})


def under(path: str, folder: str) -> bool:
    """Is ``path`` (a document's folder) ``folder`` itself or below it?"""
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass
class DriveView:
    users: dict[str, dict[str, Any]]
    departments: dict[str, dict[str, Any]]
    folders: dict[str, dict[str, Any]]  # by path
    grants: list[dict[str, Any]]
    files: dict[str, dict[str, Any]]  # by doc_id, not trashed
    access: dict[str, set[str]]
    now: str

    @classmethod
    def read(cls, drive: DriveClient) -> DriveView:
        d = drive.directory()
        files = {f["doc_id"]: f for f in drive.files("/") if not f.get("trashed")}
        return cls(
            users={u["user_id"]: u for u in d["users"]},
            departments={x["id"]: x for x in d["departments"]},
            folders={f["path"]: f for f in d["folders"]},
            grants=d["grants"],
            files=files,
            access={k: v for k, v in drive.access_all().items() if k in files},
            now=d["at"],
        )

    # ------------------------------------------------------------------ questions
    def level(self, doc_id: str) -> int:
        return SECRET_LEVELS.index(self.files[doc_id]["secret_level"])

    def clearance(self, user_id: str) -> int:
        return SECRET_LEVELS.index(self.users[user_id]["clearance"])

    def departments_of(self, user_id: str) -> set[str]:
        """The user's department and every department above it."""
        out, dept = set(), self.users[user_id]["department"]
        while dept is not None and dept not in out:
            out.add(dept)
            dept = (self.departments.get(dept) or {}).get("parent")
        return out

    def matches(self, subject: str, user_id: str) -> bool:
        user = self.users[user_id]
        kind, _, ident = subject.partition(":")
        if subject == "everyone":
            return True
        if kind == "user":
            return ident == user_id
        if kind == "dept":
            return ident in self.departments_of(user_id)
        if kind == "role":
            return ident in user["roles"]
        if kind == "project":
            return any(p["project_id"] == ident and p["valid_until"] is None for p in user["projects"])
        return False

    def reaches(self, grant: dict[str, Any], doc_id: str) -> bool:
        """Does the grant apply to the document (on it, or on a folder it inherits from)?"""
        if grant["doc_id"] is not None:
            return grant["doc_id"] == doc_id
        folder = self.files[doc_id]["folder"]
        if not under(folder, grant["path"]):
            return False
        path = folder
        while path != grant["path"] and path != "/":  # a break below the grant's folder stops it
            if self.folders.get(path, {}).get("break_inheritance"):
                return False
            path = path.rsplit("/", 1)[0] or "/"
        return True

    def allowing(self, user_id: str, doc_id: str) -> list[dict[str, Any]]:
        """The allow grants (with a previewing action) that reach the document for the user."""
        return [
            g
            for g in self.grants
            if g["effect"] == "allow"
            and PREVIEWING & set(g["actions"])
            and g["valid_until"] is None
            and self.matches(g["subject"], user_id)
            and self.reaches(g, doc_id)
        ]

    def sees(self, user_id: str, doc_id: str) -> bool:
        return user_id in self.access.get(doc_id, set())

    def docs_in(self, folder: str, direct: bool = False) -> list[str]:
        return sorted(
            d for d, f in self.files.items() if (f["folder"] == folder if direct else under(f["folder"], folder))
        )

    def path_of(self, doc_id: str) -> str:
        return self.files[doc_id]["path"]
