"""The simulated clock: every time-dependent decision reads it (or an explicit ``as_of``), never the wall clock;
and exact integer time for policies: microseconds since the Unix epoch (no float rounding at boundaries)."""

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


# The instants the simulator accepts from a request (as_of, grant bounds, the clock): far enough from
# datetime's own limits that an offset conversion or a day of arithmetic can never overflow.
MIN_TIME = datetime(1900, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def checked_utc(value: datetime, field: str = "time") -> datetime:
    """``as_utc(value)``, or ``InvalidRequest`` (400) when it overflows or lies outside [MIN_TIME, MAX_TIME)."""
    from drivebench.drive.errors import InvalidRequest

    try:
        at = as_utc(value)
    except (OverflowError, ValueError):
        at = None
    if at is None or not MIN_TIME <= at < MAX_TIME:
        raise InvalidRequest(f"{field}: {value!s} is out of range ({MIN_TIME.year} to {MAX_TIME.year - 1}, UTC)")
    return at


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
UNBOUNDED = ""


def to_us(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _US


def bound(value: datetime | None) -> str:
    """A policy bound: ``""`` when unbounded, else the integer microseconds as text."""
    return UNBOUNDED if value is None else str(to_us(value))


def within(t: int, nbf: str, exp: str) -> bool:
    """The Casbin function ``within(r.t, p.nbf, p.exp)``: nbf <= t < exp, either bound may be empty."""
    if nbf != UNBOUNDED and int(t) < int(nbf):
        return False
    return not (exp != UNBOUNDED and int(t) >= int(exp))
