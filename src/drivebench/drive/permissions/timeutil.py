"""Exact integer time for policies: microseconds since the Unix epoch (no float rounding at boundaries)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
