"""``drivebench connector``: the reference connector (its own index fed from a drive's public API) served
with uvicorn. Exit codes: 0 stopped cleanly; 2 usage (bad option, a drive that refuses the token, the drive
token given as the client token without ``--allow-drive-token-as-client``)."""

from __future__ import annotations

import logging
import secrets

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
        None,
        "--token",
        help="Bearer token callers must send (default: a random one, printed at start). Not the drive token: "
        "every client would hold the drive's admin token.",
    ),
    allow_drive_token_as_client: bool = typer.Option(
        False,
        "--allow-drive-token-as-client",
        help="Accept --token equal to --drive-token (every client then holds the drive token).",
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
    if token is not None and not token.strip():
        raise typer.BadParameter("an empty token", param_hint="--token")
    if token == drive_token and not allow_drive_token_as_client:
        raise typer.BadParameter(
            "the drive token as the client token would hand every client the drive's admin token: give another "
            "(or none: one is generated), or pass --allow-drive-token-as-client",
            param_hint="--token",
        )
    client_token = token if token is not None else secrets.token_urlsafe(32)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    index = ConnectorIndex()
    syncer = Syncer(DriveClient(drive, drive_token), strategy, interval, index)  # type: ignore[arg-type]  # the strategy string is checked by Syncer (ValueError)
    try:
        syncer.start()
    except DriveError as exc:
        raise typer.BadParameter(f"the drive cannot be read: {exc}", param_hint="--drive") from None
    err_console.print(
        f"connector ({strategy}, every {interval:g} s) on http://{host}:{port}/api/mcp/recall: "
        f"{len(syncer.docs)} documents from {drive}",
        highlight=False,
    )
    if token is None:
        err_console.print(
            f"client token (send as Bearer; --token to choose one): {client_token}", highlight=False, soft_wrap=True
        )
    app = create_connector_app(
        index, syncer, client_token, admin_token=drive_token, allow_admin_client_token=allow_drive_token_as_client
    )
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        syncer.stop()
