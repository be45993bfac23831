"""multi_hop_completeness, full_chain_rate and hit rate per hop position.

A multi-hop query lists the ordered chain of documents needed to answer it (``hops``, de-duplicated,
order kept). With ``h = |hops|`` and K the scoring depth (the largest cutoff, reported as
``config.multi_hop_k``)::

    completeness(q)   = |hops(q) ∩ top-K(q)| / h
    full_chain(q)     = 1 if every hop is in top K else 0
    multi_hop_completeness[h] = mean of completeness over queries with h hops
    full_chain_rate[h]        = mean of full_chain over queries with h hops
    hop_position_hit_rate[h][p] = share of h-hop queries whose p-th hop (1-based) is in top K

All three are objects keyed by hop count as a string (``{"1": .., "2": .., "3": ..}``).

Edge cases:
* queries without ``hops``: excluded (they have no chain); no query with hops: empty objects.
* empty run / errored / missing query: 0 (every hop missed), still counted.
* duplicate chunks of one hop doc: counts once; ties: not re-sorted; fewer results than K: as returned.

Reference: HotpotQA / MuSiQue supporting-fact recall, broken down by hop count (no public table does).
"""

from __future__ import annotations

from collections.abc import Sequence


def hop_hits(ranked: Sequence[str], hops: Sequence[str], k: int) -> list[bool]:
    """For each distinct hop, in chain order: is it in the top K?"""
    top = set(ranked[:k])
    return [h in top for h in dict.fromkeys(hops)]


def multi_hop_completeness(ranked: Sequence[str], hops: Sequence[str] | None, k: int) -> float | None:
    if not hops:
        return None
    hits = hop_hits(ranked, hops, k)
    return sum(hits) / len(hits)


def full_chain(ranked: Sequence[str], hops: Sequence[str] | None, k: int) -> float | None:
    if not hops:
        return None
    return 1.0 if all(hop_hits(ranked, hops, k)) else 0.0
