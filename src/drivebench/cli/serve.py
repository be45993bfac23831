"""``drivebench serve``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from drivebench.cli.common import console, err_console, load_with_progress, quiet_libraries, status
from drivebench.cli.options import (
    AnswerCitationOpt,
    AnswerLengthOpt,
    AnswerPassagesOpt,
    CorpusOpt,
    EmbedderOpt,
    ExtractOpt,
    PipelineOpt,
    RerankOpt,
    answer_config,
    parse_extract,
)
from drivebench.drive.tokens import SecretSource
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.faults import Fault


def open_data_dir(data_dir: Path, corpus: str, config: SimConfig) -> Simulator:
    """Open (or create) a durable simulator in ``data_dir`` (see ``drivebench.simulator.persistence``)."""
    from drivebench.simulator.persistence import DataDirLocked, open_durable

    quiet_libraries()
    try:
        with status(f"opening {data_dir} …"):
            sim = open_durable(data_dir, corpus, config)
    except DataDirLocked as exc:
        raise typer.BadParameter(str(exc), param_hint="--data-dir") from None
    stats = sim.durable.stats()
    err_console.print(
        f"[green]opened[/] {data_dir}: {sim.drive.name}, {len(sim.drive.documents)} documents, "
        f"{sim.store.n_alive} chunks, change seq {stats['meta_seq']}"
        + (", index rebuilt" if stats["rebuilt_index_at_start"] else "")
        + (f", {stats['replayed_changes_at_start']} changes replayed" if stats["replayed_changes_at_start"] else "")
    )
    return sim


def set_mcp_allowed_hosts(extra: list[str], host: str) -> list[str]:
    """The host names the MCP endpoint's DNS-rebinding check accepts besides the loopback ones:
    ``--mcp-allowed-host`` values, then ``DRIVEBENCH_MCP_ALLOWED_HOSTS`` (comma-separated), then a
    non-wildcard, non-local ``--host``. Written back to the variable, which ``mount_mcp`` reads."""
    import os

    from drivebench.server.mcp.mount import ALLOWED_HOSTS_ENV, allowed_hosts_from_env

    hosts = [h.strip() for value in extra for h in value.split(",") if h.strip()]
    hosts += allowed_hosts_from_env()
    if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(host)
    hosts = list(dict.fromkeys(hosts))
    if hosts:
        os.environ[ALLOWED_HOSTS_ENV] = ",".join(hosts)
    return hosts


def set_console_sessions(idle_timeout: int | None, session_lifetime: int | None) -> None:
    """``--console-idle-timeout`` / ``--console-session-lifetime`` (seconds): written to the variables the
    console's session store reads (``DRIVEBENCH_CONSOLE_IDLE_TIMEOUT`` / ``..._SESSION_LIFETIME``)."""
    import os

    from drivebench.server.console.session import IDLE_ENV, LIFETIME_ENV

    if idle_timeout is not None:
        os.environ[IDLE_ENV] = str(idle_timeout)
    if session_lifetime is not None:
        os.environ[LIFETIME_ENV] = str(session_lifetime)


def _parse_faults(values: list[str]) -> list[Fault]:
    """Parse the ``--fault`` specs."""
    from drivebench.simulator.faults import FaultSpecError, parse_fault_specs

    try:
        return parse_fault_specs(values)
    except FaultSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fault") from None


def token_secret(data_dir: Path | None, corpus: str) -> SecretSource:
    """The secret the server's tokens derive from (``simulator.tokens.resolve_secret``), with a warning
    and the command that prints the tokens whenever ``DRIVEBENCH_TOKEN_SECRET`` is not set."""
    from drivebench.drive.tokens import SECRET_ENV, resolve_secret

    source = resolve_secret(data_dir)
    if source.origin == "env":
        return source
    if source.origin == "data-dir":
        hint = f"drivebench tokens --corpus {corpus} --data-dir {data_dir}"
        where = f"the random secret kept in {source.path}"
    else:
        hint = f"drivebench tokens --corpus {corpus} --secret-file {source.path}"
        where = f"a new random secret (written to {source.path}, readable by you only)"
    err_console.print(
        f"[yellow]warning:[/] {SECRET_ENV} is not set: tokens derive from {where}. Tokens: [bold]{hint}[/]"
    )
    return source


def _check_index(value: str) -> str:
    """Validate and normalise ``--index faiss|milvus[:URI]``."""
    from drivebench.search.index.vector_store import VectorStoreError, parse_index_spec

    try:
        return str(parse_index_spec(value))
    except VectorStoreError as exc:
        raise typer.BadParameter(str(exc)) from None


def _serve_replicas(
    corpus: str,
    host: str,
    port: int,
    pipeline: str,
    embedder: str,
    extract: list[str],
    index: str,
    fault: list[str],
    data_dir: Path | None,
    workers: int,
    access_log: bool = True,
    forwarded_allow_ips: str | None = None,
    answer_levers: dict[str, Any] | None = None,
    rerank: str | None = None,
) -> None:
    """``--workers N`` (N > 1): read-only replica processes (``drivebench.server.process.serve_replicas``)."""
    from drivebench.server.process import ReplicaSpec, serve_replicas

    if index == "milvus":
        raise typer.BadParameter("milvus-lite keeps one file per process: use --workers 1", param_hint="--workers")
    if index != "faiss" and data_dir is None:  # milvus:URI
        raise typer.BadParameter(
            "replicas on a Milvus server follow a data directory's writer: start the writer with "
            "serve --data-dir DIR --index milvus:URI, then the replicas with --workers N --data-dir DIR and the "
            "same --index (docs/vector-stores.md, Several processes)",
            param_hint="--workers",
        )
    if data_dir is not None and index == "faiss":
        raise typer.BadParameter(
            "a data directory has one writer: use --workers 1 with --data-dir (read replicas of a data "
            "directory need --index milvus:URI)",
            param_hint="--workers",
        )
    if data_dir is not None:  # read replicas of the directory's writer: its corpus, not --corpus
        corpus_ref, followed = corpus, str(data_dir.resolve())
        what = f"read replicas of {data_dir} (writes go to its writer; here they answer 409)"
    else:
        from drivebench.cli.common import resolve_corpus_option

        # the corpus is built (once) here; every worker loads the built directory
        corpus_ref, followed = str(resolve_corpus_option(corpus)), None
        what = "read-only worker processes (writes, MCP and the console: 409)"
    source = token_secret(data_dir, corpus)  # one secret for every worker (the file it is in, or the environment)
    secret_file = str(source.path) if source.origin != "env" and source.path is not None else None
    spec = ReplicaSpec(
        corpus_ref,
        pipeline,
        embedder,
        list(extract),
        index,
        list(fault),
        secret_file,
        answer_levers=dict(answer_levers or {}),
        rerank=rerank,
        data_dir=followed,
    )
    console.print(f"serving on http://{host}:{port} with {workers} {what}")
    serve_replicas(spec, host, port, workers, access_log=access_log, forwarded_allow_ips=forwarded_allow_ips)


def serve(
    corpus: str = CorpusOpt,
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="TCP port."),
    pipeline: str = PipelineOpt,
    rerank: str | None = RerankOpt,
    embedder: str = EmbedderOpt,
    extract: list[str] = ExtractOpt,
    answer_citation: str = AnswerCitationOpt,
    answer_length: int = AnswerLengthOpt,
    answer_passages: int = AnswerPassagesOpt,
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        file_okay=False,
        help="Keep the drive on disk here (SQLite metadata, blobs, index files): writes survive restarts and "
        "crashes. Created from --corpus when empty; afterwards the stored drive is used. Default: in memory.",
    ),
    index: str = typer.Option(  # the vector store
        "faiss",
        "--index",
        callback=_check_index,
        help="Vector store for dense search: faiss (in-process, default), milvus (milvus-lite in a file under "
        "--data-dir) or milvus:URI (a Milvus server, e.g. milvus:http://localhost:19530). See docs/vector-stores.md.",
    ),
    fault: list[str] = typer.Option(  # fault profiles
        [], "--fault", help="Start with these faults: NAME[:key=value...][,NAME] (GET/PUT /_sim/faults to change)."
    ),
    mcp_allowed_host: list[str] = typer.Option(  # the MCP endpoint's DNS-rebinding check
        [],
        "--mcp-allowed-host",
        help="A host name MCP clients use to reach /mcp/ (repeatable; also $DRIVEBENCH_MCP_ALLOWED_HOSTS, "
        "comma-separated). Loopback names are always allowed; '*' allows any (behind a trusted proxy only).",
        show_default=False,
    ),
    workers: int = typer.Option(  # read-only replicas, to use several cores
        1,
        "--workers",
        min=1,
        help="Worker processes. Above 1: read-only replicas, each loading the corpus (recall throughput on "
        "several cores; writes, /_sim changes, MCP and the console answer 409). With --data-dir and "
        "--index milvus:URI they follow that directory's writer. See docs/server.md.",
    ),
    access_log: bool = typer.Option(  # its line per request costs ~0.2 ms
        True,
        "--access-log/--no-access-log",
        help="Print one line per request on stdout (uvicorn's access log; on by default). Off saves ~0.2 ms per "
        "request; errors and warnings are logged either way.",
    ),
    forwarded_allow_ips: str | None = typer.Option(  # a TLS proxy in front: https, the real client
        None,
        "--forwarded-allow-ips",
        help="Comma-separated addresses or networks of proxies whose X-Forwarded-Proto and X-Forwarded-For are "
        "believed ('*': any; default $FORWARDED_ALLOW_IPS, else 127.0.0.1 and ::1). Behind a TLS proxy listed "
        "here the console's session cookie is Secure.",
        show_default=False,
    ),
    console_idle_timeout: int | None = typer.Option(
        None,
        "--console-idle-timeout",
        min=1,
        help="Seconds without a request after which a console session ends (default 1800; also "
        "$DRIVEBENCH_CONSOLE_IDLE_TIMEOUT).",
        show_default=False,
    ),
    console_session_lifetime: int | None = typer.Option(
        None,
        "--console-session-lifetime",
        min=1,
        help="Seconds after sign-in at which a console session ends whatever happens (default 43200 = 12 h; "
        "also $DRIVEBENCH_CONSOLE_SESSION_LIFETIME).",
        show_default=False,
    ),
) -> None:
    """Load a corpus and serve the simulator (recall and file APIs, /_sim control plane, OpenAPI docs at
    /docs) with uvicorn."""
    from drivebench.server.process import serve_forever

    faults = _parse_faults(fault)
    mcp_hosts = set_mcp_allowed_hosts(mcp_allowed_host, host)
    set_console_sessions(console_idle_timeout, console_session_lifetime)
    levers = answer_config(answer_citation, answer_length, answer_passages)
    config = SimConfig(
        pipeline=pipeline, embedder=embedder, extract=parse_extract(extract), vector_store=index, rerank=rerank
    )
    config = replace(config, **levers)
    if workers > 1:  # read-only replica processes
        _serve_replicas(
            corpus,
            host,
            port,
            pipeline,
            embedder,
            extract,
            index,
            fault,
            data_dir,
            workers,
            access_log,
            forwarded_allow_ips,
            levers,
            rerank,
        )
        return
    if data_dir is None:  # load first: a bad corpus is reported before the secret warning
        sim = load_with_progress(corpus, config)
        source = token_secret(data_dir, corpus)  # never the public development secret on a listening server
    else:
        source = token_secret(data_dir, corpus)
        sim = open_data_dir(data_dir, corpus, config)
    sim.use_token_secret(source.secret)
    if faults:
        sim.faults.replace(faults)
        console.print("[bold red]faults on:[/] " + ", ".join(f.spec() for f in faults))
    base = f"http://{host}:{port}"
    console.print(f"serving on {base} · docs {base}/docs · console {base}/ui/ · MCP {base}/mcp/")
    if mcp_hosts:
        err_console.print(f"MCP endpoint also accepts Host: {', '.join(mcp_hosts)}")
    try:
        serve_forever(  # sim.close: the final index snapshot, even on SIGTERM
            sim, host, port, on_shutdown=sim.close, access_log=access_log, forwarded_allow_ips=forwarded_allow_ips
        )
    finally:
        sim.close()  # idempotent; releases the data directory
