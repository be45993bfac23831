"""Options shared by several commands."""

from __future__ import annotations

import typer

from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.simulator.retrieval.pipelines import DEFAULT_PIPELINE

CorpusOpt = typer.Option(
    DEFAULT_CORPUS, "--corpus", "-c", help="A built-in corpus name (seed, acme-zh, acme-en) or a corpus directory."
)
PipelineOpt = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Retrieval pipeline: dense, bm25 or hybrid.")
EmbedderOpt = typer.Option(
    "minilm", "--embedder", help="Embedding backend: minilm (the real model) or hash (test backend)."
)


def parse_ks(value: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter(f"--k takes comma-separated integers, got {value!r}") from None
    if not ks or ks[0] < 1 or ks[-1] > 100:
        raise typer.BadParameter("--k values must be between 1 and 100")
    return ks
