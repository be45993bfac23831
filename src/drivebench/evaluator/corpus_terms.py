"""The terms of a corpus's documents, to say which documents a query *matches* without a retriever of our own.

A document matches a query at time ``t`` when the version current at ``t`` shares at least one **distinctive**
term with the query. Terms are ``formats.tokens.tokenize``'s (jieba words for Chinese runs, lower-cased words for
the rest: the terms the simulator's BM25 matches on) of the NFKC-normalised text; a document's terms come from its
title, its file name and the text ``extract`` gets from the version's file (the parts every chunk of the
simulator's index carries), so a document that matches here scores above 0 in the simulator's BM25 and a clean
simulator never returns fewer than ``top_k`` when ``top_k`` permitted documents match. A query term is
distinctive when it

* has at least ``MIN_TERM_CHARS`` characters (a single Han character or letter, 的 or ``a``, says nothing),
* is not an English function word (``STOPWORDS``: a lexical target may drop them),
* occurs in at most ``MAX_DOCUMENT_SHARE`` of the corpus's documents (a term half the corpus carries, ``项目`` or
  ``report``, matches whatever the question is about).

Limits: a lexical match is a floor, not a relevance judgement: a dense retriever finds documents that share no
term (so it may rightly return a full list where this counts few matches: never an under-fill), and a target
whose extraction sees less (a CAD-blind ``dxf=filename-only`` pipeline, say) cannot match terms it never indexed.
A file ``extract`` refuses contributes its title and name only, as in the simulator's index.

The texts are extracted lazily, once per version, on the first question (a few seconds on acme@3's 494 versions),
and once per process: every later oracle of the same corpus reuses the terms (``_file_terms``).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

from drivebench.drive.clock import as_utc
from drivebench.extract import ExtractionError, extract
from drivebench.formats.corpus import Manifest, load_manifest
from drivebench.formats.tokens import tokenize

MIN_TERM_CHARS = 2
MAX_DOCUMENT_SHARE = 0.5
STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be by can did do does for from has have how in is it its of on or our the their there "  # noqa: SIM905
    "these this those to was were what when where which who whom whose why will with you your".split()
)


def terms(text: str) -> frozenset[str]:
    """The terms of ``text`` (NFKC-normalised, tokenised, lower-cased)."""
    return frozenset(tokenize(unicodedata.normalize("NFKC", text)))


@dataclass(frozen=True)
class _Version:
    created_at: datetime
    file: Path


@dataclass(frozen=True)
class _Document:
    header: str  # title and file name: every chunk of the simulator's index carries them
    name: str
    versions: tuple[_Version, ...]  # oldest first


# Every oracle of a corpus (one per evaluate, per experiment run, per probe) reads the same files, and extracting
# them is nearly all its cost (seconds on acme@3): the terms of a file are kept for the process, by the file's path,
# size and modification time (a corpus directory is written once; a rewritten file has another mtime).
_FILE_TERMS: dict[tuple[str, int, int, str, str], frozenset[str]] = {}
_FILE_TERMS_MAX = 50_000  # versions; ~100 MB of terms at most, and no corpus comes near it


def _file_terms(file: Path, name: str, header: str) -> frozenset[str]:
    """The terms of ``header`` and of the text ``extract`` gets from ``file`` (named ``name``)."""
    try:
        stat = file.stat()
    except OSError:  # indexed by its title and name only, as the simulator does
        return terms(f"{header}\n")
    key = (str(file), stat.st_size, stat.st_mtime_ns, name, header)
    known = _FILE_TERMS.get(key)
    if known is not None:
        return known
    try:
        text = extract(file.read_bytes(), name).text
    except (OSError, ExtractionError):  # indexed by its title and name only, as the simulator does
        text = ""
    found = terms(f"{header}\n{text}")
    if len(_FILE_TERMS) >= _FILE_TERMS_MAX:
        _FILE_TERMS.clear()
    _FILE_TERMS[key] = found
    return found


class CorpusTerms:
    """The terms of every document version of the corpus in ``corpus_dir`` (read lazily)."""

    def __init__(self, corpus_dir: Path, manifest: Manifest | None = None) -> None:
        self.corpus_dir = Path(corpus_dir)
        self._manifest = manifest
        self._version_terms: dict[Path, frozenset[str]] = {}

    @cached_property
    def _documents(self) -> dict[str, _Document]:
        manifest = self._manifest if self._manifest is not None else load_manifest(self.corpus_dir)
        return {
            d.doc_id: _Document(
                f"{d.title or d.name} {d.name}",
                d.name,
                tuple(
                    _Version(as_utc(v.created_at), self.corpus_dir / v.file)
                    for v in sorted(d.versions, key=lambda v: v.version)
                ),
            )
            for d in manifest.documents
        }

    def _terms_of(self, doc: _Document, version: _Version) -> frozenset[str]:
        if version.file not in self._version_terms:
            self._version_terms[version.file] = _file_terms(version.file, doc.name, doc.header)
        return self._version_terms[version.file]

    def document_terms(self, doc_id: str, at: datetime) -> frozenset[str]:
        """The terms of ``doc_id``'s version current at ``at`` (empty for an unknown document or before its first
        version)."""
        doc = self._documents.get(doc_id)
        if doc is None:
            return frozenset()
        current = [v for v in doc.versions if v.created_at <= as_utc(at)]
        return self._terms_of(doc, current[-1]) if current else frozenset()

    @cached_property
    def _document_frequency(self) -> tuple[Counter[str], int]:
        """Per term, how many documents carry it in any version; and how many documents there are."""
        df: Counter[str] = Counter()
        for doc in self._documents.values():
            df.update(frozenset().union(*(self._terms_of(doc, v) for v in doc.versions)))
        return df, len(self._documents)

    def distinctive(self, query: str) -> frozenset[str]:
        """The query's distinctive terms (see the module)."""
        df, n = self._document_frequency
        return frozenset(
            t
            for t in terms(query)
            if len(t) >= MIN_TERM_CHARS and t not in STOPWORDS and df[t] <= MAX_DOCUMENT_SHARE * n
        )

    def count_matching(self, query: str, doc_ids: Iterable[str], at: datetime, enough: int | None = None) -> int:
        """How many of ``doc_ids`` match ``query`` at ``at``; stops counting at ``enough``."""
        wanted = self.distinctive(query)
        if not wanted:
            return 0
        found = 0
        for doc_id in doc_ids:
            if not wanted.isdisjoint(self.document_terms(doc_id, at)):
                found += 1
                if enough is not None and found >= enough:
                    break
        return found
