"""How much a question echoes its gold documents' titles (``TitleWords``), with the simulator's tokenizer; the
BM25 index over documents' text is ``corpora/common/lexical.py``."""

from __future__ import annotations

import math
from collections import Counter

from drivebench.corpora.common.model import DocPlan
from drivebench.search.index.tokenize import tokenize


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
