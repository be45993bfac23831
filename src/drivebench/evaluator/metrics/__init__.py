"""Retrieval, permission, version, citation and multi-hop metrics: one metric per module.

Every module is a set of pure functions over plain data (lists of doc ids, dicts of grades), with
a scalar reference form (one query) and, where the orchestrator needs speed, a vectorised form
over a ``(queries, depth)`` matrix. Each module docstring gives the formula, the edge cases and
the reference implementation it equals.

==========================  =========================================================
module                      metric(s)
==========================  =========================================================
``hit_rate``                hit_rate@K (= trec_eval success.K)
``recall``                  recall@K (= trec_eval recall.K)
``mrr``                     mrr@K (= trec_eval recip_rank when K ≥ list length)
``ndcg``                    ndcg@K, binary or graded (= trec_eval ndcg_cut.K)
``leak_rate``               leak_rate@K, leaked documents, ``oracle_from_evalset``
``hit_rate_permitted``      hit_rate_permitted@K (refusals included)
``over_restriction``        permitted gold documents withheld from short lists
``under_fill``              under_fill_rate: lists shorter than the matching documents the asker may see
``version_exact``           version_exact_hit_rate@K
``stale_version``           stale_version_hit_rate@K
``trashed``                 trashed_hit_rate@K
``source_coverage``         source_coverage (micro) and source_coverage_macro
``citation_precision``      citation_precision
``citation_diagnosis``      retrieved_cited / retrieved_not_cited / cited_not_retrieved / neither
``answer_fact_recall``      answer_fact_recall and claim_support (``answer_facts`` matched, no LLM)
``answer_leak``             answer_leak_rate: facts of documents the asker may not preview stated in answers
``answer_outcome``          answer_outcomes: correct / missing / abstained / wrong_value / superseded / leak per answer
``leak_bound``              exact one-sided upper bound of a leak proportion; probe size for a budget
``multi_hop``               multi_hop_completeness, full_chain_rate, hop position hit rate
``latency``                 latency_ms_p50 / p95 / p99
==========================  =========================================================

Conventions shared by all of them (implemented in ``_common`` and ``_run``, tested in
``tests/evaluator/test_eval_conventions.py``):

1. **rank = order returned**; ties in score are never re-sorted (trec_eval would re-sort by doc id;
   cross-checks against pytrec_eval use distinct scores).
2. **Several results for one document count once, at their first (best) rank**; later copies keep
   their slots but score nothing (recall ≤ 1, DCG ≤ IDCG).
3. **Errored or timed-out queries are misses** (score 0; results on an errored record are ignored)
   and are counted in ``counts.errors`` / ``counts.timeouts``.
4. **Every eval-set query is in the denominator**: a query missing from the run scores 0 and is
   counted in ``counts.missing_from_run``; run records for unknown queries are ignored and counted.
5. **Queries with no gold are excluded from gold-based metrics** (hit rate, recall, MRR, nDCG,
   version and citation metrics) and counted in ``counts.no_gold``. Leak and trash rates do not
   need gold and keep every query; ``hit_rate_permitted`` keeps no-gold queries that list
   ``forbidden`` docs (refusals).
6. **Fewer results than K** = padding with non-relevant results; nDCG's ideal comes from the judged
   gold, never from the retrieved list.
7. **A metric that cannot be computed is ``None``**, never 0: leaks without an oracle, citations
   without any answer, version metrics without pinned gold, trash without a catalog, answer facts
   without ``answer_facts`` in the eval set or without answers, answer leaks without the corpus's facts.
"""
