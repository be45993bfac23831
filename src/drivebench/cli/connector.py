"""``drivebench connector``: the reference connector (its own index fed from a drive's public API) served
with uvicorn. Exit codes: 0 stopped cleanly; 2 usage (bad option, a drive that refuses the token)."""

from __future__ import annotations

import logging

import typer

from drivebench.cli.common import err_console, quiet_libraries


def connector(
    drive: str = typer.Option(..., "--drive", help="The drive to sync from (a drivebench simulator's URL)."),
    drive_token: str = typer.Option(..., "--drive-token", help="A token the drive accepts for reading everything."),
    port: int = typer.Option(8100, "--port", min=1, max=65535),
    host: str = typer.Option("127.0.0.1", "--host"),
    strategy: str = typer.Option("changes", "--strategy", help="changes, mtime or full (see docs/connector.md)."),
    interval: float = typer.Option(5.0, "--interval", min=0.05, max=86_400, help="Seconds between syncs."),
    token: str | None = typer.Option(
        None, "--token", help="Bearer token callers must send (default: the drive token)."
    ),
) -> None:
    """Serve POST /api/mcp/recall from the connector's own index, synced from the drive every --interval
    seconds with --strategy: changes (follows the change feed), mtime (by modification time: misses ACL-only
    changes), full (re-crawls everything)."""
    import uvicorn

    from drivebench.connector.app import create_connector_app
    from drivebench.connector.index import ConnectorIndex
    from drivebench.connector.sync import STRATEGIES, Syncer
    from drivebench.evaluator.sync.drive_client import DriveClient, DriveError

    quiet_libraries()
    if strategy not in STRATEGIES:
        raise typer.BadParameter(f"one of {', '.join(STRATEGIES)}", param_hint="--strategy")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    index = ConnectorIndex()
    syncer = Syncer(DriveClient(drive, drive_token), strategy, interval, index)  # type: ignore[arg-type]
    try:
        syncer.start()
    except DriveError as exc:
        raise typer.BadParameter(f"the drive cannot be read: {exc}", param_hint="--drive") from None
    err_console.print(
        f"connector ({strategy}, every {interval:g} s) on http://{host}:{port}/api/mcp/recall: "
        f"{len(syncer.docs)} documents from {drive}",
        highlight=False,
    )
    app = create_connector_app(index, syncer, token or drive_token)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        syncer.stop()
