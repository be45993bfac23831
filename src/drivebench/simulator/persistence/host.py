"""The view of the simulator persistence is written against (``SimulatorState``): what a data directory saves,
replays and swaps (the drive and its policies, the index and its cursor, the configuration, the caches) and the
few operations it calls. A ``Simulator`` is one; persistence never imports the simulator that holds it, so the
two do not import each other (``scripts/import_cycles.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from drivebench.drive.permissions.pointintime import PolicyEngines
    from drivebench.drive.state import Drive
    from drivebench.drive.tokens import TokenRegistry
    from drivebench.search.index.chunk_store import ChunkStore
    from drivebench.search.index.embedders import Embedder
    from drivebench.search.index.embedding_cache import EmbeddingCache
    from drivebench.search.ingest import IngestReport
    from drivebench.search.retrieval.pipelines import Retriever
    from drivebench.search.retrieval.rerank import RerankingRetriever
    from drivebench.simulator.config import SimConfig
    from drivebench.simulator.faults import FaultSet
    from drivebench.simulator.snapshot import SnapshotFingerprint


class SimulatorState(Protocol):
    config: SimConfig
    embedder: Embedder
    cache: EmbeddingCache
    faults: FaultSet
    policies: PolicyEngines
    tokens: TokenRegistry
    token_secret: bytes | None
    store: ChunkStore
    retriever: Retriever | RerankingRetriever
    ingest_report: IngestReport
    fingerprint: SnapshotFingerprint
    corpus_dir: Path | None
    durable: Any
    shared_rows_behind: str | None
    index_version: int
    _index_cursor: int
    _index_lock: threading.Lock
    _masks_for: Any

    @property
    def drive(self) -> Drive: ...

    @property
    def reranker(self) -> str | None: ...

    def use_token_secret(self, secret: bytes | None) -> None: ...

    def ingest_all(self, progress: Callable[[int], None] | None = None) -> IngestReport: ...

    def sync_index(self) -> IngestReport | None: ...

    def write_shared_rows(self) -> bool: ...

    def make_retriever(self, pipeline: str, rerank: str | None) -> Retriever | RerankingRetriever: ...

    def snapshot(self) -> str: ...

    def fusion_record(self) -> dict[str, Any] | None: ...

    def fresh(self, drive: Drive) -> SimulatorState:
        """A new simulator on ``drive`` with this one's configuration, embedder, embedding cache, faults and
        token secret, its index built: what a reset or a seed swaps in."""
        ...
