"""Map a target's own ids (paths, file names, foreign ids, version numbers) to the corpus's ids.

``IdMapper(match, manifest=..., map_file=...)``; ``match`` is

* ``"doc_id"``: the target returns the corpus's doc ids (the simulator). With a corpus, an id the
  corpus does not know is unmapped.
* ``"path"``: the result's id is the document's drive path (``/folder/name.ext``); the current
  path and every past path (the corpus's ``moves``) map to the document. Paths compare after
  Unicode NFKC, case folding and ``\\`` -> ``/``; a current path beats a past one; a path shared by
  several documents is ambiguous (unmapped).
* ``"name"``: the file name (or the last segment of a path), when exactly one document has it.
* a CSV (header ``foreign_id,doc_id``) or JSONL (``{"foreign_id": .., "doc_id": ..}``) file; rows
  may instead give ``foreign_version_id,version_id`` to map foreign version ids.

Versions: a result's version (``version_id``, or ``version_no`` from ``response.version``) maps to
the document's corpus version id when it is one already, when the map file names it, or when it is
a version number ``1..n`` (``"2"``, ``"v2"``). Otherwise the result keeps no version id and the
foreign one is counted.

A result that maps to nothing keeps its slot in the ranking with ``doc_id = "unmapped:<id>"`` and
``unmapped: true``: it is never a hit, never judged by the leak oracle, and always counted and
listed (``scoring``: ``unmapped``).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivebench.evaluator.catalog import fold
from drivebench.formats.evalset import RunHit, RunRecord

if TYPE_CHECKING:
    from drivebench.formats.corpus import Manifest

MATCH_MODES = ("doc_id", "path", "name")
UNMAPPED_PREFIX = "unmapped:"
_VERSION_NO = re.compile(r"^[vV]?(\d{1,6})$")


class IdMapError(ValueError):
    """A mapping that cannot be set up (configuration error)."""


def fold_path(path: str) -> str:
    text = fold(path.replace("\\", "/"))
    text = re.sub(r"/+", "/", text).rstrip("/")
    return text if text.startswith("/") else "/" + text


def _join(folder: str, name: str) -> str:
    return (folder.rstrip("/") or "") + "/" + name


@dataclass
class MapStats:
    results: int = 0
    mapped: int = 0
    unmapped: int = 0
    unmapped_versions: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


class IdMapper:
    def __init__(self, match: str, *, manifest: Manifest | None = None, map_file: Path | None = None) -> None:
        self.match = match
        self.by_key: dict[str, list[str]] = {}
        self.past: dict[str, list[str]] = {}
        self.versions: dict[str, list[str]] = {}
        self.version_map: dict[str, str] = {}
        self.doc_ids: set[str] | None = None
        if manifest is not None:
            self.doc_ids = {d.doc_id for d in manifest.documents}
            self.versions = {d.doc_id: [v.version_id for v in d.versions] for d in manifest.documents}
        if match == "doc_id":
            self.describe = "doc_id (the target returns the corpus's ids)"
        elif match in ("path", "name"):
            if manifest is None:
                raise IdMapError(f'[ids] match = "{match}" needs the corpus (--corpus) the drive was loaded from')
            for d in manifest.documents:
                if match == "path":
                    self.by_key.setdefault(fold_path(_join(d.folder, d.name)), []).append(d.doc_id)
                    for mv in d.moves:
                        key = fold_path(_join(mv.from_folder, d.name))
                        if d.doc_id not in self.past.get(key, []):
                            self.past.setdefault(key, []).append(d.doc_id)
                else:
                    self.by_key.setdefault(fold(d.name), []).append(d.doc_id)
            self.describe = "drive path (current or any past path)" if match == "path" else "unique file name"
        else:
            path = map_file or Path(match)
            self._load_map(path)
            self.describe = f"map file {path}"

    # ------------------------------------------------------------------ map file
    def _load_map(self, path: Path) -> None:
        if not path.is_file():
            raise IdMapError(
                f"[ids] match = {self.match!r}: not one of {', '.join(MATCH_MODES)} and no such map file {path}"
            )
        rows: list[tuple[int, dict[str, Any]]] = []
        try:
            if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
                for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if line.strip():
                        obj = json.loads(line)
                        if not isinstance(obj, dict):
                            raise IdMapError(f"{path}:{lineno}: each line must be a JSON object")
                        rows.append((lineno, obj))
            else:
                with path.open(encoding="utf-8-sig", newline="") as fh:
                    rows = [(i, row) for i, row in enumerate(csv.DictReader(fh), 2)]
        except (OSError, ValueError) as exc:
            if isinstance(exc, IdMapError):
                raise
            raise IdMapError(f"{path}: {exc}") from None
        for lineno, row in rows:
            if row.get("foreign_id") not in (None, "") and row.get("doc_id") not in (None, ""):
                self.by_key.setdefault(str(row["foreign_id"]).strip(), []).append(str(row["doc_id"]).strip())
            elif row.get("foreign_version_id") not in (None, "") and row.get("version_id") not in (None, ""):
                self.version_map[str(row["foreign_version_id"]).strip()] = str(row["version_id"]).strip()
            else:
                raise IdMapError(f"{path}:{lineno}: give foreign_id and doc_id (or foreign_version_id and version_id)")
        if not self.by_key:
            raise IdMapError(f"{path}: no foreign_id -> doc_id rows")

    def learn(self, doc_id: str, path: str, name: str) -> None:
        """Also know a document by its place on a live drive (``eval sync``: a document uploaded or moved after
        the corpus loaded); what it already maps keeps mapping, so a moved document answers to both paths."""
        if self.doc_ids is None:
            self.doc_ids = set()
        self.doc_ids.add(doc_id)
        if self.match in ("path", "name"):
            key = fold_path(path) if self.match == "path" else fold(name)
            if doc_id not in self.by_key.get(key, []):
                self.by_key.setdefault(key, []).append(doc_id)

    # ------------------------------------------------------------------ mapping
    def doc_for(self, foreign: str) -> tuple[str | None, str]:
        """``(doc_id, "")`` or ``(None, reason)``."""
        if self.match == "doc_id":
            if self.doc_ids is not None and foreign not in self.doc_ids:
                return None, "not a doc id of the corpus"
            return foreign, ""
        if self.match == "path":
            key = fold_path(foreign)
            found = self.by_key.get(key) or self.past.get(key) or []
        elif self.match == "name":
            found = self.by_key.get(fold(foreign.replace("\\", "/").rsplit("/", 1)[-1])) or []
        else:
            found = self.by_key.get(foreign.strip()) or []
        found = list(dict.fromkeys(found))
        if not found:
            return None, f"no document with this {self.match if self.match in MATCH_MODES else 'id in the map'}"
        if len(found) > 1:
            return None, f"ambiguous ({len(found)} documents)"
        if self.doc_ids is not None and found[0] not in self.doc_ids:
            return None, "the map names a doc id the corpus does not have"
        return found[0], ""

    def version_for(self, doc_id: str, raw: str | None) -> tuple[str | None, bool]:
        """``(version_id, ok)``; ``ok`` is False when a version was given but maps to nothing."""
        if raw is None or raw == "":
            return None, True
        known = self.versions.get(doc_id)
        if known is None:  # no corpus: keep what the target said (mapped through the map file if listed)
            return self.version_map.get(raw, raw), True
        if raw in known:
            return raw, True
        if raw in self.version_map and self.version_map[raw] in known:
            return self.version_map[raw], True
        m = _VERSION_NO.match(raw.strip())
        if m and 1 <= int(m.group(1)) <= len(known):
            return known[int(m.group(1)) - 1], True
        return None, False

    def map_hit(self, hit: RunHit, stats: MapStats) -> RunHit:
        stats.results += 1
        extra = dict(hit.model_extra or {})
        if extra.get("unmapped"):  # already mapped (a run file written by drivebench)
            stats.unmapped += 1
            stats.reasons[str(extra.get("unmapped_reason") or "unmapped")] += 1
            return hit
        foreign = str(extra.pop("foreign_id", None) or hit.doc_id)
        doc_id, reason = self.doc_for(foreign)
        if doc_id is None:
            stats.unmapped += 1
            stats.reasons[reason] += 1
            return RunHit(
                doc_id=UNMAPPED_PREFIX + foreign,
                version_id=None,
                score=hit.score,
                rank=hit.rank,
                **{**extra, "foreign_id": foreign, "unmapped": True, "unmapped_reason": reason},
            )
        stats.mapped += 1
        raw_version = extra.pop("version_no", None) or hit.version_id
        version_id, ok = self.version_for(doc_id, None if raw_version is None else str(raw_version))
        if not ok:
            stats.unmapped_versions += 1
            extra["foreign_version"] = str(raw_version)
        if foreign != doc_id:
            extra["foreign_id"] = foreign
        return RunHit(doc_id=doc_id, version_id=version_id, score=hit.score, rank=hit.rank, **extra)

    def map_records(self, records: Iterable[RunRecord]) -> tuple[list[RunRecord], MapStats]:
        stats = MapStats()
        out = []
        for rec in records:
            if rec.error is not None or not rec.results:
                out.append(rec)
                continue
            hits = [self.map_hit(h, stats) for h in rec.results]
            update: dict[str, Any] = {"results": hits}
            if all(is_unmapped(h) for h in hits):  # an unmappable response: a failed query, not an answer
                first = hits[0].model_extra or {}
                update["error"] = (
                    f"none of the {len(hits)} results maps to a corpus document by {self.describe} "
                    f"(e.g. {first.get('foreign_id')!r}: {first.get('unmapped_reason')})"
                )
                update["error_kind"] = "unmapped"
            out.append(rec.model_copy(update=update))
        return out, stats


def is_unmapped(hit: RunHit) -> bool:
    return bool((hit.model_extra or {}).get("unmapped"))


def id_mapper_for(
    match: str, corpus_dir: Path | None, profile_source: str | Path | None = None, manifest: Manifest | None = None
) -> IdMapper:
    """The mapper ``--match`` names (``doc_id``, ``path``, ``name`` or a map file; a relative map file not found
    as given is looked up beside the target profile), over the corpus in ``corpus_dir`` when given
    (``manifest``: its corpus.json already read)."""
    from drivebench.formats.corpus import load_manifest

    if manifest is None and corpus_dir is not None:
        manifest = load_manifest(corpus_dir)
    map_file = None
    if match not in MATCH_MODES:
        map_file = Path(match)
        if not map_file.is_absolute() and profile_source and not map_file.exists():
            map_file = Path(profile_source).parent / map_file
    return IdMapper(match, manifest=manifest, map_file=map_file)
