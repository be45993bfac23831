"""Enforce from many threads on several engines at once: no errors, identical decisions.

Casbin parses its matcher with ``ast.parse`` on every call; concurrent parses in different threads can
fail on CPython 3.11 before 3.11.8. The engine serialises enforce process-wide (``CASBIN_LOCK``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.state import Drive
from tests.support.decisions import user_may_preview


def test_concurrent_enforce_across_engines() -> None:
    drive = Drive.from_corpus(resolve_corpus("seed"))
    engines = [PermissionEngine(drive) for _ in range(3)]
    now = drive.clock.now()
    pairs = [(u, d) for u in sorted(drive.users) for d in sorted(drive.documents)]
    expected = {(u, d): user_may_preview(engines[0], u, d, now) for u, d in pairs}

    def work(i: int) -> list[tuple[str, str, bool]]:
        engine = engines[i % len(engines)]
        return [(u, d, user_may_preview(engine, u, d, now)) for u, d in pairs]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(24)))
    for batch in results:
        assert {(u, d): ok for u, d, ok in batch} == expected
