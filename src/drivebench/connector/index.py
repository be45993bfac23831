"""The connector's index: documents with their chunk texts and ACL, BM25 over the chunks. Built whole and
swapped in under a lock, so a query never sees half a sync; withdrawn (nothing to answer from) while the ACLs
it holds can no longer be trusted (the drive's history was replaced), until a full crawl replaces it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from drivebench.extract import ExtractionError, extract
from drivebench.extract.chunking import chunk_extraction
from drivebench.search.index.lexical import LexicalIndex


@dataclass
class DocEntry:
    doc_id: str
    name: str
    path: str
    version_id: str
    modified_at: str
    chunks: list[str]
    acl: frozenset[str] = field(default_factory=frozenset)  # users who may preview it (the drive's answer)


def chunk_texts(data: bytes, name: str) -> list[str]:
    """The document's text in chunks, each headed by its name (so its title finds it)."""
    try:
        chunks = chunk_extraction(extract(data, name))
    except ExtractionError:
        return [name]
    return [f"{name}\n{c.text}" for c in chunks] or [name]


@dataclass(frozen=True)
class Snapshot:
    docs: dict[str, DocEntry]
    owner: np.ndarray  # chunk row -> index into doc_ids
    doc_ids: list[str]
    texts: list[str]
    lexical: LexicalIndex

    @classmethod
    def build(cls, docs: dict[str, DocEntry]) -> Snapshot:
        doc_ids = sorted(docs)
        texts, owner = [], []
        for i, d in enumerate(doc_ids):
            texts += docs[d].chunks
            owner += [i] * len(docs[d].chunks)
        lexical = LexicalIndex()
        lexical.add(texts)
        lexical.compact()
        return cls(dict(docs), np.array(owner, dtype=np.int64), doc_ids, texts, lexical)

    def search(self, query: str, user_id: str, top_k: int) -> list[tuple[DocEntry, float, str]]:
        """The ``top_k`` best documents ``user_id`` may preview per the ACLs synced: best chunk each."""
        allowed_docs = np.array([user_id in self.docs[d].acl for d in self.doc_ids], dtype=bool)
        if not allowed_docs.any() or len(self.owner) == 0:
            return []
        visible = allowed_docs[self.owner]  # the ACL filter before scoring, statistics over what the user may see
        scores = self.lexical.scores(query, len(self.owner), visible)
        rows = np.flatnonzero(visible & (scores > 0))
        order = rows[np.lexsort((rows, -scores[rows]))]
        out: list[tuple[DocEntry, float, str]] = []
        seen: set[int] = set()
        for r in order:
            owner = int(self.owner[r])
            if owner in seen:
                continue
            seen.add(owner)
            out.append((self.docs[self.doc_ids[owner]], float(scores[r]), self.texts[r]))
            if len(out) >= top_k:
                break
        return out


class ConnectorIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None  # nothing to answer from before the first crawl

    @property
    def snapshot(self) -> Snapshot | None:
        """What queries answer from; None before the first crawl and while withdrawn."""
        with self._lock:
            return self._snapshot

    def replace(self, docs: dict[str, DocEntry]) -> None:
        built = Snapshot.build(docs)  # outside the lock: queries keep the old snapshot meanwhile
        with self._lock:
            self._snapshot = built

    def withdraw(self) -> None:
        """Answer nothing from now on, until the next ``replace``: the grants held may have been revoked."""
        with self._lock:
            self._snapshot = None
