"""The drive's permission engines: the one of its current policy and the ones of the drive as it stood at
past instants (``as_of``). What ``pointintime`` and every surface that decides access read; nothing else
of the simulator."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING

from drivebench.drive.clock import as_utc
from drivebench.drive.history import PolicyView, epoch_of, epoch_start
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.state import Drive

if TYPE_CHECKING:
    from drivebench.simulator.faults import FaultSet


class Policies:
    """Satisfies ``pointintime.Policies``. One per drive: a reset or seed swaps in a new one whole."""

    def __init__(self, drive: Drive, faults: FaultSet) -> None:
        self.drive = drive
        self.faults = faults  # stale-acl may hold the previous engine for a while
        self.lock = threading.Lock()  # builds and swaps of engines; a reset holds it while it swaps
        self._engine: PermissionEngine | None = None
        self._past_engines: dict[tuple[int, int], PermissionEngine] = {}  # (policy version, tree epoch)
        self._placement_times: tuple[int, list[datetime]] = (-1, [])

    @property
    def built(self) -> PermissionEngine | None:
        """The engine built last (None before the first), without building one: may be of an older policy."""
        return self._engine

    def is_current(self) -> bool:
        """True when the engine built last is the current policy's (no compile needed)."""
        engine = self._engine
        return engine is not None and engine.policy_version == self.drive.policy_version

    @property
    def engine(self) -> PermissionEngine:
        """The engine of the current policy. Readers of the current version take no lock (an engine is
        immutable once built); after a policy change one thread builds the new engine aside and swaps it
        in (writes build it before they are acknowledged: ``Simulator.sync_index``), so a request never
        sees a policy older than the last acknowledged change."""
        engine = self._engine
        if engine is not None and engine.policy_version == self.drive.policy_version:
            return engine
        with self.lock:
            if self._engine is None or self._engine.policy_version != self.drive.policy_version:
                if self._engine is not None and self.faults.hold_stale_policy(self._engine, self.drive):
                    return self._engine  # FAULT stale-acl: the policy from before the change, for a while
                previous = self._engine
                derived = PermissionEngine.after_grant_changes(previous, self.drive) if previous is not None else None
                self._engine = derived if derived is not None else PermissionEngine(self.drive)
            return self._engine

    def engine_at(self, at: datetime) -> PermissionEngine:
        """The engine for decisions at ``at``. At the clock's current instant: the live drive (``engine``).
        At any other instant (``as_of``): the drive as it stood then, i.e. grants bounded by when they
        existed and the tree of that time (see ``drive.history``); one engine per tree epoch, cached per
        policy version. The two agree whenever the clock is at or after the latest change."""
        if as_utc(at) == self.drive.clock.now():
            return self.engine
        with self.drive.lock:
            if self._placement_times[0] != self.drive.policy_version:
                self._placement_times = (self.drive.policy_version, self.drive.placement_times())
            version, times = self._placement_times
        epoch = epoch_of(times, as_utc(at))
        key = (version, epoch)
        with self.lock:
            past = self._past_engines.get(key)
        if past is None:
            past = PermissionEngine(PolicyView(self.drive, epoch_start(times, epoch)))
            with self.lock:
                self._past_engines = {k: v for k, v in self._past_engines.items() if k[0] == version}
                past = self._past_engines.setdefault(key, past)
        return past
