"""``drivebench milvus-server`` (a Milvus server in the foreground) and ``drivebench milvus gc URI``."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import typer

from drivebench.cli.common import console, err_console

app = typer.Typer(no_args_is_help=True)


def milvus_server(
    data: Path | None = typer.Option(
        None,
        "--data",
        file_okay=False,
        help="Keep Milvus's data here (kept at exit). Default: a new temporary directory, removed at exit.",
    ),
    port: int = typer.Option(
        19530,
        "--port",
        help="The port clients use (milvus:http://127.0.0.1:PORT). Milvus's other ports are pinned above it "
        "(PORT..PORT+11); a busy one is an error, never moved.",
    ),
    netns: bool | None = typer.Option(
        None,
        "--netns/--no-netns",
        help="Run Milvus in a network namespace of its own (unshare -n as root, unshare -rn otherwise) and relay "
        "HOST:PORT to it, so nothing of Milvus listens anywhere else (port 0: a free one). The default where "
        "possible; --no-netns runs the binary directly: its nine ports then listen on every interface.",
    ),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="The address the relay listens on (with the namespace). Another than 127.0.0.1 offers Milvus to the "
        "network: its clients then need the token file.",
    ),
    token_file: Path | None = typer.Option(
        None,
        "--token-file",
        dir_okay=False,
        help="Where to write root:PASSWORD (mode 0600; default DATA/milvus-token). Give it to drivebench as "
        "DRIVEBENCH_MILVUS_TOKEN_FILE.",
    ),
    timeout: float = typer.Option(120.0, "--timeout", min=1, help="Seconds to wait for the server to be healthy."),
) -> None:
    """Run a Milvus 2.3.5 standalone server in the foreground (the package milvus, extra milvus-server) for
    `serve --index milvus:URI`, with authentication on: root's password is random, written to the token file.
    Prints `ready: URI` once healthy; Ctrl-C or SIGTERM stops it."""
    from drivebench.server.milvus_server import (
        ALL_INTERFACES_WARNING,
        MilvusServerError,
        can_use_netns,
        start_binary,
        start_in_netns,
    )

    if netns is None:
        netns = can_use_netns()
        if not netns:
            raise MilvusServerError(
                "no network namespace can be made here (unshare -n needs root, unshare -rn user namespaces), and "
                "without one Milvus listens on every interface",
                hint="pass --no-netns to run it that way anyway (authentication stays on)",
            )
    if not netns:
        err_console.print(f"[yellow]warning:[/] {ALL_INTERFACES_WARNING}")
    stop, ready = threading.Event(), threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        if not ready.is_set():  # while starting: abort the start (it stops the child and removes its directory)
            raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    err_console.print(f"starting Milvus {'in a network namespace of its own ' if netns else ''}…")
    try:
        if netns:
            server = start_in_netns(data, port, timeout, host=host, token_file=token_file)
        else:
            server = start_binary(data, port, timeout, token_file=token_file)
    except KeyboardInterrupt:
        err_console.print("stopped while starting")
        raise typer.Exit(130) from None
    ready.set()
    try:
        console.print(f"ready: {server.uri}", soft_wrap=True)
        err_console.print(
            f"data: {server.data_dir}{' (removed at exit)' if server.created_dir else ''} · started in "
            f"{server.started_s:.1f} s · credential: {server.token_file} (0600) · use: "
            f"DRIVEBENCH_MILVUS_TOKEN_FILE={server.token_file} drivebench serve --index milvus:{server.uri}",
            soft_wrap=True,
        )
        sys.stdout.flush()
        while not stop.wait(0.5):
            if not server.alive():
                code = server.proc.poll()
                err_console.print(f"[red]error:[/] Milvus exited with code {code}; its log: {server.log}")
                raise typer.Exit(1)
        err_console.print("stopping Milvus …")
    finally:
        server.stop()


@app.command("gc")
def gc(
    uri: str = typer.Argument(..., help="The Milvus server, e.g. http://127.0.0.1:19530."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be dropped."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
) -> None:
    """Drop drivebench's orphaned collections on a Milvus server: those of an in-memory serve whose process is
    gone, and those of a --data-dir serve that is not running whose data directory no longer names them.
    Collections of another machine, of a running process, or not drivebench's are kept."""
    from drivebench.search.index.milvus_store import collect_garbage

    verdicts = collect_garbage(uri, dry_run=dry_run)
    if as_json:
        console.print_json(json.dumps(verdicts))
        return
    for v in verdicts:
        action = "would drop" if v["orphan"] and dry_run else ("dropped" if v["orphan"] else "kept")
        console.print(f"{action:10} {v['collection']}: {v['reason']}", soft_wrap=True)
    orphans = sum(v["orphan"] for v in verdicts)
    err_console.print(f"{len(verdicts)} drivebench collections, {orphans} orphaned")
