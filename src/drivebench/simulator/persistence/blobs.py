"""Content-addressed file blobs on disk: ``blobs/<sha256[:2]>/<sha256>``.

A blob is written to a temporary file in the same directory tree, fsynced, renamed into place and
its directory fsynced, so a blob either exists whole under its address or not at all. It is written
before the metadata that references it is committed; a crash in between leaves an unreferenced
file that ``gc`` removes at the next start. Reads verify the content against its address.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from drivebench.drive.errors import NotFound
from drivebench.formats.files import write_atomic


class DiskBlobs:
    def __init__(self, root: Path, verify: bool = True) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.verify = verify
        self._lock = threading.Lock()

    def path(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise NotFound(f"bad blob address {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path(digest)
        with self._lock:
            if path.is_file() and path.stat().st_size == len(data):
                return digest
            write_atomic(path, data)
        return digest

    def get(self, digest: str) -> bytes:
        try:
            data = self.path(digest).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"blob {digest} missing") from None
        if self.verify and hashlib.sha256(data).hexdigest() != digest:
            raise NotFound(f"blob {digest} is corrupt (content does not match its address)")
        return data

    def __contains__(self, digest: str) -> bool:
        try:
            return self.path(digest).is_file()
        except NotFound:
            return False

    def delete(self, digest: str) -> None:
        with self._lock:
            self.path(digest).unlink(missing_ok=True)

    def digests(self) -> set[str]:
        return {p.name for p in self.root.glob("??/*") if not p.name.startswith(".tmp-")}

    def gc(self, referenced: set[str]) -> int:
        """Remove leftover temporary files and blobs nothing references; returns how many went."""
        removed = 0
        with self._lock:
            for p in self.root.glob("??/.tmp-*"):
                p.unlink(missing_ok=True)
                removed += 1
            for p in self.root.glob("??/*"):
                if not p.name.startswith(".tmp-") and p.name not in referenced:
                    p.unlink(missing_ok=True)
                    removed += 1
        return removed

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.glob("??/*"))
