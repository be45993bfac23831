"""``drivebench serve``."""

from __future__ import annotations

import typer

from drivebench.cli.common import console, load_with_progress
from drivebench.cli.options import CorpusOpt, EmbedderOpt, PipelineOpt
from drivebench.simulator.backend import SimConfig
from drivebench.simulator.faults import Fault


def _parse_faults(values: list[str], host: str) -> list[Fault]:
    """issue #7: ``--fault`` specs; a non-local ``--host`` is added to the MCP endpoint's allowed hosts."""
    import os

    from drivebench.simulator.faults import FaultSpecError, parse_fault_specs

    if host not in ("127.0.0.1", "localhost", "::1"):  # the MCP endpoint's DNS-rebinding check
        os.environ.setdefault("DRIVEBENCH_MCP_ALLOWED_HOSTS", host)
    try:
        return parse_fault_specs(values)
    except FaultSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fault") from None


def serve(
    corpus: str = CorpusOpt,
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="TCP port."),
    pipeline: str = PipelineOpt,
    embedder: str = EmbedderOpt,
    fault: list[str] = typer.Option(  # issue #7: fault profiles
        [], "--fault", help="Start with these faults: NAME[:key=value...][,NAME] (GET/PUT /_sim/faults to change)."
    ),
) -> None:
    """Load a corpus and serve the simulator (recall API, OpenAPI docs at /docs) with uvicorn."""
    from drivebench.server import serve_forever

    faults = _parse_faults(fault, host)  # issue #7
    sim = load_with_progress(corpus, SimConfig(pipeline=pipeline, embedder=embedder))
    if faults:  # issue #7
        sim.faults.replace(faults)
        console.print("[bold red]faults on:[/] " + ", ".join(f.spec() for f in faults))
    console.print(f"serving on http://{host}:{port} · docs http://{host}:{port}/docs · `drivebench tokens` for tokens")
    serve_forever(sim, host, port)
