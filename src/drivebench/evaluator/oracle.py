"""The leak oracle for a corpus: the corpus's own Casbin policies, independent of the target.

``corpus_oracle(dir)`` builds a fresh permission engine from the corpus manifest (not from the
server under test) and answers "may this query's principal preview this document at the query's
time?". The query's time is its ``as_of``, else the corpus clock's ``now`` (or ``at`` if given). A past time is
judged on the drive as it stood then: grants bounded by when they existed and the folder tree of that time, so
a document moved since is judged in the folder it was in (``drive.history``: one engine per tree epoch).
A document id the corpus does not know is treated as not previewable (fail closed: a target that
returns unknown documents is reported, not excused). Each decision is Casbin's ``enforce`` (the reference, not
the simulator's compiled fast path: the oracle shares nothing with the target's search), memoised per
(principal, document, time): the engine is a snapshot, so a repeated question has the same answer.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from drivebench.drive.clock import as_utc
from drivebench.drive.errors import DriveError
from drivebench.drive.history import PolicyView, epoch_of, epoch_start
from drivebench.drive.permissions import PermissionEngine, Principal
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.state import Drive
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import EvalQuery


class DriveOracle:
    """The oracle over a drive's policy as it stands when the oracle is built (the engine is a snapshot)."""

    def __init__(self, drive: Drive, at: datetime | None = None) -> None:
        self.drive = drive
        self.description = f"the corpus's policies ({drive.name}) at each query's time"
        self.engine = PermissionEngine(self.drive)
        self.at = as_utc(at) if at is not None else self.drive.clock.now()
        self._tree_changes = drive.placement_times()
        self._engines: dict[int, PermissionEngine] = {len(self._tree_changes): self.engine}
        self._principals: dict[tuple[str | None, str | None, str | None], Principal] = {}
        self._decisions: dict[tuple[Any, ...], bool] = {}

    def _engine_at(self, at: datetime) -> PermissionEngine:
        """The engine compiled from the tree as it stood at ``at`` (the current one after the last move)."""
        epoch = epoch_of(self._tree_changes, at)
        if epoch not in self._engines:
            self._engines[epoch] = PermissionEngine(PolicyView(self.drive, epoch_start(self._tree_changes, epoch)))
        return self._engines[epoch]

    def principal(self, q: EvalQuery) -> Principal:
        key = (q.user_id, q.user_role, q.department)
        if key not in self._principals:
            if q.user_id:
                self._principals[key] = self.engine.user_principal(q.user_id)
            else:
                self._principals[key] = self.engine.role_principal(q.user_role or "", q.department)
        return self._principals[key]

    def __call__(self, q: EvalQuery, doc_id: str) -> bool:
        if doc_id not in self.engine.doc_index:
            return False
        at = as_utc(q.as_of) if q.as_of is not None else self.at
        key = (q.user_id, q.user_role, q.department, doc_id, at)
        if key not in self._decisions:
            try:
                level = self.engine.drive.doc(doc_id).secret_level
                engine = self._engine_at(at)
                self._decisions[key] = engine.enforce(self.principal(q), doc_obj(doc_id), "preview", at, level)
            except DriveError:
                self._decisions[key] = False
        return self._decisions[key]


def corpus_oracle(corpus_dir: Path, at: datetime | None = None) -> DriveOracle:
    """The oracle of a corpus as written on disk (a fresh drive, independent of any running simulator)."""
    return DriveOracle(Drive.from_manifest(load_manifest(corpus_dir), None), at)
