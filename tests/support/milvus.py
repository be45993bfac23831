"""Helpers for the vector-store tests: backend parametrisation, the session's Milvus server, and tie-aware
ranking equality.

Every permission/version/durability test runs against three backends: FAISS, milvus-lite, and a real Milvus
server (``milvus-server``, marker ``milvus_server``). The server is one for the whole test session, started
before collection by ``start_session_server`` (tests/conftest.py ``pytest_configure``, in the xdist controller
only: the workers inherit its address in ``DRIVEBENCH_MILVUS_URI``) with ``drivebench milvus-server``; as root
it runs in a network namespace of its own (``--netns``), otherwise on a free set of ports checked on every
interface. Each worker's collections are its own (they carry the worker's pid). ``DRIVEBENCH_MILVUS_URI`` set
before the run names an existing server instead. A server that is missing or never got ready fails the tests
that need it, loudly: that parameter is never skipped."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from drivebench.search.index.chunk_store import ChunkHit
from drivebench.search.index.milvus_store import TOKEN_FILE_ENV

URI_ENV = "DRIVEBENCH_MILVUS_URI"  # an existing server (http://host:port), or the one this session started
LOG_ENV = "DRIVEBENCH_MILVUS_TEST_LOG"  # the session server's output (its "ready: URI" line)
PID_ENV = "DRIVEBENCH_MILVUS_TEST_PID"
SWITCH_ENV = "DRIVEBENCH_MILVUS_SERVER"  # 0: start no server (make test-fast: its tests are all deselected)
SERVER = "milvus-server"  # the parameter value of the server backend; index_spec turns it into milvus:URI
BACKENDS = ["faiss", "milvus", pytest.param(SERVER, marks=pytest.mark.milvus_server)]
backend_params = pytest.mark.parametrize("index", BACKENDS)
READY_TIMEOUT_S = 180.0

TOL = 1e-5  # FAISS and Milvus sum the same float32 products in different orders


def kind(index: str) -> str:
    """``faiss`` or ``milvus`` (what ``/_sim/stats``' ``index_backend.backend`` says) for a parameter value."""
    return "faiss" if index == "faiss" else "milvus"


def index_spec(index: str) -> str:
    """The ``--index`` value of a parameter: ``milvus-server`` becomes ``milvus:URI`` of the session server."""
    return f"milvus:{server_uri()}" if index == SERVER else index


def _log_tail(path: str) -> str:
    try:
        return "\n".join(Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[-20:])
    except OSError:
        return "(no log)"


def server_uri() -> str:
    """The session's Milvus server, once ready; a test that needs it fails (never skips) when it is not."""
    uri = os.environ.get(URI_ENV, "").strip()
    if not uri:
        pytest.fail(
            f"no Milvus server for the milvus-server parameter: {SWITCH_ENV}=0 or the server did not start "
            "(tests/conftest.py starts one with `drivebench milvus-server`; needs pip install 'drivebench[milvus-server]')"
        )
    log, pid = os.environ.get(LOG_ENV), int(os.environ.get(PID_ENV) or 0)
    if log is None:  # a server named by the caller: it is expected to be up
        return uri
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if f"ready: {uri}" in Path(log).read_text(encoding="utf-8", errors="replace"):
            return uri
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            pytest.fail(f"the session's Milvus server exited while starting; its output:\n{_log_tail(log)}")
        time.sleep(0.25)
    pytest.fail(f"the session's Milvus server was not ready after {READY_TIMEOUT_S:.0f} s:\n{_log_tail(log)}")


def _needs_server(args: Sequence[str], rootdir: Path) -> bool:
    """Whether the paths pytest was given hold a test module that uses this parametrisation."""
    needle = "tests.support.milvus import"
    users = re.compile(r"\b(BACKENDS|backend_params|server_uri|index_spec|Outage)\b")  # what needs the server
    for arg in args or [str(rootdir / "tests")]:
        path = Path(arg.split("::", 1)[0])
        path = path if path.is_absolute() else Path.cwd() / path
        files = [path] if path.is_file() else sorted(path.rglob("test_*.py")) if path.is_dir() else []
        for f in files:
            try:
                text = f.read_text(encoding="utf-8")
            except OSError:
                continue
            if needle in text and users.search(text):
                return True
    return False


def _marks_select_it(markexpr: str) -> bool:
    """Whether ``-m markexpr`` keeps a test of this parameter (marked milvus_server and slow, maybe e2e)."""
    if not markexpr.strip():
        return True
    from _pytest.mark.expression import Expression

    expr = Expression.compile(markexpr)
    return any(
        expr.evaluate(lambda name, m=marks: name in m)
        for marks in ({"milvus_server", "slow"}, {"milvus_server", "slow", "e2e"})
    )


class SessionServer:
    """The ``drivebench milvus-server`` child of the xdist controller (or of the single pytest process)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: Path | None = None
        self.token_file: Path | None = None

    def start(self, config: pytest.Config) -> None:
        if os.environ.get(URI_ENV, "").strip() or os.environ.get(SWITCH_ENV) == "0":
            return
        if hasattr(config, "workerinput"):  # an xdist worker: the controller started it
            return
        if not _marks_select_it(config.option.markexpr or "") or not _needs_server(config.args, config.rootpath):
            return  # nothing collected will use it (e.g. -m "not slow": its tests are all slow)
        from drivebench.server.milvus_server import can_use_netns, die_with_parent, free_base
        from drivebench.server.process import free_port

        netns = can_use_netns()
        port = free_port() if netns else free_base()
        fd, log = tempfile.mkstemp(prefix="drivebench-test-milvus-", suffix=".log")
        os.close(fd)
        self.log = Path(log)
        self.token_file = Path(tempfile.mkdtemp(prefix="drivebench-test-milvus-")) / "milvus-token"
        cmd = [sys.executable, "-m", "drivebench", "--quiet", "milvus-server", "--port", str(port)]
        cmd += ["--netns" if netns else "--no-netns", "--token-file", str(self.token_file)]
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(  # SIGTERM if pytest dies: the command still stops Milvus and cleans up
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=lambda: die_with_parent(signal.SIGTERM),
            )
        os.environ[URI_ENV] = f"http://127.0.0.1:{port}"
        os.environ[TOKEN_FILE_ENV] = str(self.token_file)  # authentication is on: every client reads it
        os.environ[LOG_ENV] = log
        os.environ[PID_ENV] = str(self.proc.pid)

    def stop(self) -> None:
        if self.proc is None:
            return
        from drivebench.search.index.milvus_store import release_all

        release_all()  # this process's in-memory collections, while the server still answers
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # it stops Milvus and removes its data directory
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.log is not None:
            self.log.unlink(missing_ok=True)
        if self.token_file is not None:
            shutil.rmtree(self.token_file.parent, ignore_errors=True)
        self.proc = None


def same_ranking(expected: Sequence[tuple[object, float]], got: Sequence[tuple[object, float]]) -> None:
    """``got`` is the ranking ``expected`` is, up to the order of equal scores: the same length, the same score
    at every rank, and the same items above the last score (items tied at the cut may differ: both are right)."""
    assert len(got) == len(expected), (len(got), len(expected))
    for rank, ((ei, es), (gi, gs)) in enumerate(zip(expected, got, strict=True), 1):
        assert abs(es - gs) <= TOL, (rank, ei, es, gi, gs)
    if not expected:
        return
    cut = expected[-1][1]
    above_e = sorted(str(i) for i, s in expected if s > cut + TOL)
    above_g = sorted(str(i) for i, s in got if s > cut + TOL)
    assert above_e == above_g


def pairs(hits: Sequence[ChunkHit]) -> list[tuple[int, float]]:
    return [(h.chunk_id, h.score) for h in hits]


class Outage:
    """A TCP relay in front of the session's Milvus server that a test can cut, as if the server had stopped
    (new connections refused, open ones closed), and restore on the same port. The session server keeps running
    for the other tests."""

    def __init__(self) -> None:
        upstream = server_uri().removeprefix("http://")
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.port = 0
        self.listener: socket.socket | None = None
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        self.restore()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def restore(self, *, relay: bool = True) -> None:
        """Relay to the server again (``relay=False``: accept connections and never answer, a hung server)."""
        if self.listener is not None:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener, relay), daemon=True).start()

    def hang(self) -> None:
        self.cut()
        self.restore(relay=False)

    def cut(self) -> None:
        with self.lock:
            if self.listener is not None:  # shutdown first: a close alone leaves the blocked accept listening
                with contextlib.suppress(OSError):
                    self.listener.shutdown(socket.SHUT_RDWR)
                self.listener.close()
                self.listener = None
            for s in self.open:  # reset, not closed: no socket lingers on the port restore binds again
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self.open.clear()

    def _accept(self, listener: socket.socket, relay: bool) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if not relay:
                with self.lock:
                    self.open.append(client)
                continue
            upstream = socket.create_connection(self.upstream)
            with self.lock:
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(1 << 16):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
