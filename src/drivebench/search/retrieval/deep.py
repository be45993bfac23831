"""The ``deep`` pipeline: bridge-entity follow-up queries, merged with a per-hop quota; LLM-free.

Follows GoldEn Retriever (Qi, Lin, Mehr, Wang and Manning, 2019, "Answering Complex Open-domain Questions
Through Iterative Query Generation", EMNLP): each hop issues a new query built from what the previous hop
retrieved, so a document that shares no words with the question (the second link of a chain) is reached
through the entity that links it to the first. GoldEn learns its query generator; here the follow-up
queries are the **codes** (project, part, model, contract, inspection numbers: ``CODE``) that the top
passages of the previous round contain and that no earlier query contained, as in bridge-entity
expansion. Results are merged with a **per-hop quota** as Baleen does (Khattab, Potts and Zaharia, 2021,
"Baleen: Robust Multi-Hop Reasoning at Scale via Condensed Retrieval", NeurIPS): each later round is
guaranteed ``floor(QUOTA[i] * top_k)`` of the ``top_k`` slots, so a chain's later links are not crowded out by the
question's many near-matches.

Rounds (at most ``ROUNDS``, default 3):

1. the hybrid pipeline on the question (``Retriever.hybrid``, the default ranking), fused by RRF with a
   BM25 search for each code the question itself contains (weight ``W_OWN_CODES``): the chain's first link
   is the document that code names, which the whole question's ranking often puts below its near-matches;
2. the codes of the best ``SEEDS`` documents' allowed chunks (the shown chunk first, then the document's
   other allowed chunks in order) not seen in any earlier query; each is searched alone with BM25
   (``Retriever.bm25``, codes are exact strings) and kept when it reaches a document outside the seeds (a
   document's own number leads nowhere); the rarest ``MAX_CODES`` (fewest documents: a specific link) are
   the round's queries, the round's ranking the RRF of their rankings;
3. the same from round 2's best documents.

The knobs (``SEEDS``, ``MAX_CODES``, ``QUOTA``, ``W_OWN_CODES``) are chosen on one generated set, by the mean
completeness over 2, 3 and 4 hops with Hit@10 not below hybrid's (``benchmarks/bench_levers.py``). First chosen
on acme-zh@3 (``SEEDS`` 4, ``QUOTA`` 0.4/0.2), they reached a 2-hop full chain in 0.844 of acme-zh@3's chains but
0.438 of acme-en@3's: an English question's project code is in many documents (kickoff decks, weekly reports,
minutes), so the charter that links onward ranks below them, the fourth seed brings other projects' codes and
round 3 takes slots a 2-hop chain's second link needs. Re-chosen on acme-en@3 at seed 11 (a build no check
uses) over ``SEEDS`` 3/4/6/8, ``MAX_CODES`` 3/4/6 and quotas 0.4/0.2, 0.5/0.1, 0.6/0 and 2 rounds: ``SEEDS`` 3,
``QUOTA`` 0.5/0.1 (mean completeness 0.629 against 0.546); acme-en@3, acme-zh@3 and acme-zh@3 at seed 11 and
scale 600 are the held-out checks.

Merge: round 1's first ``top_k - sum(quotas)`` documents (quotas ``floor(QUOTA[i] * top_k)``), then each later round's best documents not yet
taken (up to its quota), then the rest of round 1, then the rest of the later rounds, until ``top_k``.

Security: every round searches with the caller's mask, and the codes come only from chunks whose mask bit
is set, so a follow-up query is never built from text the principal may not see (a hidden document's code
can neither become a query nor change which documents are returned). Never under-filled: round 1 alone is
hybrid's full ranking. The cost of each round (queries issued, time) is counted in ``Deep.costs``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from drivebench.search.index.chunk_store import fit_mask
from drivebench.search.retrieval.pipelines import DocHit, rrf

if TYPE_CHECKING:
    from drivebench.search.retrieval.pipelines import Retriever

# an identifier: upper-case letters then dash-separated groups (PRJ-2026-011, GW-3105-01, PO-2026-106, IQC-2026-236)
CODE = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]*[0-9][A-Z0-9]*){1,3}(?![A-Za-z0-9-])")
ROUNDS = 3
SEEDS = 3  # documents of a round whose codes become the next round's queries
MAX_CODES = 4  # follow-up queries per round
MAX_CANDIDATES = 32  # codes tried per round (each one BM25 search): bounds a round's cost on code-dense documents
QUOTA = (0.5, 0.1)  # shares of top_k guaranteed to rounds 2 and 3 (rounded down: 5 and 1 of 10)
# round 1: weight of the question's own codes searched alone (acme-zh@3: 0.5 and 0 reach fewer links)
W_OWN_CODES = 1.0


# a reordering of round 1's ranking (the reranker's: ``rerank.RerankingRetriever``)
Reorder = Callable[[list[DocHit]], list[DocHit]]


def codes_in(text: str) -> list[str]:
    """The codes of ``text`` in order of first occurrence, without repeats."""
    return list(dict.fromkeys(CODE.findall(text)))


@dataclass
class RoundCost:
    calls: int = 0  # searches that reached this round
    queries: int = 0  # follow-up queries issued in it (round 1: the question)
    seconds: float = 0.0


class Deep:
    def __init__(self, retriever: Retriever, rounds: int = ROUNDS, quota: tuple[float, ...] = QUOTA) -> None:
        if rounds < 1 or len(quota) < rounds - 1 or any(q < 0 for q in quota) or sum(quota[: rounds - 1]) > 1:
            raise ValueError("deep: rounds >= 1 and one quota share per round after the first, summing to at most 1")
        self.retriever, self.rounds, self.quota = retriever, rounds, quota[: rounds - 1]
        self.costs = [RoundCost() for _ in range(rounds)]
        self._lock = threading.Lock()

    def _count(self, i: int, queries: int, seconds: float) -> None:
        with self._lock:
            c = self.costs[i]
            c.calls, c.queries, c.seconds = c.calls + 1, c.queries + queries, c.seconds + seconds

    def allowed_text(self, hit: DocHit, allowed: np.ndarray) -> list[str]:
        """The texts of ``hit``'s document version that the mask allows: its shown chunk, then the others."""
        store = self.retriever.store
        ids = [hit.chunk_id] + [
            c for c in store.by_version.get(store.version_ids[hit.chunk_id], ()) if c != hit.chunk_id
        ]
        return [store.texts[c] for c in ids if c < len(allowed) and allowed[c]]

    def follow_ups(
        self, ranking: list[DocHit], allowed: np.ndarray, seen: set[str], mask: np.ndarray, depth: int
    ) -> list[tuple[str, list[DocHit]]]:
        """The next round's queries with their BM25 rankings: the codes of the best ``SEEDS`` documents'
        allowed text (the first ``MAX_CANDIDATES``), not seen before, that lead somewhere (a code found only in the document it came from
        reaches nothing new), the rarest first (a code in few documents names a specific link), at most
        ``MAX_CODES``."""
        seeds = {h.doc_id for h in ranking[:SEEDS]}
        budget = len(seen) + MAX_CANDIDATES
        found: list[tuple[int, int, str, list[DocHit]]] = []
        for hit in ranking[:SEEDS]:
            for text in self.allowed_text(hit, allowed):
                for code in codes_in(text):
                    if code.lower() in seen:
                        continue
                    if len(seen) >= budget:
                        return [(code, docs) for _, _, code, docs in sorted(found)[:MAX_CODES]]
                    seen.add(code.lower())
                    docs = self.retriever.bm25(code, mask, depth)
                    if any(h.doc_id not in seeds for h in docs):
                        found.append((len(docs), len(found), code, docs))
        return [(code, docs) for _, _, code, docs in sorted(found)[:MAX_CODES]]

    def plan(
        self,
        query: str,
        mask: np.ndarray,
        top_k: int,
        retriever: Retriever | None = None,
        first_round: Reorder | None = None,
    ) -> list[tuple[list[str], list[DocHit]]]:
        """Every round's queries and document ranking (round 1: the question and hybrid's ranking, reordered by
        ``first_round`` when given, before it seeds round 2). ``retriever``: this call's copy of the retriever
        (the reranker's, whose query vector is already on its way); default the one this lever was made with."""
        r = retriever or self.retriever
        depth = r.fusion.depth_for(top_k)
        alive = r.store.alive
        allowed = fit_mask(mask, len(alive)) & alive
        started = time.perf_counter()
        ranking = r.hybrid(query, mask, depth)
        own = codes_in(query)
        if own and W_OWN_CODES > 0:  # the question's own codes searched alone too: the first link names them
            ranking = rrf([(ranking, 1.0)] + [(r.bm25(c, mask, depth), W_OWN_CODES) for c in own], depth)
        if first_round is not None:
            ranking = first_round(ranking)
        self._count(0, 1 + len(own), time.perf_counter() - started)
        rounds = [([query, *own], ranking)]
        seen = {c.lower() for c in own}
        for i in range(1, self.rounds):
            started = time.perf_counter()
            follow = self.follow_ups(ranking, allowed, seen, mask, depth)
            if not follow:
                break
            queries = [code for code, _ in follow]
            ranking = rrf([(docs, 1.0) for _, docs in follow], depth)
            self._count(i, len(queries), time.perf_counter() - started)
            rounds.append((queries, ranking))
        return rounds

    def search(
        self,
        query: str,
        mask: np.ndarray,
        top_k: int,
        retriever: Retriever | None = None,
        first_round: Reorder | None = None,
    ) -> list[DocHit]:
        rounds = [ranking for _, ranking in self.plan(query, mask, top_k, retriever, first_round)]
        quotas = [int(share * top_k) for share in self.quota[: len(rounds) - 1]]
        out: dict[str, DocHit] = {}

        def take(ranking: list[DocHit], n: int) -> None:
            for hit in ranking:
                if n <= 0 or len(out) >= top_k:
                    return
                if hit.doc_id not in out:
                    out[hit.doc_id] = hit
                    n -= 1

        take(rounds[0], max(0, top_k - sum(quotas)))
        for ranking, q in zip(rounds[1:], quotas, strict=True):
            take(ranking, q)
        for ranking in rounds:
            take(ranking, top_k)
        # scores: a decreasing rank score (rounds' scores are not comparable)
        return [DocHit(h.doc_id, h.chunk_id, round(1.0 / (1 + i), 6)) for i, h in enumerate(out.values())]

    def cost_summary(self) -> list[dict[str, float]]:
        """Per round: searches that reached it, follow-up queries per search, milliseconds per search."""
        with self._lock:
            return [
                {
                    "round": i + 1,
                    "calls": c.calls,
                    "queries_per_call": round(c.queries / c.calls, 3) if c.calls else 0.0,
                    "ms_per_call": round(1000 * c.seconds / c.calls, 3) if c.calls else 0.0,
                }
                for i, c in enumerate(self.costs)
            ]
