"""Serve a simulator with a real uvicorn server, in the foreground or on a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn

from drivebench.simulator.api import create_app
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


def start_in_thread(sim: Simulator, host: str = "127.0.0.1", port: int | None = None) -> RunningServer:
    limit_search_threads()
    """Start uvicorn on ``host:port`` (a free port when None) in a daemon thread; returns once it listens."""
    port = port or free_port(host)
    config = uvicorn.Config(create_app(sim), host=host, port=port, log_level="warning", lifespan="on")
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
    sim: Simulator, host: str = "127.0.0.1", port: int = 8000, on_shutdown: Callable[[], None] | None = None
) -> None:
    """Serve in the foreground; ``on_shutdown`` (e.g. ``sim.close``: final index snapshot) runs after a
    graceful stop, including one by SIGTERM or Ctrl-C."""
    limit_search_threads()
    config = uvicorn.Config(create_app(sim), host=host, port=port, log_level="info")
    _ShutdownHookServer(config, on_shutdown).run()
