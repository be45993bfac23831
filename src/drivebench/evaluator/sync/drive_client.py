"""The drive's HTTP API as ``eval sync`` uses it: read the organisation, listings and access, apply
changes, move the clock, reset. Any non-2xx answer raises ``DriveError`` with the drive's own message:
a change that did not happen must never be measured as one that did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx


class DriveError(RuntimeError):
    """The drive refused or failed a call (status and message in the text; ``status`` None: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class DriveClient:
    def __init__(self, url: str, token: str, *, timeout: float = 30.0, http: httpx.Client | None = None):
        """``http``: a client of one's own (an in-process test client); its base URL and headers are used."""
        self.url = url.rstrip("/")
        self._http = http or httpx.Client(base_url=self.url, timeout=timeout)
        self._http.headers["Authorization"] = f"Bearer {token}"

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            r = self._http.request(method, path, **kw)
        except httpx.HTTPError as exc:
            raise DriveError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if r.status_code >= 300:
            raise DriveError(f"{method} {path}: HTTP {r.status_code}: {r.text[:300]}", r.status_code)
        return r.json() if r.content and r.headers.get("content-type", "").startswith("application/json") else r.content

    # ------------------------------------------------------------------ reads
    def directory(self) -> dict[str, Any]:
        return self._call("GET", "/api/v1/directory")

    def files(self, folder: str = "/") -> list[dict[str, Any]]:
        return self._call("GET", "/api/v1/files", params={"folder": folder, "recursive": "true"})["files"]

    def content(self, doc_id: str) -> bytes:
        return self._call("GET", f"/api/v1/files/{doc_id}/content")

    def access(self, doc_id: str) -> set[str]:
        return set(self._call("GET", f"/api/v1/files/{doc_id}/access")["users"])

    def access_all(self) -> dict[str, set[str]]:
        return {d["doc_id"]: set(d["users"]) for d in self._call("GET", "/api/v1/access")["documents"]}

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/_sim/stats")

    def clock(self) -> datetime:
        return datetime.fromisoformat(self._call("GET", "/_sim/clock")["now"])

    def changes(self, cursor: int, limit: int = 1000, epoch: str | None = None) -> dict[str, Any]:
        """A page of the feed; with ``epoch``, a cursor from another history of the drive raises (HTTP 410)."""
        params: dict[str, Any] = {"cursor": cursor, "limit": limit, **({"epoch": epoch} if epoch else {})}
        return self._call("GET", "/api/v1/changes", params=params)

    def feed_length(self) -> int:
        return self.feed_head()[0]

    def feed_head(self) -> tuple[int, str | None]:
        """The feed's length and its epoch (None from a drive that does not say one)."""
        page = self._call("GET", "/api/v1/changes", params={"cursor": 0, "limit": 1})
        return int(page["latest_cursor"]), page.get("epoch")

    # ------------------------------------------------------------------ changes
    def add_grant(self, path: str, subject: dict[str, Any], actions: list[str], **kw: Any) -> dict[str, Any]:
        body = {"path": path, "subject": subject, "actions": actions, **{k: v for k, v in kw.items() if v is not None}}
        return self._call("POST", "/api/permissions/grants", json=body)["grant"]

    def remove_grant(self, grant_id: str) -> None:
        self._call("DELETE", f"/api/permissions/grants/{grant_id}")

    def patch_user(self, user_id: str, **fields: Any) -> dict[str, Any]:
        return self._call("PATCH", f"/api/v1/users/{user_id}", json=fields)

    def end_membership(self, project_id: str, user_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/api/v1/projects/{project_id}/members/{user_id}")

    def create_department(self, dept_id: str, parent: str | None = None) -> dict[str, Any]:
        return self._call("POST", "/api/v1/departments", json={"id": dept_id, "parent": parent})

    def create_folder(self, path: str, break_inheritance: bool = False) -> dict[str, Any]:
        return self._call("POST", "/api/v1/folders", json={"path": path, "break_inheritance": break_inheritance})

    def set_inheritance(self, path: str, break_inheritance: bool) -> dict[str, Any]:
        return self._call("PATCH", "/api/v1/folders", json={"path": path, "break_inheritance": break_inheritance})

    def move(self, doc_id: str, folder: str) -> dict[str, Any]:
        return self._call("PATCH", f"/api/v1/files/{doc_id}", json={"folder": folder})

    def trash(self, doc_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/v1/files/{doc_id}/trash")

    def untrash(self, doc_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/v1/files/{doc_id}/untrash")

    def purge(self, doc_id: str) -> dict[str, Any]:
        """Destroy the document: versions, bytes, grants and history (the admin token; no trash needed first)."""
        return self._call("DELETE", f"/api/v1/files/{doc_id}")

    def touch(self, doc_id: str) -> None:
        """Move the document's modification time without changing its content, place or ACL (trash, untrash)."""
        self.trash(doc_id)
        self.untrash(doc_id)

    def upload(self, folder: str, name: str, data: bytes, level: str | None = None) -> dict[str, Any]:
        form = {"folder": folder, **({"secret_level": level} if level else {})}
        return self._call("POST", "/api/v1/files", files={"file": (name, data)}, data=form)

    def new_version(self, doc_id: str, name: str, data: bytes) -> dict[str, Any]:
        return self._call("POST", f"/api/v1/files/{doc_id}/versions", files={"file": (name, data)})

    def advance_clock(self, minutes: float) -> datetime:
        return datetime.fromisoformat(self._call("POST", "/_sim/clock/advance", json={"minutes": minutes})["now"])

    def reset(self) -> None:
        self._call("POST", "/_sim/reset")
