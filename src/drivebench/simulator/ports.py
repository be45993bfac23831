"""The narrow views of the simulator its parts are written against (annotations only: a ``Simulator``
satisfies each). A function that takes one of these reads nothing else of the simulator."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from drivebench.drive.permissions import PermissionEngine, Principal
    from drivebench.drive.state import Drive
    from drivebench.search.index.chunk_store import ChunkStore
    from drivebench.simulator.faults import FaultSet


class DriveHost(Protocol):
    """What the drive, permission and directory surfaces need: the drive, its engines (current and at an
    instant, as ``pointintime.Policies``), an index that follows an acknowledged write (``sync_index``) and
    the name-conflict view of a writer (``doc_lister``)."""

    @property
    def drive(self) -> Drive: ...

    @property
    def engine(self) -> PermissionEngine: ...

    def engine_at(self, at: datetime) -> PermissionEngine: ...

    def sync_index(self) -> object: ...

    def doc_lister(self, principal: Principal | None) -> Callable[[str], bool] | None: ...


class AnswerSources(Protocol):
    """What composing an answer from a recall's hits reads: the drive (names, paths), the chunk store (each
    hit's sentences), the current policy (what the principal could have been shown) and the faults that
    damage citations."""

    store: ChunkStore
    faults: FaultSet

    @property
    def drive(self) -> Drive: ...

    @property
    def engine(self) -> PermissionEngine: ...
