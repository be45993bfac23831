"""BM25 over documents' text as the generator knows it (every string of the head version's spec), with the
simulator's tokenizer: used to reject chains a question alone identifies and to pick permission questions
whose best lexical match is the forbidden document."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import bm25s
import numpy as np

from drivebench.corpora.generator.model import DocPlan
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


class TitleWords:
    """How much a question echoes the titles of its gold documents: the summed IDF (over every document's
    title and file name) of the question's words that are also words of a gold document's title or file
    name, the highest over the gold documents. 0 when it shares no word with any of them."""

    def __init__(self, docs: list[DocPlan]) -> None:
        self.words = {id(d): set(tokenize(f"{d.title} {d.name}")) for d in docs}
        df: Counter[str] = Counter(w for ws in self.words.values() for w in ws)
        n = max(1, len(docs))
        self.idf = {w: math.log(1 + n / c) for w, c in df.items()}

    def echo(self, text: str, gold: list[DocPlan]) -> float:
        asked = set(tokenize(text))
        return max((sum(self.idf[w] for w in asked & self.words.get(id(d), set())) for d in gold), default=0.0)
