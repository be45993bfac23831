"""BM25 over chunk texts, incremental (issue #14): adding chunks costs what they contain, never a rebuild.

Scores are bm25s's default scoring (``method="lucene"``, k1 = 1.5, b = 0.75; Kamphuis et al. 2020):

    score(d, q) = sum over query tokens t (repeats count again) of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

over every chunk added so far (N chunks, dead ones included, as bm25s's whole-corpus index did), texts
pre-tokenised with ``tokenize`` (bm25s's own tokenizer does not split Chinese); a chunk without tokens
counts as one placeholder token, as before. bm25s precomputes ``idf * tfc`` per posting, which freezes N
and avgdl: every added chunk would need a rebuild (1.8 s at 10,000 documents). This index keeps the raw
postings instead (per term: chunk ids (int32) and term frequencies (uint16) in append-only arrays that
grow by doubling and are trimmed after a bulk load (``compact``), plus every chunk's length) and applies the formula at query time to the postings of the query's terms
only, with the current N, df and avgdl. So ``add`` is O(tokens added), a query O(postings of its terms),
and the scores equal a bm25s index built over the same chunks (``tests/index/test_lexical.py`` proves it
against bm25s itself).

Reads and writes share one short lock: a query copies references to its terms' arrays and the counts
under it, then scores outside it (entries below a recorded count are never changed: appends go past it
and growth copies into a new array), so queries run in parallel with each other and with ``add``.
"""

from __future__ import annotations

import math
import threading
from collections import Counter

import numpy as np

from drivebench.simulator.index.tokenize import tokenize

K1 = 1.5
B = 0.75
EMPTY = "\u2205"  # the one token of a chunk that has none


TF_MAX = np.iinfo(np.uint16).max  # term frequencies are stored as uint16 (a chunk is bounded by max_chars)


class _Postings:
    __slots__ = ("ids", "n", "tf")

    def __init__(self) -> None:
        self.ids = np.zeros(4, dtype=np.int32)
        self.tf = np.zeros(4, dtype=np.uint16)  # 6 bytes per posting with the id (issue #14: memory per chunk)
        self.n = 0

    def append(self, chunk: int, tf: int) -> None:
        if self.n == len(self.ids):  # grow into new arrays: a reader holding the old ones keeps a valid view
            self.ids = np.concatenate([self.ids, np.zeros(len(self.ids), dtype=np.int32)])
            self.tf = np.concatenate([self.tf, np.zeros(len(self.tf), dtype=np.uint16)])
        self.ids[self.n] = chunk
        self.tf[self.n] = min(tf, TF_MAX)
        self.n += 1


class LexicalIndex:
    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        self._lengths = np.zeros(1024, dtype=np.float32)  # tokens per chunk (grows by doubling)
        self._n = 0
        self._total = 0  # sum of the lengths
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings)

    def add(self, texts: list[str]) -> None:
        """Append chunks (row ``len(self)`` onwards); tokenises outside the lock."""
        counted = []
        for text in texts:
            tokens = tokenize(text) or [EMPTY]
            counted.append((len(tokens), Counter(tokens)))
        with self._lock:
            need = self._n + len(counted)
            if need > len(self._lengths):
                grown = np.zeros(max(need, 2 * len(self._lengths)), dtype=np.float32)
                grown[: self._n] = self._lengths[: self._n]
                self._lengths = grown
            for length, counts in counted:
                row = self._n
                for term, tf in counts.items():
                    postings = self._postings.get(term)
                    if postings is None:
                        postings = self._postings[term] = _Postings()
                    postings.append(row, tf)
                self._lengths[row] = length
                self._total += length
                self._n += 1

    def compact(self) -> None:
        """Drop the spare capacity doubling left behind (up to half of every array) after a bulk load;
        later appends grow again from the exact size. New arrays are swapped in: readers keep valid views."""
        with self._lock:
            for p in self._postings.values():
                if len(p.ids) > p.n:
                    p.ids, p.tf = p.ids[: p.n].copy(), p.tf[: p.n].copy()

    def scores(self, query: str, n: int) -> np.ndarray:
        """BM25 score of every chunk id below ``n`` (0 where no query term occurs)."""
        out = np.zeros(n, dtype=np.float32)
        q = tokenize(query)
        if not q:
            return out
        with self._lock:  # a consistent view: counts and array references only
            count, total, lengths = self._n, self._total, self._lengths
            terms = []
            for term in q:
                p = self._postings.get(term)
                if p is not None and p.n:
                    terms.append((p.ids, p.tf, p.n))
        if not terms or count == 0:
            return out
        norm = np.float32(K1) * (np.float32(1 - B) + np.float32(B) * lengths[:count] / np.float32(total / count))
        for ids, tf, df in terms:  # a repeated query token counts again (bm25s sums per token)
            ids, tf = ids[:df], tf[:df]
            idf = np.float32(math.log(1 + (count - df + 0.5) / (df + 0.5)))
            contrib = idf * (tf / (norm[ids] + tf))
            keep = ids < n
            out[ids[keep]] += contrib[keep]  # ids are unique within one term's postings
        return out
