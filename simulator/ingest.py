"""Ingestion: extract each document version's text per file type, chunk it, embed it, index it.

Files that cannot be extracted (hostile, corrupt, mislabelled) are rejected with the extractor's
reason code and recorded; the rest of the corpus ingests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from drivebench.simulator.drive.model import DocumentRec, VersionRec
from drivebench.simulator.drive.state import Drive
from drivebench.simulator.extract import ExtractConfig, ExtractionError, extract
from drivebench.simulator.extract.chunking import chunk_extraction
from drivebench.simulator.index.chunk_store import ChunkStore
from drivebench.simulator.index.embedders import Embedder
from drivebench.simulator.index.embedding_cache import EmbeddingCache
from drivebench.simulator.index.extraction_cache import ExtractionCache


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
            [(t, p) for t, p in cached["chunks"]]  # type: ignore[union-attr]
            if "chunks" in cached
            else Rejection(doc.doc_id, version.version_id, *cached["rejected"])  # type: ignore[misc]
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


def ingest(
    drive: Drive,
    items: Iterable[tuple[DocumentRec, VersionRec]],
    store: ChunkStore,
    embedder: Embedder,
    cache: EmbeddingCache,
    extract_config: ExtractConfig,
    chunking: ChunkingConfig = ChunkingConfig(),
    progress: Callable[[int], None] | None = None,
    batch_versions: int = 64,
    extraction_cache: ExtractionCache | None = None,
) -> IngestReport:
    report = IngestReport()
    items = list(items)
    for start in range(0, len(items), batch_versions):
        prepared: list[Prepared] = []
        for doc, version in items[start : start + batch_versions]:
            result = prepare(drive, doc, version, extract_config, chunking, extraction_cache)
            if isinstance(result, Rejection):
                report.rejected.append(result)
            else:
                prepared.append(result)
        texts = [t for p in prepared for t, _ in p.chunks]
        vectors = cache.encode(embedder, texts)
        offset = 0
        for p in prepared:
            n = len(p.chunks)
            store.add(p.doc.doc_id, p.version.version_id, p.chunks, vectors[offset : offset + n])
            offset += n
            report.versions += 1
            report.chunks += n
        if progress is not None:
            progress(len(items[start : start + batch_versions]))
    return report
