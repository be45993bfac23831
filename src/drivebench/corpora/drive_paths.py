"""Where a corpus's documents sit in its drive over time, and the paths that two live documents share.

A real drive holds one file per path (folder + name): it refuses a second file at a path a live document
holds. A document is at a path from its ``created_at`` until it is trashed (``trashed_at``; the trash is
not a path). Before its first move it is in that move's ``from_folder``; a move takes effect at its ``at``
(the rule of ``drive.state``'s placements and of the generator's ``folder_at``). Names never change.

``path_clashes(manifest)`` finds every path that two documents held at one moment up to the corpus clock's
``now`` (``clock.now``; nothing is known after it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from drivebench.drive.clock import as_utc
from drivebench.formats.corpus import Document, Manifest


def doc_path(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def is_trashed(d: Document, at: datetime) -> bool:
    """True when ``d`` is in the trash at ``at`` (trashed at or before it)."""
    return d.trashed_at is not None and as_utc(d.trashed_at) <= as_utc(at)


@dataclass(frozen=True)
class Stay:
    """``doc_id`` held ``path`` from ``start`` (inclusive) until ``end`` (exclusive; None = still there)."""

    doc_id: str
    path: str
    start: datetime
    end: datetime | None


@dataclass(frozen=True)
class PathClash:
    """``doc_ids`` (sorted) held ``path`` at once; ``since`` is the first moment two of them did."""

    path: str
    doc_ids: tuple[str, ...]
    since: datetime

    def __str__(self) -> str:
        return f"{self.path}: {', '.join(self.doc_ids)} (since {self.since.isoformat()})"


def stays(d: Document) -> list[Stay]:
    """The paths ``d`` held, in time order, from its creation until it was trashed."""
    born = as_utc(d.created_at)
    gone = as_utc(d.trashed_at) if d.trashed_at is not None else None
    moves = sorted(d.moves, key=lambda m: m.at)
    spans: list[tuple[str, datetime | None, datetime | None]] = []  # folder, from, until
    if not moves:
        spans.append((d.folder, None, None))
    else:
        spans.append((moves[0].from_folder, None, as_utc(moves[0].at)))
        for i, mv in enumerate(moves):
            until = as_utc(moves[i + 1].at) if i + 1 < len(moves) else None
            spans.append((mv.to_folder, as_utc(mv.at), until))
    out = []
    for folder, since, until in spans:
        start = born if since is None or since < born else since
        end = gone if until is None or (gone is not None and gone < until) else until
        if end is None or start < end:
            out.append(Stay(d.doc_id, doc_path(folder, d.name), start, end))
    return out


def _overlap(a: Stay, b: Stay) -> tuple[datetime, datetime | None] | None:
    start = max(a.start, b.start)
    ends = [e for e in (a.end, b.end) if e is not None]
    end = min(ends) if ends else None
    return (start, end) if end is None or start < end else None


def path_clashes(m: Manifest, *, until: datetime | None = None) -> list[PathClash]:
    """Every path two documents held at one moment up to ``until`` (default the corpus clock's ``now``),
    sorted by path; a path held by several documents at different moments is one clash naming all of
    them that overlapped another."""
    limit = as_utc(until if until is not None else m.clock.now)
    by_path: dict[str, list[Stay]] = {}
    for d in m.documents:
        for s in stays(d):
            by_path.setdefault(s.path, []).append(s)
    out = []
    for path, held in sorted(by_path.items()):
        if len({s.doc_id for s in held}) < 2:
            continue
        ids: set[str] = set()
        first: datetime | None = None
        for i, a in enumerate(held):
            for b in held[i + 1 :]:
                if a.doc_id == b.doc_id:
                    continue
                span = _overlap(a, b)
                if span is None or span[0] > limit:
                    continue
                ids |= {a.doc_id, b.doc_id}
                first = span[0] if first is None else min(first, span[0])
        if first is not None:
            out.append(PathClash(path, tuple(sorted(ids)), first))
    return out
