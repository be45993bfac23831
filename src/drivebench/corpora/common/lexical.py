"""BM25 over documents' text as a generator knows it (every string of the head version's spec), with the
simulator's tokenizer unless told otherwise: acme@2 and acme@3 use it to reject chains a question alone
identifies and to pick permission questions whose best lexical match is the forbidden document."""

from __future__ import annotations

from collections.abc import Callable

import bm25s
import numpy as np

from drivebench.corpora.common.model import DocPlan
from drivebench.search.index.tokenize import tokenize


class TextIndex:
    """BM25 over every live document's name and head text, tokenised by ``tokenizer`` (the simulator's by
    default); statistics over all of them, whatever ``top`` is restricted to."""

    def __init__(self, docs: list[DocPlan], tokenizer: Callable[[str], list[str]] = tokenize) -> None:
        self.docs = [d for d in docs if d.trashed_at is None]
        self.tokenize = tokenizer
        texts = [f"{d.name}\n{d.versions[-1].spec.plain_text()}" for d in self.docs]
        self.bm25 = bm25s.BM25()
        self.bm25.index([tokenizer(t) or ["\u2205"] for t in texts], show_progress=False)

    def top(self, query: str, k: int, allowed: set[str] | None = None) -> list[DocPlan]:
        """The ``k`` best documents for ``query`` (among the doc ids in ``allowed`` when given)."""
        known = [t for t in self.tokenize(query) if t in self.bm25.vocab_dict]
        if not known:
            return []
        scores = np.asarray(self.bm25.get_scores(known))
        order = sorted(
            (i for i in range(len(self.docs)) if scores[i] > 0 and (allowed is None or self.docs[i].doc_id in allowed)),
            key=lambda i: (-scores[i], i),
        )
        return [self.docs[i] for i in order[:k]]
