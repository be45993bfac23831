"""Opaque numbers: a keyed permutation of ``[0, 2**52)`` (a 4-round Feistel network over two 26-bit halves,
keyed BLAKE2b as the round function: a pseudorandom permutation, Luby-Rackoff).

A user sees ``encode(n)`` instead of a global counter ``n`` (a position in the change feed, a row of the chunk
store): the value is stable for the same ``n`` and key, so it can be handed back (a cursor), but without the
key it says nothing about ``n``, so neither its size nor the gap between two of them counts what the user
cannot see. The values stay below 2**53: exact in every JSON reader, JavaScript's included.
"""

from __future__ import annotations

import hashlib

BITS = 52
_HALF = BITS // 2
_MASK = (1 << _HALF) - 1
_ROUNDS = 4


class OpaqueInts:
    def __init__(self, key: bytes) -> None:
        if not 16 <= len(key) <= 64:
            raise ValueError("an opaque-number key has 16 to 64 bytes")
        self._key = key

    def _round(self, r: int, half: int) -> int:
        digest = hashlib.blake2b(bytes((r,)) + half.to_bytes(4, "big"), key=self._key, digest_size=4).digest()
        return int.from_bytes(digest, "big") & _MASK

    def encode(self, n: int) -> int:
        """The opaque value of ``0 <= n < 2**52``."""
        if not 0 <= n < 1 << BITS:
            raise ValueError(f"only 0 <= n < 2**{BITS} have an opaque value")
        left, right = n >> _HALF, n & _MASK
        for r in range(_ROUNDS):
            left, right = right, left ^ self._round(r, right)
        return (left << _HALF) | right

    def decode(self, value: int) -> int | None:
        """The ``n`` whose opaque value is ``value``; None when ``value`` is out of the domain."""
        if not 0 <= value < 1 << BITS:
            return None
        left, right = value >> _HALF, value & _MASK
        for r in reversed(range(_ROUNDS)):
            left, right = right ^ self._round(r, left), left
        return (left << _HALF) | right
