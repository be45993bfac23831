"""Seeded, stratified sampling of (user, forbidden document) pairs.

Every pair the ground truth forbids is enumerated (the fast previewable mask, proven equal to
``enforce``), shuffled with the seed, and the first ``pool`` of them are explained (``GroundTruth.why``; each
picked pair's explanation is then checked against ``enforce``).
Strata are (reason, secret level, user's department). Pairs are drawn round-robin: over reasons first
(so a rare reason such as an expired project membership is never crowded out by ``no-grant``), then
over the (level, department) cells of that reason, then at random within a cell. The same corpus,
seed and ``n`` always give the same pairs in the same order.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from drivebench.evaluator.probe.groundtruth import REASONS, GroundTruth, Why

DEFAULT_POOL = 10000


@dataclass(frozen=True)
class Pair:
    pair_id: str
    user_id: str
    department: str
    doc_id: str
    level: str
    why: Why

    @property
    def reason(self) -> str:
        return self.why.reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "pair_id": self.pair_id,
            "user_id": self.user_id,
            "department": self.department,
            "doc_id": self.doc_id,
            "secret_level": self.level,
            "why_forbidden": self.why.as_dict(),
        }


def forbidden_pairs(gt: GroundTruth) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    docs = gt.engine.doc_ids
    trashed = {d for d in docs if gt.trashed(d)}
    for u in gt.users():
        mask = gt.mask(u)
        out.extend((u, d) for i, d in enumerate(docs) if not mask[i] or d in trashed)
    return out


def sample_pairs(gt: GroundTruth, n: int, seed: int = 0, pool: int = DEFAULT_POOL) -> tuple[list[Pair], dict[str, Any]]:
    """``n`` pairs (fewer when the corpus has fewer) and a summary of the population they came from."""
    rng = random.Random(seed)
    population = forbidden_pairs(gt)
    rng.shuffle(population)
    explained = population[: max(pool, n)]
    cells: dict[str, dict[tuple[str, str], list[tuple[str, str, Why]]]] = defaultdict(lambda: defaultdict(list))
    for u, d in explained:
        why = gt.why(u, d, verify=False)
        cells[why.reason][(gt.level(d), gt.drive.users[u].department)].append((u, d, why))
    order = [r for r in REASONS if r in cells]
    by_reason = {r: sum(len(b) for b in cells[r].values()) for r in order}
    cursors = {r: sorted(cells[r]) for r in order}
    picked: list[Pair] = []
    turn = {r: 0 for r in order}
    while len(picked) < n and any(cursors.values()):
        for r in order:
            keys = cursors[r]
            if not keys or len(picked) >= n:
                continue
            key = keys[turn[r] % len(keys)]
            bucket = cells[r][key]
            u, d, why = bucket.pop(rng.randrange(len(bucket)))
            if not bucket:
                keys.remove(key)
            else:
                turn[r] += 1
            why = gt.why(u, d, verify=True)  # the pair's explanation, checked against enforce
            picked.append(Pair(f"p{len(picked) + 1:05d}", u, gt.drive.users[u].department, d, gt.level(d), why))
    summary = {"forbidden_pairs": len(population), "explained": len(explained), "by_reason_explained": by_reason}
    return picked, summary
