"""Document catalog: what the evaluator knows about each document id.

Used to resolve citations (file name / path / title -> doc id), to tell whether a result was
trashed when the query was asked, and to stratify queries by their gold documents' department,
file type and secret level.

Lookup keys are *folded*: Unicode NFKC (full-width -> half-width), case folded, whitespace collapsed
and trimmed. A document is found by its doc id, file name, file name without extension, full path
(``/folder/name.ext``, with or without the leading ``/``) and title. A key shared by several
documents is ambiguous: ``lookup`` returns every candidate, in catalog order.

Loaders:

* ``Catalog.from_manifest(manifest)``: a drivebench corpus (path = folder + name; department = the
  nearest folder's ``owner_department``, else the document's ``department`` tag).
* ``Catalog.from_file(path)``: a CSV (header row) or JSONL file describing an external system's
  documents. Columns/keys: ``doc_id`` (required), ``name``, ``path``, ``title``, ``file_type``,
  ``department``, ``secret_level``, ``version_ids`` (JSON list, or ``|``-separated in CSV, oldest
  first), ``trashed_at`` (ISO-8601). A missing ``name`` is taken from the last segment of ``path``;
  a missing ``file_type`` from the name's extension.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drivebench.formats.corpus import Manifest

_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """NFKC-normalise, case-fold and collapse whitespace: the key used for every name lookup."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).casefold().strip()


def split_ext(name: str) -> tuple[str, str]:
    """``"报价单.PDF"`` -> ``("报价单", "pdf")``; no extension -> ``(name, "")``."""
    m = re.fullmatch(r"(.+)\.([A-Za-z0-9]{1,6})", name)
    return (m.group(1), m.group(2).lower()) if m else (name, "")


@dataclass(frozen=True)
class CatalogDoc:
    doc_id: str
    name: str = ""
    path: str = ""
    title: str | None = None
    file_type: str | None = None
    department: str | None = None
    secret_level: str | None = None
    version_ids: tuple[str, ...] = ()
    trashed_at: datetime | None = None

    def lookup_keys(self) -> list[str]:
        """Every folded key this document answers to."""
        keys = [self.doc_id, self.name, split_ext(self.name)[0], self.path, self.path.lstrip("/")]
        if self.title:
            keys.append(self.title)
        return list(dict.fromkeys(fold(k) for k in keys if k))

    def trashed_by(self, when: datetime | None) -> bool:
        """Trashed at ``when`` (``None`` = now, i.e. trashed at all). Naive times are taken as UTC."""
        return self.trashed_at is not None and (when is None or _utc(self.trashed_at) <= _utc(when))


def _utc(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


class Catalog:
    """Documents by id, plus an index of folded keys. ``now`` is the drive's clock: the query time
    of queries without ``as_of`` (``None``: such queries see every trashed document as trashed)."""

    def __init__(self, docs: Iterable[CatalogDoc] = (), now: datetime | None = None) -> None:
        self.docs: dict[str, CatalogDoc] = {}
        self.now = now
        self._index: dict[str, list[str]] = {}
        for doc in docs:
            self.add(doc)

    def add(self, doc: CatalogDoc) -> None:
        """Add a document (a doc id already present is replaced in ``docs`` and keeps its old keys)."""
        self.docs[doc.doc_id] = doc
        for key in doc.lookup_keys():
            ids = self._index.setdefault(key, [])
            if doc.doc_id not in ids:
                ids.append(doc.doc_id)

    def __len__(self) -> int:
        return len(self.docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.docs

    def __iter__(self) -> Iterator[CatalogDoc]:
        return iter(self.docs.values())

    def get(self, doc_id: str) -> CatalogDoc | None:
        return self.docs.get(doc_id)

    def lookup(self, key: str) -> list[str]:
        """Doc ids whose id, name, stem, path or title folds to ``fold(key)`` (exact id match first)."""
        if key in self.docs:
            return [key]
        return list(self._index.get(fold(key), ()))

    def is_trashed(self, doc_id: str, when: datetime | None = None) -> bool:
        """Trashed at ``when`` (default: the catalog's ``now``; with neither, trashed at all)."""
        doc = self.docs.get(doc_id)
        return doc is not None and doc.trashed_by(when if when is not None else self.now)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> Catalog:
        owners = {f.path: f.owner_department for f in manifest.folders}

        def department(folder: str, tags: dict[str, str]) -> str | None:
            path: str | None = folder
            while path:
                if owners.get(path):
                    return owners[path]
                path = None if path == "/" else (path.rsplit("/", 1)[0] or "/")
            return tags.get("department")

        docs = [
            CatalogDoc(
                doc_id=d.doc_id,
                name=d.name,
                path=f"{d.folder.rstrip('/')}/{d.name}",
                title=d.title,
                file_type=d.file_type,
                department=department(d.folder, d.tags),
                secret_level=d.secret_level,
                version_ids=tuple(v.version_id for v in sorted(d.versions, key=lambda v: v.version)),
                trashed_at=d.trashed_at,
            )
            for d in manifest.documents
        ]
        return cls(docs, now=manifest.clock.now)

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], now: datetime | None = None) -> Catalog:
        return cls((_doc_from_record(r) for r in records), now=now)

    @classmethod
    def from_file(cls, path: str | Path, now: datetime | None = None) -> Catalog:
        """Load a CSV (``.csv``) or JSONL (anything else) catalog file."""
        path = Path(path)
        with path.open(encoding="utf-8-sig", newline="") as fh:
            if path.suffix.lower() == ".csv":
                rows: list[dict[str, Any]] = list(csv.DictReader(fh))
            else:
                rows = [json.loads(line) for line in fh if line.strip()]
        try:
            return cls.from_records(rows, now=now)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{path}: bad catalog row ({exc})") from exc

    @classmethod
    def from_ids(cls, doc_ids: Iterable[str]) -> Catalog:
        """A bare catalog that only knows ids (used when no catalog is given)."""
        return cls(CatalogDoc(doc_id=d) for d in dict.fromkeys(doc_ids))


def _doc_from_record(r: dict[str, Any]) -> CatalogDoc:
    doc_id = str(r["doc_id"]).strip()
    if not doc_id:
        raise ValueError("empty doc_id")
    path = (r.get("path") or "").strip()
    name = (r.get("name") or "").strip() or path.rstrip("/").rsplit("/", 1)[-1]
    versions = r.get("version_ids") or ()
    if isinstance(versions, str):
        versions = [v.strip() for v in versions.split("|") if v.strip()]
    trashed = r.get("trashed_at") or None
    return CatalogDoc(
        doc_id=doc_id,
        name=name,
        path=path,
        title=(r.get("title") or None),
        file_type=(r.get("file_type") or split_ext(name)[1] or None),
        department=(r.get("department") or None),
        secret_level=(r.get("secret_level") or None),
        version_ids=tuple(str(v) for v in versions),
        trashed_at=datetime.fromisoformat(trashed) if isinstance(trashed, str) else trashed,
    )
