"""The simulator's in-memory backend: one drive, its permission engine, its index, its tokens.

Like moto's backends this is plain Python; the FastAPI app and the pytest fixture are two front
doors onto the same object.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from drivebench.corpora.vectors import PACK_DIR
from drivebench.drive.clock import to_us
from drivebench.drive.errors import IndexUnavailable
from drivebench.drive.model import DocumentRec, VersionRec
from drivebench.drive.permissions import PermissionEngine, Principal, pointintime
from drivebench.drive.permissions.pointintime import PolicyEngines
from drivebench.drive.state import Drive
from drivebench.drive.tokens import TokenInfo, TokenRegistry
from drivebench.search.index import vector_store
from drivebench.search.index.chunk_store import ChunkStore, visible_mask
from drivebench.search.index.embedders import Embedder, get_embedder
from drivebench.search.index.embedding_cache import EmbeddingCache, default_cache_dir
from drivebench.search.index.extraction_cache import ExtractionCache
from drivebench.search.index.vector_packs import VectorPacks, default_pack_dirs
from drivebench.search.ingest import IngestReport, ingest
from drivebench.search.retrieval.pipelines import Retriever
from drivebench.search.retrieval.rerank import RerankingRetriever, with_rerank
from drivebench.simulator import recall
from drivebench.simulator.answer.levers import levers_of
from drivebench.simulator.config import SimConfig
from drivebench.simulator.faults import FaultSet
from drivebench.simulator.recall import RecallOutcome, RecallQuery
from drivebench.simulator.snapshot import SnapshotFingerprint
from drivebench.simulator.visibility import ChunkArrays

log = logging.getLogger("drivebench.simulator")


def release_free_memory() -> None:
    """Hand memory freed by a bulk load back to the system (glibc ``malloc_trim``; elsewhere a no-op): the
    heap keeps the load's transient buffers resident otherwise."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class Simulator:
    def __init__(
        self,
        drive: Drive,
        config: SimConfig | None = None,
        embedder: Embedder | None = None,
        *,
        faults: FaultSet | None = None,
    ) -> None:
        levers_of(config or SimConfig())  # a bad answer lever is refused at start, before anything is built
        self.faults = faults if faults is not None else FaultSet(owner=self)  # fault profiles; empty = clean
        self.policies = PolicyEngines(drive, self.faults)  # the drive and its permission engines (now and as of)
        self.config = config or SimConfig()
        self.embedder = embedder or get_embedder(self.config.embedder)
        cache_path = (self.config.cache_dir or default_cache_dir()) / "embeddings.sqlite3"
        # packaged vectors (index.vector_packs) count as a cache: off with use_cache=False, like the cache
        packs = VectorPacks(default_pack_dirs([PACK_DIR])) if self.config.use_cache else None
        self.cache = EmbeddingCache(cache_path if self.config.use_cache else None, packs)
        extraction_path = (self.config.cache_dir or default_cache_dir()) / "extractions.sqlite3"
        self.extraction_cache = ExtractionCache(extraction_path if self.config.use_cache else None)
        self.store = ChunkStore(self.embedder.dim, self.config.index)
        # a Milvus backend mirrors the store's adds and removals (no-op for faiss)
        vector_store.attach(self.store, self.config.vector_store, self.config.vector_store_dir)
        self.retriever = self.make_retriever(self.config.pipeline, self.config.rerank)
        self._other_retrievers: dict[
            str, Retriever | RerankingRetriever
        ] = {}  # recall(pipeline=...): the console's playground
        self.token_secret: bytes | None = None  # None: DRIVEBENCH_TOKEN_SECRET, else the development secret
        self.tokens = TokenRegistry(drive)
        drive.id_key = self.tokens.derive_key("drive-ids")  # uploads' and grants' ids: see Drive.keyed_id
        self.ingest_report = IngestReport()
        self._masks_for: ChunkArrays | None = None  # per-chunk arrays of the visibility mask
        self.audit: list[dict[str, object]] = []
        self.fingerprint = SnapshotFingerprint()  # what ``snapshot`` reports, kept incrementally
        self.corpus_dir: Path | None = None
        self._index_cursor = 0
        self._index_lock = threading.Lock()
        self.index_version = 0
        self.durable: Any = None  # persistence.Durability when served with --data-dir
        self.shared_rows_behind: str | None = None  # why the Milvus rows lag the drive (``write_shared_rows``)
        self._rows_lock = threading.Lock()

    @property
    def drive(self) -> Drive:
        """The drive (its policies' drive: a reset or seed swaps both at once)."""
        return self.policies.drive

    def use_token_secret(self, secret: bytes | None) -> None:
        """Derive every token from ``secret`` from now on (kept across reset and seed)."""
        self.token_secret = secret
        self.tokens = TokenRegistry(self.drive, secret)
        self.drive.id_key = self.tokens.derive_key("drive-ids")

    @classmethod
    def from_corpus(cls, corpus_dir: Path, config: SimConfig | None = None, **kw: Any) -> Simulator:
        sim = cls(Drive.from_corpus(corpus_dir), config, **kw)
        sim.corpus_dir = Path(corpus_dir)
        sim.ingest_all()
        return sim

    def fresh(self, drive: Drive) -> Simulator:
        """A new simulator on ``drive`` with this one's configuration, embedder, embedding cache, faults and
        token secret, its index built: what a reset or a seed swaps in (``lifecycle.load_corpus``)."""
        # fault profiles are their own subsystem (/_sim/faults): kept
        fresh = type(self)(drive, self.config, embedder=self.embedder, faults=self.faults)
        fresh.use_token_secret(self.token_secret)  # tokens follow the corpus name, never the secret
        fresh.cache = self.cache
        fresh.ingest_all()
        return fresh

    # ------------------------------------------------------------------ ingestion
    def ingest_all(self, progress: Callable[[int], None] | None = None) -> IngestReport:
        items = [(d, v) for d in self.drive.documents.values() for v in d.versions]
        report = ingest(
            self.drive,
            items,
            self.store,
            self.embedder,
            self.cache,
            self.faults.extract_config(self.config.extract),  # FAULT cad-blind: dxf filename-only
            self.config.chunking,
            progress,
            # big groups: the model sorts each encode call's texts by length, so large calls pad far less
            # (acme-zh: 64-version groups ran at 0.63x raw model.encode, 512-version groups at ~0.85x)
            batch_versions=512,
            extraction_cache=self.extraction_cache,
        )
        for r in report.rejected:
            log.warning("rejected %s %s: %s (%s)", r.doc_id, r.version_id, r.reason, r.message)
        self.store.compact()  # a bulk load: no spare capacity left in the postings or the flat index
        if self.cache.packs is not None:
            self.cache.packs.release()  # the packs' vectors are in the index now: ~5 MB not kept twice
        release_free_memory()  # the load's transient parse/tokenise buffers (~0.9 KB/chunk at 3,000 docs)
        self.ingest_report = report
        self._index_cursor = len(self.drive.changes)
        self.index_version += 1
        return report

    def sync_index(self) -> IngestReport | None:
        """Bring the index up to the drive's change feed: index new versions, drop purged documents.
        Called after every write (so an acknowledged write is searchable) and before every search. A
        write also builds the new permission engine here, before it is acknowledged, so readers that
        come after it find the engine ready instead of waiting for its compile."""
        report = self._sync_index()
        if not self.policies.is_current():
            self.engine  # noqa: B018 (builds the engine of the new policy aside, then swaps it in)
        if report is not None or self.shared_rows_behind is not None:
            self.write_shared_rows()
        return report

    def write_shared_rows(self) -> bool:
        """The writer of a data directory on a Milvus server writes the collection's rows (new chunks, changed
        validity) before a write is acknowledged, not at its own next recall: read replicas following the data
        directory (``persistence.follower``) search those rows and never write them.

        The drive is the truth: a write is committed before this runs, so when Milvus does not answer the write
        still succeeds, ``shared_rows_behind`` says why, and the rows are written by the next write, recall or
        the data directory's saver thread (``Durability``). Meanwhile nothing is served from the stale rows: the
        writer's recalls need the rows first (503 ``index-unavailable``), a replica refuses chunks whose rows
        disagree with the drive. Returns True when the rows are current."""
        backend = self.store.vector_backend
        if backend is None or getattr(backend, "follow", True) or self.durable is None:
            return True
        if backend.spec.label != "milvus-server":
            return True
        engine = self.engine  # before the store lock (lock order: see _sync_index)
        # one attempt at a time: a slow attempt that fails (the saver thread's, started during an outage) must
        # not mark the rows behind after a later one (a recall's) has written them
        with self._rows_lock:
            try:
                with self.store.lock:
                    _doc, start, end, trash = self._chunk_arrays(engine)
                    backend.sync(start, end, trash)
            except IndexUnavailable as exc:
                self.shared_rows_behind = str(exc)
                log.warning("the Milvus rows are behind the drive (written when Milvus answers again): %s", exc)
                return False
            if self.shared_rows_behind is not None:
                self.shared_rows_behind = None
                self.durable.rows_caught_up()  # replicas notice a commit and read the rows again
            return True

    def index_in_sync(self) -> bool:
        """True when every change in the feed is indexed, the engine is the current policy's and no write holds
        the drive: a recall now has nothing to wait for, index or compile first (a hint: ``sync_index`` and the
        locks decide; the HTTP recall runs such a recall on the event loop, anything else in the threadpool)."""
        if not (self._index_cursor == len(self.drive.changes) and self.policies.is_current()):
            return False
        if not self.drive.lock.acquire(blocking=False):  # a write is under way: its recall may have to wait
            return False
        self.drive.lock.release()
        return True

    def _sync_index(self) -> IngestReport | None:
        if self._index_cursor == len(self.drive.changes):  # nothing to index: no lock (the cursor moves last)
            return None
        with self._index_lock:
            if self._index_cursor == len(self.drive.changes):
                return None
            if self.faults.index_frozen():  # FAULT stale-index: new versions are not re-indexed
                return None
            # Read the feed and the records it names under the drive lock; update the store after releasing
            # it (the drive lock is never held while taking the store's: readers hold the store lock and may
            # need the drive lock to rebuild an engine). Blobs are immutable, so ingest reads them unlocked.
            with self.drive.lock:
                changes, cursor = self.drive.changes_since(self._index_cursor, limit=10**9)
                removals: list[tuple[str, str]] = []
                pending: dict[str, tuple[DocumentRec, VersionRec]] = {}
                for c in changes:
                    if c.kind == "purged" and c.doc_id:
                        removals.append(("doc", c.doc_id))
                        pending = {k: v for k, v in pending.items() if v[0].doc_id != c.doc_id}
                    elif c.kind == "version_deleted" and c.version_id:  # retention
                        removals.append(("version", c.version_id))
                        pending.pop(c.version_id, None)
                    elif c.kind in ("created", "updated", "restored", "renamed") and c.doc_id in self.drive.documents:
                        doc = self.drive.documents[c.doc_id]
                        version = next((v for v in doc.versions if v.version_id == c.version_id), None)
                        # a rename re-indexes the head (the name is part of every chunk's header)
                        fresh = version is not None and version.version_id not in self.store.by_version
                        if version is not None and (fresh or c.kind == "renamed"):
                            pending[version.version_id] = (doc, version)
            for kind, ident in removals:
                (self.store.remove_document if kind == "doc" else self.store.remove_version)(ident)
            report = ingest(
                self.drive,
                list(pending.values()),
                self.store,
                self.embedder,
                self.cache,
                self.faults.extract_config(self.config.extract),  # FAULT cad-blind: dxf filename-only
                self.config.chunking,
                extraction_cache=self.extraction_cache,
            )
            self.ingest_report.rejected.extend(report.rejected)
            self._index_cursor = cursor
            self.index_version += 1
            return report

    def fusion_record(self) -> dict[str, float | int] | None:
        """The hybrid fusion constants in force (None for dense and bm25, which fuse nothing; the levers fuse
        with hybrid's constants)."""
        return asdict(self.retriever.fusion) if self.config.pipeline not in ("dense", "bm25") else None

    def rerank_record(self) -> dict[str, object] | None:
        """The reranker in force: its name, the weights' SHA-256 and tree count (None when off)."""
        reranker = getattr(self.retriever, "reranker", None)
        if reranker is None:
            return None
        meta = reranker.meta
        return {"name": reranker.name, "weights_sha256": meta.get("weights_sha256"), "trees": meta.get("trees")}

    def index_metadata(self) -> dict[str, object]:
        """How the index was built: embedder, pipeline, per-type extraction strategies, chunking, counts."""
        return {
            "embedder": self.embedder.name,
            "embedder_fingerprint": getattr(self.embedder, "fingerprint", self.embedder.name),
            "dim": self.embedder.dim,
            "pipeline": self.config.pipeline,
            # the hybrid pipeline's fusion constants (tuned by benchmarks/bench_fusion.py)
            "fusion": self.fusion_record(),
            "rerank": self.rerank_record(),  # the learned reranker after the pipeline, None when off
            "index": {"mode": self.store.index_mode, "searching_with": self.store.searching_with},
            "vector_store": vector_store.describe(self.store, self.config.vector_store),  # where dense search runs
            "extract": self.config.extract.as_dict(),
            "chunking": {"max_chars": self.config.chunking.max_chars, "overlap": self.config.chunking.overlap},
            "chunks": self.store.n_alive,
            "versions_indexed": len(self.store.by_version),
            # encoder threads for queries in flight and the threads they share
            "query_encoder": {
                "workers": self.retriever.query_batcher.workers,
                "threads": self.retriever.query_batcher.threads,
            },
            "rejected": [
                {"doc_id": r.doc_id, "version_id": r.version_id, "reason": r.reason}
                for r in self.ingest_report.rejected
            ],
        }

    # ------------------------------------------------------------------ permissions
    @property
    def engine(self) -> PermissionEngine:
        """The engine of the current policy (``PolicyEngines.engine``)."""
        return self.policies.engine

    def engine_at(self, at: datetime) -> PermissionEngine:
        """The engine for decisions at ``at`` (``PolicyEngines.engine_at``)."""
        return self.policies.engine_at(at)

    # ------------------------------------------------------------------ control plane (see persistence.lifecycle)
    def reset(self) -> dict[str, Any]:
        """Back to the loaded corpus as it was loaded (documents, grants, clock, change feed, index)."""
        from drivebench.simulator.persistence import lifecycle

        return lifecycle.load_corpus(self)

    def seed(self, corpus: str | Path) -> dict[str, Any]:
        """Replace the whole state with another corpus (a built-in name or a corpus directory)."""
        from drivebench.simulator.persistence import lifecycle

        return lifecycle.load_corpus(self, corpus)

    def set_clock(self, now: datetime) -> datetime:
        """Set the simulated clock (not before the latest change); retention runs on the new time."""
        from drivebench.simulator.persistence import lifecycle

        return lifecycle.set_clock(self, now)["now"]

    def advance_clock(self, delta: timedelta) -> datetime:
        from drivebench.simulator.persistence import lifecycle

        return lifecycle.advance_clock(self, delta)["now"]

    def stats(self) -> dict[str, Any]:
        """Counts, index_version, policy_version, the snapshot fingerprint, persistence state."""
        from drivebench.simulator.persistence import lifecycle

        return lifecycle.stats(self)

    def checkpoint(self) -> None:
        """Index in sync with the drive and, with a data directory, written to disk."""
        from drivebench.simulator.persistence import lifecycle

        lifecycle.checkpoint(self)

    def close(self) -> None:
        """Write the final index snapshot and release the data directory; in memory, drop the Milvus collection
        of a ``milvus`` vector store (a shared server keeps only what running simulators own)."""
        if self.durable is not None:
            self.durable.close()
        else:
            vector_store.release(self.store)

    def principal_for(
        self,
        token: TokenInfo,
        *,
        user_id: str | None = None,
        user_role: str | None = None,
        department: str | None = None,
    ) -> Principal:
        """Who a request acts as (``recall.principal_for``; an evaluate-as is appended to ``audit``)."""
        trust_body = False
        if self.faults.touches_recall:  # FAULT role-from-body: the body names who acts (a clean server asks not)
            named = user_id is not None or user_role is not None or department is not None
            trust_body = self.faults.identity_from_body(named and not token.has("evaluate-as"))
        return recall.principal_for(
            self.policies,
            self.audit,
            token,
            user_id=user_id,
            user_role=user_role,
            department=department,
            trust_body=trust_body,
        )

    def doc_lister(self, principal: Principal | None) -> Callable[[str], bool] | None:
        """``visible(doc_id)`` for name conflicts in ``principal``'s writes (``pointintime.doc_lister``)."""
        return pointintime.doc_lister(self.policies, principal)

    # ------------------------------------------------------------------ visibility masks
    def _visibility_key(self) -> tuple[int, ...]:
        """What the per-chunk arrays are derived from: the store's size, the drive's content version, the index
        version (moves whenever the store changes in place), the faults' generation (stale-index decides which
        versions count), the change feed's length."""
        drive = self.drive
        return (len(self.store), drive.content_version, self.index_version, self.faults.generation, len(drive.changes))

    def _chunk_arrays(self, engine: PermissionEngine) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per chunk: engine doc position, version start, version end (exclusive), doc trash time; kept up
        to date incrementally (``simulator.visibility``), synced only when what they are derived from or the
        engine's document list moved (a recall after no write touches them not). Caller holds the store lock."""
        arrays = self._masks_for
        if not isinstance(arrays, ChunkArrays):
            arrays = self._masks_for = ChunkArrays()
        key = self._visibility_key()
        if key != arrays.key or engine.doc_ids is not arrays.doc_ids:
            arrays.sync(self.drive, self.store, self.faults, key, engine)
        self._closed_trash = arrays.closed_trash
        return arrays.doc, arrays.start, arrays.end, arrays.trash

    def visible_chunks(
        self,
        principal: Principal,
        at: datetime,
        doc_filter: Callable[[DocumentRec], bool] | None = None,
        fault_leaked: frozenset[str] = frozenset(),
        now: datetime | None = None,
        *,
        unfiltered: bool = False,
    ) -> np.ndarray:
        """Chunks the principal may see at ``at``: previewable under the point-in-time rule
        (``permissions.pointintime``: at ``at``, and now too for a principal acting as itself), version
        current then, not trashed then, and (when given) accepted by ``doc_filter``. ``fault_leaked`` is
        only ever non-empty under the leaky-acl fault: documents let through although the principal may not
        preview them. ``unfiltered`` is only ever true under the post-filter and answer-unfiltered-context
        faults: every document's current chunks, whoever asks."""
        if self.faults.touches_recall and self.faults.permission_outage():  # FAULT permission-outage: no check
            raise RuntimeError("injected fault 'permission-outage': the permission engine is unreachable")
        now = self.drive.clock.now() if now is None else now
        engine = self.engine_at(at)
        historical = engine is not self.engine  # decided before taking the store lock (lock order)
        if unfiltered:  # FAULT post-filter, answer-unfiltered-context: retrieval without the permission filter
            doc_mask = np.ones(len(engine.doc_ids), dtype=bool)
        else:
            doc_mask = pointintime.allowed_mask(self.policies, principal, "preview", at, now)
        if fault_leaked:  # FAULT leaky-acl: widen the permitted set on purpose
            doc_mask = doc_mask | np.isin(np.array(engine.doc_ids, dtype=object), list(fault_leaked))
        if doc_filter is not None:
            keep = np.array([doc_filter(self.drive.documents[d]) for d in engine.doc_ids], dtype=bool)
            doc_mask = doc_mask & keep
        with self.store.lock:
            chunk_doc, start, end, trash = self._chunk_arrays(engine)
            backend, generation = self.store.vector_backend, None  # Milvus keeps validity per chunk
            if backend is not None:
                generation = backend.sync(start, end, trash)
            t = to_us(at)
            # per document, one extra slot last: chunk_doc is -1 for chunks of unknown documents, and
            # take(-1) reads that slot (never allowed, never in the trash). O(chunks) in a few passes
            # without boolean fancy indexing (1.0 -> 0.4 ms at 116,000 chunks)
            per_doc = np.zeros(len(engine.doc_ids) + 1, dtype=bool)
            per_doc[: len(doc_mask)] = doc_mask
            mask = start <= t
            mask &= end > t
            mask &= trash > t
            mask &= per_doc.take(chunk_doc)
            if historical:  # as_of: earlier stays in the trash count too
                span_doc, span_lo, span_hi = self._closed_trash
                in_trash = np.zeros(len(engine.doc_ids) + 1, dtype=bool)
                in_trash[span_doc[(span_lo <= t) & (t < span_hi)]] = True
                mask &= ~in_trash.take(chunk_doc)
            return visible_mask(mask, t, generation)  # the instant travels to Milvus

    # ------------------------------------------------------------------ recall
    def resolve_as_of(self, as_of: datetime | None) -> datetime:
        """The instant a request is judged at (the clock when None); after the clock or out of range: 400."""
        return pointintime.resolve_as_of(self.policies, as_of)

    def recall(
        self,
        principal: Principal,
        query: str,
        top_k: int,
        as_of: datetime | None = None,
        doc_filter: Callable[[DocumentRec], bool] | None = None,
        *,
        file_types: list[str] | None = None,
        folder: str | None = None,
        pipeline: str | None = None,
    ) -> RecallOutcome:
        """``recall.recall_as`` for in-process callers that hold a principal (tests, benchmarks, experiments)."""
        ask = RecallQuery(query, top_k, as_of=as_of, file_types=file_types, folder=folder, pipeline=pipeline)
        return recall.recall_as(self, principal, ask, doc_filter)

    def reconfigure(self, config: SimConfig) -> None:
        """Switch to ``config``'s query-time options (pipeline, reranker, answer levers) over the same index: what
        ``drivebench experiment`` does between configurations that share an index. The embedder, extraction,
        chunking and vector store must be the ones the index was built with (else ValueError)."""
        for name in ("embedder", "index", "vector_store", "vector_store_dir", "extract", "chunking"):
            if getattr(config, name) != getattr(self.config, name):
                raise ValueError(f"{name} is fixed when the index is built: load another simulator to change it")
        levers_of(config)  # a bad answer lever is refused before anything changes
        retriever = self.make_retriever(config.pipeline, config.rerank)
        self.config, self.retriever = config, retriever
        self._other_retrievers = {}

    def retriever_for(self, pipeline: str | None) -> Retriever | RerankingRetriever:
        """The server's retriever (``pipeline`` None or its own), else one of ``pipeline`` over the same index
        and embedder (made once, kept while the index is the same; an unknown name raises ValueError)."""
        current = self.retriever
        if pipeline is None or pipeline == current.pipeline:
            return current
        cached = self._other_retrievers.get(pipeline)
        if cached is None or cached.store is not self.store or cached.embedder is not self.embedder:
            # the server's reranker, if any, follows it too
            cached = self._other_retrievers[pipeline] = self.make_retriever(pipeline, self.config.rerank)
        return cached

    def make_retriever(self, pipeline: str, rerank: str | None) -> Retriever | RerankingRetriever:
        """``pipeline`` over this index, followed by the ``rerank`` model when given (its folder evidence from
        this drive: ``folder_path_now``)."""
        # the packaged vectors answer the built-in eval sets' questions too (off with use_cache=False, like them)
        base = Retriever(self.store, self.embedder, pipeline, query_packs=self.cache.packs)
        return with_rerank(base, rerank, self.folder_path_now)

    @property
    def reranker(self) -> str | None:
        """The reranker the server's recalls run after the pipeline (``config.rerank`` resolved), None: none."""
        return getattr(self.retriever, "rerank", None)

    def folder_path_now(self, doc_id: str) -> str:
        """The folder path ``doc_id`` is in now ("" for a document the drive does not know): the reranker's
        folder evidence, asked only for documents a recall is about to return."""
        doc = self.drive.documents.get(doc_id)
        if doc is None:
            return ""
        try:
            return self.drive.folder_path_at(doc.placement_at(None)[0], None)
        except KeyError:  # its folder purged while the recall ran: no folder evidence, the ranking goes on
            return ""

    def snapshot(self) -> str:
        """Fingerprint of what recall runs against: documents, versions, folders, trash, grants, the
        organisation (users, project memberships), index (``snapshot.SnapshotFingerprint``)."""
        return self.fingerprint.value(self.policies, self.store, self.config.pipeline, self.embedder.name)
