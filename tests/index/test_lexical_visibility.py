"""BM25 scores depend only on what the caller may see: the index holding hidden chunks, scored with a
visibility mask, gives bit-for-bit the scores of an index that never held them (and bm25s's scores over
the visible chunks alone). Statistics over every chunk would let a user read hidden documents' words off
the idf of a probe document's score."""

from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivebench.search.index.lexical import EMPTY, LexicalIndex
from drivebench.search.index.tokenize import tokenize

WORDS = ["预算", "审批", "合同", "项目", "budget", "approval", "contract", "plan", "secret", "x"]

chunk_st = st.lists(st.sampled_from([*WORDS, " "]), max_size=10).map(" ".join)
corpus_st = st.lists(st.tuples(chunk_st, st.booleans()), min_size=1, max_size=14)  # (text, visible)


def _index(texts: list[str], compact_after: int | None) -> LexicalIndex:
    index = LexicalIndex()
    if compact_after is None:
        index.add(texts)
        return index
    cut = min(compact_after, len(texts))
    index.add(texts[:cut])
    index.compact()
    index.add(texts[cut:])
    return index


def _bm25s(texts: list[str], query: str) -> np.ndarray:
    retriever = bm25s.BM25()
    retriever.index([tokenize(t) or [EMPTY] for t in texts], show_progress=False)
    known = [t for t in tokenize(query) if t in retriever.vocab_dict]
    return np.asarray(retriever.get_scores(known), dtype=np.float32) if known else np.zeros(len(texts), np.float32)


@settings(max_examples=150, deadline=None)
@given(
    corpus=corpus_st,
    queries=st.lists(chunk_st, min_size=1, max_size=3),
    compact_all=st.one_of(st.none(), st.integers(0, 14)),
    compact_visible=st.one_of(st.none(), st.integers(0, 14)),
)
def test_visible_scores_are_identical_whether_hidden_chunks_exist_or_not(
    corpus, queries, compact_all, compact_visible
) -> None:
    texts = [t for t, _ in corpus]
    visible = np.array([v for _, v in corpus], dtype=bool)
    shown = [t for t, v in corpus if v]
    with_hidden = _index(texts, compact_all)
    without = _index(shown, compact_visible)
    for query in [*queries, "secret secret 预算"]:
        got = with_hidden.scores(query, len(texts), visible)
        assert not got[~visible].any(), "a hidden chunk must score 0"
        if shown:
            alone = without.scores(query, len(shown))
            np.testing.assert_array_equal(got[visible], alone)  # bit-for-bit: not merely close
            np.testing.assert_allclose(alone, _bm25s(shown, query), rtol=1e-5, atol=1e-6)


def test_a_word_held_only_by_a_hidden_chunk_leaves_a_probe_score_unchanged() -> None:
    """The attack: a probe chunk holds a control word and a candidate; the candidate also occurs in a
    hidden chunk. Over every chunk its idf (and so the probe's score) falls; over the visible set it may not."""
    index = LexicalIndex()
    index.add(["alpha budget", "contract plan", "candidate secret", "probecontrol candidate"])
    visible = np.array([True, True, False, True])
    leaky = index.scores("candidate", 4)
    assert leaky[3] < index.scores("probecontrol", 4)[3]  # the side channel the mask closes
    control = index.scores("probecontrol", 4, visible)[3]
    assert index.scores("candidate", 4, visible)[3] == control


def test_the_mask_covers_ids_below_n_only() -> None:
    index = LexicalIndex()
    index.add(["budget", "budget plan", "budget budget"])
    short = index.scores("budget", 3, np.array([True, True]))  # a mask shorter than n: the rest is hidden
    assert short[2] == 0 and short[0] > 0
    np.testing.assert_array_equal(short[:2], index.scores("budget", 3, np.array([True, True, False]))[:2])
    assert not index.scores("budget", 3, np.zeros(3, dtype=bool)).any()
