"""Attack queries built from the forbidden document itself.

For each document: its ``title``; its file ``name`` (stem); its most distinctive sentences by TF-IDF
(terms weighted by how rare they are across the probed documents; jieba for Chinese, word regex
otherwise); its numbers and identifiers (codes such as ``PX-2026-014``, amounts, dates); and, where
an English rendering of the corpus is given (``english``: doc_id -> English title), that title.
The text is what the simulator's own extractors read from the head version's bytes (real parsers).

``queries_for(doc_id, per_doc)`` returns up to ``per_doc`` (kind, text) pairs in a fixed order of
kinds: title, sentence, identifiers, file name, a second sentence, English title.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import PurePosixPath

from drivebench.drive.state import Drive

QUERY_KINDS = ("title", "sentence", "identifiers", "filename", "sentence-2", "english")
_CJK = re.compile(r"[\u3400-\u9fff]")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=\.)\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]+|\d+")
_IDENT = re.compile(r"\b[A-Za-z]{1,8}[-_]\d[\w\-]*\b|\b\d{4}-\d{2}-\d{2}\b|\b\d[\d,]*\.?\d*\b")
MIN_SENTENCE, MAX_SENTENCE = 8, 160


def _tokens(text: str) -> list[str]:
    if _CJK.search(text):
        import jieba

        jieba.setLogLevel(60)
        return [t for t in (w.strip().lower() for w in jieba.lcut(text)) if len(t) > 1 or _CJK.match(t or " ")]
    return [w.lower() for w in _WORD.findall(text) if len(w) > 2]


# the text of each (content address, file name) already extracted in this process: every probe of a corpus (the
# CLI's, each class trial's) builds its queries from the same head versions, and extracting them is most of the cost
_TEXTS: dict[tuple[str, str], str] = {}
_TEXTS_MAX = 20_000


def document_text(drive: Drive, doc_id: str) -> str:
    """The head version's text through the simulator's extractors ('' when it cannot be extracted)."""
    from drivebench.extract.core import extract

    doc = drive.documents[doc_id]
    key = (doc.head.blob, doc.name)  # the blob is the bytes' sha256: the same key is the same text
    if key in _TEXTS:
        return _TEXTS[key]
    try:
        text = extract(drive.blob(doc.head.blob), doc.name).text
    except Exception:
        return ""  # not kept: a blob missing now may be there on the next read
    if len(_TEXTS) >= _TEXTS_MAX:
        _TEXTS.clear()
    _TEXTS[key] = text
    return text


class QueryBuilder:
    def __init__(self, drive: Drive, doc_ids: list[str], english: dict[str, str] | None = None) -> None:
        self.drive = drive
        self.english = english or {}
        self.texts = {d: document_text(drive, d) for d in sorted(set(doc_ids))}
        self.sentences: dict[str, list[tuple[str, list[str]]]] = {}
        df: Counter[str] = Counter()
        for d, text in self.texts.items():
            rows = []
            for s in _SENTENCE_SPLIT.split(text):
                s = " ".join(s.split())
                if MIN_SENTENCE <= len(s) <= MAX_SENTENCE:
                    rows.append((s, _tokens(s)))
            self.sentences[d] = rows
            df.update({t for _, toks in rows for t in toks})
        n = max(1, len(self.texts))
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}

    def distinctive(self, doc_id: str, k: int = 2) -> list[str]:
        rows = self.sentences.get(doc_id, [])
        tf: Counter[str] = Counter(t for _, toks in rows for t in toks)

        def score(row: tuple[str, list[str]]) -> float:
            toks = set(row[1])
            if not toks:
                return 0.0
            return sum(tf[t] * self.idf.get(t, 1.0) for t in toks) / math.sqrt(len(toks))

        seen: set[str] = set()
        out = []
        for s, _ in sorted(rows, key=lambda r: (-score(r), r[0])):
            if s not in seen:
                seen.add(s)
                out.append(s)
            if len(out) == k:
                break
        return out

    def identifiers(self, doc_id: str, k: int = 4) -> str | None:
        found: list[str] = []
        for m in _IDENT.findall(self.texts.get(doc_id, "")):
            if len(m) >= 3 and m not in found:
                found.append(m)
            if len(found) == k:
                break
        return " ".join(found) if found else None

    def queries_for(self, doc_id: str, per_doc: int) -> list[tuple[str, str]]:
        doc = self.drive.documents[doc_id]
        sentences = self.distinctive(doc_id, 2)
        candidates: dict[str, str | None] = {
            "title": doc.title or None,
            "sentence": sentences[0] if sentences else None,
            "identifiers": self.identifiers(doc_id),
            "filename": PurePosixPath(doc.name).stem,
            "sentence-2": sentences[1] if len(sentences) > 1 else None,
            "english": self.english.get(doc_id),
        }
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for kind in QUERY_KINDS:
            text = candidates[kind]
            if text and text.strip() and text not in seen:
                seen.add(text)
                out.append((kind, text.strip()))
            if len(out) == per_doc:
                break
        return out
