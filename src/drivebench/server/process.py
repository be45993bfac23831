"""Serve a simulator with a real uvicorn server, in the foreground or on a background thread."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.responses import JSONResponse

from drivebench.search.index.embedders import EMBED_THREADS_ENV
from drivebench.search.retrieval.rerank import DEFAULT_RERANK
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator


def limit_search_threads() -> int:
    """One FAISS thread per search by default: a server answers many small concurrent searches, where
    OpenMP's thread team costs more than it saves (measured 2-5x slower single-query flat search with 2
    threads on a busy 2-core machine, benchmarks/bench_filtered_search.py). ``DRIVEBENCH_FAISS_THREADS``
    overrides."""
    import os

    import faiss

    n = int(os.environ.get("DRIVEBENCH_FAISS_THREADS", "1"))
    faiss.omp_set_num_threads(n)
    return n


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass
class RunningServer:
    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(
    sim: Simulator, host: str = "127.0.0.1", port: int | None = None, forwarded_allow_ips: str | None = None
) -> RunningServer:
    """Start uvicorn on ``host:port`` (a free port when None) in a daemon thread; returns once it listens.
    ``forwarded_allow_ips``: as ``serve --forwarded-allow-ips`` (None: uvicorn's default)."""
    limit_search_threads()
    port = port or free_port(host)
    config = uvicorn.Config(
        create_app(sim),
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        **proxy_options(forwarded_allow_ips),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"drivebench-uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"uvicorn failed to start on {host}:{port}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError(f"uvicorn did not start on {host}:{port} within 30 s")
        time.sleep(0.02)
    return RunningServer(server, thread, host, port)


def proxy_options(forwarded_allow_ips: str | None) -> dict[str, Any]:
    """uvicorn's proxy-header support: ``X-Forwarded-Proto`` / ``X-Forwarded-For`` are believed only from these
    comma-separated addresses or networks (``*``: any), which makes a request through a TLS proxy ``https``
    (the console's cookie is then ``Secure``) and names the real client (the sign-in rate limit). None: uvicorn's
    default, ``$FORWARDED_ALLOW_IPS`` or the loopback addresses."""
    if forwarded_allow_ips is None:
        return {"proxy_headers": True}
    return {"proxy_headers": True, "forwarded_allow_ips": forwarded_allow_ips}


class _ShutdownHookServer(uvicorn.Server):
    """Runs ``on_shutdown`` once the server has drained, before uvicorn re-raises SIGTERM/SIGINT (it
    does, after a graceful shutdown, so code after ``run()`` would never run on a signal)."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_shutdown = on_shutdown

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        if self._on_shutdown is not None:
            self._on_shutdown()


def serve_forever(
    sim: Simulator,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_shutdown: Callable[[], None] | None = None,
    access_log: bool = True,
    forwarded_allow_ips: str | None = None,
) -> None:
    """Serve in the foreground; ``on_shutdown`` (e.g. ``sim.close``: final index snapshot) runs after a
    graceful stop, including one by SIGTERM or Ctrl-C. ``access_log``: uvicorn's line per request on stdout
    (measured +0.16-0.22 ms per request at one in flight; ``serve --no-access-log``). ``forwarded_allow_ips``:
    ``proxy_options``."""
    limit_search_threads()
    config = uvicorn.Config(
        create_app(sim),
        host=host,
        port=port,
        log_level="info",
        access_log=access_log,
        **proxy_options(forwarded_allow_ips),
    )
    _ShutdownHookServer(config, on_shutdown).run()


# ---------------------------------------------------------------------------------------- several worker processes
# ``drivebench serve --workers N`` (N > 1): N uvicorn worker processes on one listening socket, each with its own
# simulator loaded from the same corpus, configuration, faults and token secret. Python runs one thread at a
# time per process, so one process cannot use two cores for recall (measured in benchmarks/bench_workers.py);
# several processes can. Their states are copies, so a write in one would be invisible to the others and lost
# at exit: N > 1 serves read-only replicas. Recall, answer and every GET answer as a single process would;
# writes (files, permissions, the /_sim control plane, fault changes) answer 409 ``read-only-replica``, and so
# do the MCP endpoint and the web console, whose sessions live in one process's memory. The durable data
# directory is single-writer (locked by one process) and milvus-lite is one file: both need --workers 1, except
# with a Milvus server: replicas of a data directory (ReplicaSpec.data_dir) follow its writer, catching up before
# every request (persistence.follower, FollowingReplica) and sharing its collection without writing it.
REPLICA_ENV = "DRIVEBENCH_REPLICA"  # the JSON spec each worker process loads its simulator from
REPLICA_READS = frozenset({("POST", "/api/mcp/recall"), ("POST", "/api/mcp/answer")})  # POSTs that only read
SINGLE_PROCESS_PREFIXES = ("/mcp", "/ui")  # in-memory sessions: one process only
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class ReplicaSpec:
    """What every worker process loads: a corpus (name or directory) and the ``serve`` options."""

    corpus: str
    pipeline: str
    embedder: str
    extract: list[str]
    index: str = "faiss"
    faults: list[str] = field(default_factory=list)
    secret_file: str | None = None  # None: $DRIVEBENCH_TOKEN_SECRET (inherited)
    answer_levers: dict[str, Any] = field(default_factory=dict)  # SimConfig's answer_* fields
    rerank: str | None = DEFAULT_RERANK  # serve --rerank (None: no reranker)
    data_dir: str | None = None  # milvus:URI only: follow this data directory's writer (persistence.follower)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ReplicaSpec:
        return cls(**json.loads(os.environ[REPLICA_ENV]))


def replica_refusal(method: str, path: str) -> str | None:
    """Why a read-only replica refuses this request (None: it serves it)."""
    if path.startswith(SINGLE_PROCESS_PREFIXES):
        return f"{path.split('/')[1]!r} keeps sessions in one process: serve it with --workers 1"
    if method not in SAFE_METHODS and (method, path) not in REPLICA_READS:
        return "this server runs several read-only worker processes (--workers > 1); writes need --workers 1"
    return None


class ReadOnlyReplica:
    """Pure ASGI, outermost: answers 409 ``read-only-replica`` (the common error shape) to what a replica
    cannot serve (``replica_refusal``), before any route runs; everything else passes through untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            reason = replica_refusal(scope["method"], scope["path"])
            if reason is not None:
                body = {"error": {"code": "read-only-replica", "message": reason, "fields": []}}
                await JSONResponse(body, status_code=409)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class FollowingReplica:
    """Pure ASGI, inside ``ReadOnlyReplica``: before each request, catch up with the data directory's writer
    (``Follower.catch_up``). When that fails the request answers 503 ``replica-behind`` and nothing runs: a
    replica never answers from a permission state older than what the writer had committed."""

    def __init__(self, app: Any, follower: Any) -> None:
        self.app = app
        self.follower = follower

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            import anyio

            try:
                await anyio.to_thread.run_sync(self.follower.enter)
            except Exception as exc:
                body = {"error": {"code": "replica-behind", "message": str(exc), "fields": []}}
                await JSONResponse(body, status_code=503)(scope, receive, send)
                return
            try:
                await self.app(scope, receive, send)
            finally:  # a catch-up swaps the state only when no request runs on it
                self.follower.leave()
            return
        await self.app(scope, receive, send)


def load_replica(spec: ReplicaSpec) -> Simulator:
    """One worker's simulator, exactly as ``serve`` loads it (same corpus, options, faults and secret)."""
    from drivebench.drive.tokens import read_secret_file, resolve_secret
    from drivebench.extract import ExtractConfig
    from drivebench.simulator.backend import SimConfig
    from drivebench.simulator.faults import parse_fault_specs
    from drivebench.simulator.loader import load_simulator

    config = SimConfig(
        pipeline=spec.pipeline,
        embedder=spec.embedder,
        extract=ExtractConfig.from_pairs(spec.extract),
        vector_store=spec.index,
        **spec.answer_levers,
        rerank=spec.rerank,
    )
    if spec.data_dir is not None:  # follows the writer of that directory (its corpus, not spec.corpus)
        from drivebench.simulator.persistence.follower import Follower

        follower = Follower(Path(spec.data_dir), config)
        sim = follower.open()
        sim.follower = follower  # type: ignore[attr-defined]  # the replica's follower rides on the simulator it opened
    else:
        sim = load_simulator(spec.corpus, config=config)
    secret = read_secret_file(Path(spec.secret_file)) if spec.secret_file else resolve_secret(generate=False).secret
    sim.use_token_secret(secret)
    if spec.faults:
        sim.faults.replace(parse_fault_specs(spec.faults))
    return sim


def replica_app() -> Any:
    """The app factory each worker process runs (uvicorn ``--factory``): its own simulator, read-only."""
    limit_search_threads()
    sim = load_replica(ReplicaSpec.from_env())
    follower = getattr(sim, "follower", None)
    inner = create_app(sim) if follower is None else FollowingReplica(create_app(sim), follower)
    app = ReadOnlyReplica(inner)
    print(f"{READY_LINE}: pid {os.getpid()}, {sim.drive.name}, {sim.store.n_alive} chunks", file=sys.stderr, flush=True)
    return app


def serve_replicas(
    spec: ReplicaSpec,
    host: str,
    port: int,
    workers: int,
    log_level: str = "info",
    access_log: bool = True,
    forwarded_allow_ips: str | None = None,
) -> None:
    """Serve ``workers`` read-only replica processes on ``host:port`` (uvicorn's supervisor restarts a dead one)."""
    if workers < 2:
        raise ValueError("serve_replicas needs at least 2 workers; one process serves with serve_forever")
    os.environ[REPLICA_ENV] = spec.to_env()  # the spawned workers inherit it
    # the processes share the cores: each one's query encoder gets its share of threads (unless set)
    os.environ.setdefault(EMBED_THREADS_ENV, str(max(1, (os.cpu_count() or 1) // workers)))
    from uvicorn.supervisors import Multiprocess

    # what uvicorn.run does for workers > 1, with a listening socket that says it is TCP (_TcpSocketConfig)
    config = _TcpSocketConfig(
        "drivebench.server.process:replica_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        access_log=access_log,
        **proxy_options(forwarded_allow_ips),
    )
    with contextlib.suppress(KeyboardInterrupt):
        Multiprocess(config, sockets=[config.bind_socket()]).run()


class _TcpSocketConfig(uvicorn.Config):
    """uvicorn binds the workers' shared socket as ``socket.socket(family)``, protocol 0; the sockets it accepts
    inherit protocol 0, and asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP. Without it,
    Nagle's algorithm holds back the second write of a response until the client's delayed ACK: every
    keep-alive request took ~45 ms with 2 workers (13 ms for the first). The same socket, labelled TCP, fixes it."""

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto == 0:
            return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
        return sock


READY_LINE = "drivebench replica ready"  # printed to stderr by each worker once its simulator is loaded


def start_replicas(
    spec: ReplicaSpec, workers: int, host: str = "127.0.0.1", timeout: float = 900.0, access_log: bool = True
) -> tuple[Any, str]:
    """Start ``drivebench serve --workers N`` as a child process (benchmarks, tests); returns (process, url)
    once every worker has loaded and the server answers ``/healthz``. Stop it with ``process.terminate()``.
    ``spec.data_dir``: the replicas follow that directory's writer."""
    import sys

    port = free_port(host)
    args = [sys.executable, "-m", "drivebench", "serve", "--corpus", spec.corpus, "--host", host, "--port", str(port)]
    args += ["--pipeline", spec.pipeline, "--embedder", spec.embedder, "--index", spec.index]
    args += ["--workers", str(workers), "--access-log" if access_log else "--no-access-log"]
    for e in spec.extract:
        args += ["--extract", e]
    for f in spec.faults:
        args += ["--fault", f]
    args += ["--rerank", spec.rerank or "none"]
    if spec.data_dir is not None:
        args += ["--data-dir", spec.data_dir]
    url = f"http://{host}:{port}"
    # one worker: the plain single-process server, which prints no ready line
    return spawn_server(
        args, url, f"serve --workers {workers}", timeout, ready_lines=workers if workers > 1 else 0
    ), url


def spawn_server(args: list[str], url: str, what: str, timeout: float, ready_lines: int = 0) -> Any:
    """Run ``args`` (a server) as a child process; return it once it has printed ``ready_lines`` lines with
    ``READY_LINE`` on stderr and ``url/healthz`` answers 200. Raises with the last lines of its stderr when it
    exits first, and stops it when it is not up within ``timeout`` seconds."""
    import subprocess

    import httpx

    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready: list[str] = []
    tail: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            (ready if READY_LINE in line else tail).append(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}: {''.join(tail[-20:])}")
        if time.monotonic() > deadline:
            proc.terminate()
            raise TimeoutError(f"{what} did not start within {timeout} s")
        if len(ready) >= ready_lines:
            try:
                if httpx.get(url + "/healthz", timeout=10).status_code == 200:
                    return proc
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
