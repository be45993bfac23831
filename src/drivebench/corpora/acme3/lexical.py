"""An independent lexical check: jieba words and bm25s over every live document's head text, the whole drive
(no permission filter, not the simulator's tokenizer). The generator rejects chains whose later hop this
finds from the question alone, and keeps permission questions only where it ranks the forbidden document
near the top."""

from __future__ import annotations

import re
from collections.abc import Callable

import bm25s
import jieba
import numpy as np

from drivebench.corpora.generator.model import DocPlan

_WORD = re.compile(r"\w")
jieba.setLogLevel(60)


def words(text: str) -> list[str]:
    """jieba's search-mode words, lower-cased, without spaces and punctuation."""
    return [t.lower() for t in jieba.lcut_for_search(text) if _WORD.search(t)]


class WholeDriveBM25:
    """BM25 over every live document's head text; ``tokenizer`` defaults to ``words`` (jieba search mode)."""

    def __init__(self, docs: list[DocPlan], tokenizer: Callable[[str], list[str]] = words) -> None:
        self.docs = [d for d in docs if d.trashed_at is None]
        self.tokenize = tokenizer
        self.bm25 = bm25s.BM25()
        texts = [f"{d.name}\n{d.versions[-1].spec.plain_text()}" for d in self.docs]
        self.bm25.index([tokenizer(t) or ["\u2205"] for t in texts], show_progress=False)

    def top(self, query: str, k: int, allowed: set[str] | None = None) -> list[DocPlan]:
        """The ``k`` best documents (among ``allowed`` doc ids when given; statistics stay the whole drive's)."""
        known = [t for t in self.tokenize(query) if t in self.bm25.vocab_dict]
        if not known:
            return []
        scores = np.asarray(self.bm25.get_scores(known))
        order = sorted(
            (i for i in range(len(self.docs)) if scores[i] > 0 and (allowed is None or self.docs[i].doc_id in allowed)),
            key=lambda i: (-scores[i], i),
        )
        return [self.docs[i] for i in order[:k]]
