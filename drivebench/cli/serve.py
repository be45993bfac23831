"""``drivebench serve``."""

from __future__ import annotations

import typer

from drivebench.cli.common import console, load_with_progress
from drivebench.cli.options import CorpusOpt, EmbedderOpt, PipelineOpt
from drivebench.simulator.backend import SimConfig


def serve(
    corpus: str = CorpusOpt,
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="TCP port."),
    pipeline: str = PipelineOpt,
    embedder: str = EmbedderOpt,
) -> None:
    """Load a corpus and serve the simulator (recall API, OpenAPI docs at /docs) with uvicorn."""
    from drivebench.server import serve_forever

    sim = load_with_progress(corpus, SimConfig(pipeline=pipeline, embedder=embedder))
    console.print(f"serving on http://{host}:{port} · docs http://{host}:{port}/docs · `drivebench tokens` for tokens")
    serve_forever(sim, host, port)
