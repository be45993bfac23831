"""The simulated clock: every time-dependent decision reads it (or an explicit ``as_of``), never the wall clock."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


def as_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class SimClock:
    def __init__(self, now: datetime) -> None:
        self._now = as_utc(now)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, now: datetime) -> datetime:
        with self._lock:
            self._now = as_utc(now)
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        with self._lock:
            self._now = self._now + delta
            return self._now

    def tick(self) -> datetime:
        """Advance one microsecond and return the new time: gives every write a distinct, ordered timestamp."""
        return self.advance(timedelta(microseconds=1))
