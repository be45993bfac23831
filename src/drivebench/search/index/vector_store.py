"""Where dense search runs: the vector-store interface and its two backends.

``serve --index faiss|milvus[:URI]`` (or ``[serve] index = ...`` in the config file) picks one:

* ``faiss`` (default): the in-process FAISS index of ``chunk_store.ChunkStore`` (flat + permission bitmap,
  IVF above ``ann.ANN_MIN_CHUNKS`` chunks). ``FaissVectors`` adapts it to the interface; nothing is copied.
* ``milvus``: pymilvus ``MilvusClient`` (``milvus_store.MilvusVectors``). Plain ``milvus`` runs milvus-lite
  embedded, in a file under the data directory (``<data-dir>/milvus/vectors.db``; without a data directory
  a file in a temporary directory of this process); ``milvus:URI`` talks to a Milvus server
  (``milvus:http://localhost:19530``). The permission filter is pushed into the search as a filter
  expression (see ``milvus_store``): never a post-filter.

The interface (``VectorStore``) is what ``Retriever.dense`` calls through ``ChunkStore.dense_search``: ``search(query,
mask, k)`` returns the top-``k`` ``ChunkHit`` by inner product among the chunk ids where ``mask`` is set,
``min(k, allowed)`` of them. A backend other than FAISS is attached to the chunk store as
``store.vector_backend`` and follows the store's adds and removals through two marked hooks in
``ChunkStore.add``/``remove_version``. The chunk texts, metadata and BM25 stay in the process (hybrid fuses
the backend's dense ranking with the in-process BM25 ranking by RRF, ``retrieval.pipelines``); the FAISS
flat copy also stays, as the durable snapshot the Milvus collection is reconciled against at start-up.

Masks built by ``Simulator.visible_chunks`` carry the instant they were judged at (``chunk_store.VisibleMask.at_us``): a
backend that stores version validity on each chunk filters it in its own expression at that instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from drivebench.search.index.chunk_store import ChunkHit, ChunkStore

VECTOR_STORES = ("faiss", "milvus")
DEFAULT_VECTOR_STORE = "faiss"


class VectorStoreError(ValueError):
    """A bad ``--index`` value."""


@dataclass(frozen=True)
class IndexSpec:
    """A parsed ``--index`` value: the backend and, for ``milvus:URI``, the server URI."""

    kind: str
    uri: str | None = None

    @property
    def label(self) -> str:
        if self.kind != "milvus":
            return self.kind
        return "milvus-lite" if self.uri is None or self.uri.endswith(".db") else "milvus-server"

    def __str__(self) -> str:
        return self.kind if self.uri is None else f"{self.kind}:{self.uri}"


def parse_index_spec(spec: str) -> IndexSpec:
    """``faiss``, ``milvus`` or ``milvus:URI`` (a server URI such as ``http://host:19530``, or a milvus-lite
    ``*.db`` path)."""
    text = (spec or "").strip()
    kind, _, uri = text.partition(":")
    kind = kind.lower()
    if kind not in VECTOR_STORES:
        raise VectorStoreError(f"unknown index {spec!r}; use faiss, milvus or milvus:URI")
    if kind == "faiss":
        if uri:
            raise VectorStoreError("the faiss index takes no URI: use faiss, milvus or milvus:URI")
        return IndexSpec("faiss")
    return IndexSpec("milvus", uri.strip() or None)


class VectorStore(Protocol):
    """Dense search inside an allowed set of chunk ids (pre-filtered, exact for the flat index)."""

    name: str

    def search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]: ...

    def stats(self) -> dict[str, Any]: ...


class FaissVectors:
    """The in-process FAISS index of a chunk store (``ChunkStore.search``), as a ``VectorStore``."""

    name = "faiss"

    def __init__(self, store: ChunkStore) -> None:
        self.store = store

    def search(self, query: np.ndarray, mask: np.ndarray, k: int) -> list[ChunkHit]:
        return self.store.search(query, mask, k)

    def stats(self) -> dict[str, Any]:
        return {"backend": "faiss", "mode": self.store.index_mode, "searching_with": self.store.searching_with}


def vectors_of(store: ChunkStore) -> VectorStore:
    """The vector store that answers dense search for ``store``: its attached backend, else its FAISS."""
    backend = getattr(store, "vector_backend", None)
    return backend if backend is not None else FaissVectors(store)


def attach(
    store: ChunkStore,
    spec: str | IndexSpec,
    data_dir: Path | None = None,
    *,
    reconcile: bool = False,
    follow: bool = False,
) -> None:
    """Give ``store`` the backend ``spec`` names (no-op for faiss). ``data_dir``: where milvus-lite keeps its
    file; ``reconcile``: the store was loaded from a snapshot, bring the existing collection in line with it;
    ``follow``: a read replica of ``data_dir``, which reads the writer's rows and never writes them."""
    parsed = parse_index_spec(spec) if isinstance(spec, str) else spec
    if parsed.kind == "faiss":
        store.vector_backend = None
        return
    from drivebench.search.index.milvus_store import MilvusVectors

    backend = MilvusVectors.open(store, parsed, data_dir, reconcile=reconcile, follow=follow)
    store.vector_backend = backend


def release(store: ChunkStore) -> None:
    """The store is no longer served: its backend lets go of what only it uses (``MilvusVectors.release``)."""
    backend = getattr(store, "vector_backend", None)
    if backend is not None and hasattr(backend, "release"):
        backend.release()


def describe(store: ChunkStore, spec: str | IndexSpec) -> dict[str, Any]:
    """What ``/_sim/stats``, ``/healthz`` and the run metadata say about the vector store."""
    parsed = parse_index_spec(spec) if isinstance(spec, str) else spec
    out: dict[str, Any] = {"backend": parsed.kind, "spec": str(parsed), "engine": parsed.label}
    backend = getattr(store, "vector_backend", None)
    if backend is not None:
        out.update(backend.stats())
    return out
