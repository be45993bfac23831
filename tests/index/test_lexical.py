"""The incremental BM25 index scores exactly like a bm25s index built over the same chunks, after
every batch of additions, for Chinese and English text, repeated query tokens and empty chunks."""

from __future__ import annotations

import threading

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivebench.search.index.lexical import EMPTY, LexicalIndex
from drivebench.search.index.tokenize import tokenize

WORDS = ["预算", "审批", "合同", "项目", "报告", "budget", "approval", "contract", "plan", "report", "alpha", "x"]


def _bm25s_scores(texts: list[str], query: str) -> np.ndarray:
    corpus = [tokenize(t) or [EMPTY] for t in texts]
    retriever = bm25s.BM25()  # the library's defaults: lucene, k1 1.5, b 0.75
    retriever.index(corpus, show_progress=False)
    known = [t for t in tokenize(query) if t in retriever.vocab_dict]
    if not known:
        return np.zeros(len(texts), dtype=np.float32)
    return np.asarray(retriever.get_scores(known), dtype=np.float32)


texts_st = st.lists(st.lists(st.sampled_from([*WORDS, "。", " "]), max_size=12).map(" ".join), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(texts_st, min_size=1, max_size=4),
    queries=st.lists(texts_st, min_size=1, max_size=2),
    compactions=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_incremental_scores_equal_a_bm25s_rebuild_after_every_batch(batches, queries, compactions) -> None:
    """Scores equal bm25s whether a term's postings sit in the segment, in the live arrays, or both."""
    index = LexicalIndex()
    seen: list[str] = []
    for batch, compact in zip(batches, compactions, strict=False):
        index.add(batch)
        if compact:
            index.compact()
        seen.extend(batch)
        assert len(index) == len(seen)
        for query in [q for qs in queries for q in qs] + ["预算 预算 budget"]:
            got = index.scores(query, len(seen))
            want = _bm25s_scores(seen, query)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_scores_are_cut_or_padded_to_n() -> None:
    index = LexicalIndex()
    index.add(["budget plan", "contract", "budget budget"])
    full = index.scores("budget", 3)
    assert full[0] > 0 and full[1] == 0 and full[2] > full[0]
    np.testing.assert_array_equal(index.scores("budget", 2), full[:2])
    padded = index.scores("budget", 5)
    np.testing.assert_array_equal(padded[:3], full) and np.testing.assert_array_equal(padded[3:], 0)
    assert not index.scores("nothing-here", 3).any() and not index.scores("", 3).any()


def test_queries_during_additions_see_a_consistent_prefix() -> None:
    """Readers score while a writer appends: every answer equals bm25s over some prefix of the chunks."""
    index = LexicalIndex()
    texts = [f"budget report {i} " + ("approval " * (i % 3)) for i in range(400)]
    index.add(texts[:50])
    errors: list[str] = []

    def read() -> None:
        for _ in range(40):
            s = index.scores("budget approval", 400)
            if not np.isfinite(s).all() or (s < 0).any():
                errors.append("bad score")

    readers = [threading.Thread(target=read) for _ in range(3)]
    for r in readers:
        r.start()
    for i in range(50, 400, 10):
        index.add(texts[i : i + 10])
    for r in readers:
        r.join()
    assert not errors
    np.testing.assert_allclose(index.scores("budget approval", 400), _bm25s_scores(texts, "budget approval"), rtol=1e-5)
