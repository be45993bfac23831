"""A Milvus standalone server for ``serve --index milvus:URI`` without Docker: ``drivebench milvus-server``.

The PyPI package ``milvus`` (2.3.5, the extra ``milvus-server``) ships the real Milvus standalone binary and its
libraries (compressed). Its own wrapper (``milvus-server``) moves a busy port to another one silently and waits
for ever when the binary dies at start, so this module drives the binary itself and keeps only the package's
config template and unpacking:

* every port is pinned (``PORT_OFFSETS`` from ``--port``), checked free on every interface before the start:
  a busy one is an error that names it, never a silent move;
* readiness is polled on the child itself: ``/healthz`` on its metrics port and a TCP connect to the proxy, and
  a child that exits while starting is an error at once with the end of its log (never a hang);
* the child gets ``PR_SET_PDEATHSIG`` (SIGKILL): it never outlives the process that started it.

Milvus binds its nine ports on every interface (the components' ``ip`` setting does not change that). To keep it
off the network, ``netns=True`` (``--netns``, the default where it is possible: root with ``unshare -n``, or any
user with ``unshare -rn`` where unprivileged user namespaces are allowed) runs it in a network namespace of its
own with only a loopback; an inner relay carries its proxy port to a unix socket and this process listens on
``HOST:PORT`` (``--host``, default 127.0.0.1) only and relays to that socket (gRPC is one byte stream per
connection: the relay copies bytes and understands nothing).

Authentication is always on (``common.security.authorizationEnabled``): a call without the credential is
refused. Milvus 2.3.5 starts with the user ``root`` and the password ``Milvus``; before the server is offered to
anyone (in a namespace: before the relay exists) the password is changed to a random one, written as
``root:PASSWORD`` to the token file (``<data>/milvus-token`` or ``--token-file``, mode 0600). Drivebench's client
reads it from ``DRIVEBENCH_MILVUS_TOKEN_FILE`` (or the token itself from ``DRIVEBENCH_MILVUS_TOKEN``). A data
directory started again keeps its token file and its password.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from drivebench.errors import DrivebenchError

DEFAULT_PORT = 19530
# Each component's port, pinned relative to the proxy's (the one clients use). The metrics port serves /healthz.
PORT_OFFSETS = {
    "proxy_port": 0,
    "proxy_internal_port": 1,
    "root_coord_port": 2,
    "query_coord_port": 3,
    "query_node_port": 4,
    "index_coord_port": 5,
    "index_node_port": 6,
    "data_coord_port": 7,
    "data_node_port": 8,
    "etcd_port": 9,  # the embedded etcd's client port (its own config file: ETCD_CONFIG)
    "metrics_port": 10,
    "etcd_peer_port": 11,
}
# Without a config file of its own the embedded etcd listens on 2379 and 2380 whatever etcd.endpoints says: two
# servers on one machine would collide there. Its ports are pinned like the others, on the loopback.
ETCD_CONFIG = """name: default
listen-client-urls: http://127.0.0.1:{client}
advertise-client-urls: http://127.0.0.1:{client}
listen-peer-urls: http://127.0.0.1:{peer}
initial-advertise-peer-urls: http://127.0.0.1:{peer}
initial-cluster: default=http://127.0.0.1:{peer}
"""
INNER_PORT = 19530  # inside a network namespace of its own every port is free
READY = "ready: "
START_TIMEOUT_S = 120.0
ALL_INTERFACES_WARNING = (
    "without --netns Milvus listens on every interface (its nine ports), whatever its components' ip setting "
    "says: its proxy asks for the credential, its internal component ports do not. To keep it on this machine "
    "only, run it in a network namespace of its own (`drivebench milvus-server`, the default where unshare works)."
)
PKG_HINT = "pip install 'drivebench[milvus-server]' (the package milvus==2.3.5; make installs it)"
TOKEN_NAME = "milvus-token"  # root:PASSWORD, mode 0600, in the data directory unless --token-file says where
DEFAULT_ROOT = ("root", "Milvus")  # what Milvus 2.3.5 starts with: changed before anyone else can connect


class MilvusServerError(DrivebenchError):
    """The Milvus server could not be started (missing package, busy port, a child that died or never got ready)."""


def ports_for(base: int) -> dict[str, int]:
    if not 1 <= base <= 65535 - max(PORT_OFFSETS.values()):
        raise MilvusServerError(f"--port {base}: Milvus needs {base}..{base + max(PORT_OFFSETS.values())} as ports")
    return {key: base + off for key, off in PORT_OFFSETS.items()}


def check_ports_free(ports: dict[str, int]) -> None:
    """Every port bindable on every interface (where Milvus binds them); a busy one is an error naming it."""
    for key, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("0.0.0.0", port))
            except OSError as exc:
                raise MilvusServerError(
                    f"port {port} ({key.removesuffix('_port').replace('_', ' ')}) is in use: Milvus needs "
                    f"{min(ports.values())}..{max(ports.values())}",
                    hint="pass another --port, or stop what listens there "
                    f"(`ss -ltnp 'sport = :{port}'` shows it): {exc.strerror}",
                ) from None


def free_base(start: int = 20000, stop: int = 60000) -> int:
    """A base port whose twelve ports are all free (tests on a machine without a private namespace)."""
    for base in range(start, stop, 16):
        try:
            check_ports_free(ports_for(base))
        except MilvusServerError:
            continue
        return base
    raise MilvusServerError(f"no twelve free ports in {start}..{stop}")


def _package() -> object:
    try:
        import milvus
    except ImportError:
        raise MilvusServerError("the Milvus server package is not installed", hint=PKG_HINT) from None
    return milvus


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """preexec_fn: the child gets ``sig`` when the process that started it dies (``PR_SET_PDEATHSIG``)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig))


_die_with_parent = die_with_parent


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


@dataclass
class MilvusProcess:
    """A running Milvus standalone binary (or, with ``netns``, the namespace's inner process that runs it)."""

    proc: subprocess.Popen[bytes]
    data_dir: Path
    created_dir: bool
    port: int  # what clients connect to on 127.0.0.1
    log: Path
    relay: TcpRelay | None = None
    started_s: float = 0.0
    token_file: Path | None = None  # root:PASSWORD (secure_root)
    _stopped: bool = field(default=False, repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout``; removes the data directory when this module created it (and
        then kills at once: a graceful stop would only flush data about to be deleted)."""
        if self._stopped:
            return
        self._stopped = True
        if self.relay is not None:
            self.relay.close()
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL if self.created_dir else signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        with contextlib.suppress(ProcessLookupError):  # anything the binary left in its group
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.created_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def _write_config(data_dir: Path, ports: dict[str, int]) -> tuple[Path, dict[str, str]]:
    """Unpack the binary into ``data_dir/bin`` and write ``data_dir/configs/milvus.yaml`` with pinned ports;
    returns the executable and its environment."""
    milvus = _package()
    config = milvus.MilvusServerConfig(data_dir=str(data_dir))  # type: ignore[attr-defined]  # the milvus package, imported by name: a bare module
    for key, port in ports.items():
        if key not in ("metrics_port", "etcd_peer_port"):
            config.set(key, int(port))
    config.set("authorization_enabled", True)  # every call needs the credential (secure_root sets it)
    config.resolve_storage()
    milvus._initialize_data_files(config.base_data_dir)  # type: ignore[attr-defined]  # unpacks bin/ (md5-cached)
    config.write_config()
    etcd = data_dir / "configs" / "etcd.yaml"
    etcd.write_text(ETCD_CONFIG.format(client=ports["etcd_port"], peer=ports["etcd_peer_port"]), encoding="utf-8")
    yaml = data_dir / "configs" / "milvus.yaml"
    text = yaml.read_text(encoding="utf-8")
    text = text.replace("\netcd:\n", f"\netcd:\n  config:\n    path: {etcd}\n", 1)  # the template has no such key
    yaml.write_text(text, encoding="utf-8")
    exe = data_dir / "bin" / "milvus"
    env = dict(os.environ)
    env.update(
        DEPLOY_MODE="STANDALONE",
        METRICS_PORT=str(ports["metrics_port"]),
        MILVUS_RUN_DIR=str(data_dir / "run"),
        LD_LIBRARY_PATH=":".join(p for p in (str(exe.parent), os.environ.get("LD_LIBRARY_PATH", "")) if p),
    )
    return exe, env


def _healthy(ports: dict[str, int]) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ports['metrics_port']}/healthz", timeout=2) as resp:
            if b"OK" not in resp.read():
                return False
        with socket.create_connection(("127.0.0.1", ports["proxy_port"]), timeout=2):
            return True
    except OSError:
        return False


def _wait_ready(proc: subprocess.Popen[bytes], ready: Callable[[], bool], log: Path, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise MilvusServerError(f"{what} exited with code {code} while starting; its log ends:\n{_log_tail(log)}")
        if ready():
            return
        time.sleep(0.2)
    raise MilvusServerError(f"{what} was not ready after {timeout:.0f} s; its log ends:\n{_log_tail(log)}")


def write_token(path: Path, token: str) -> None:
    """``token`` into ``path``, readable by its owner only from the first byte (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    os.replace(tmp, path)


def secure_root(uri: str, token_file: Path, timeout: float = 30.0) -> None:
    """Give ``root`` a random password, written to ``token_file`` (0600) first; a token file that exists (a data
    directory started again) is kept and checked."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise MilvusServerError(
            "changing Milvus's root password needs pymilvus", hint="pip install 'drivebench[milvus]'"
        ) from None
    if token_file.exists():
        token = token_file.read_text(encoding="utf-8").strip()
        try:
            MilvusClient(uri, token=token, timeout=timeout).list_collections(timeout=timeout)
        except Exception as exc:
            raise MilvusServerError(
                f"the credential in {token_file} is refused by this Milvus: {type(exc).__name__}",
                hint="start it on the data directory that token file belongs to, or remove both",
            ) from None
        return
    user, default = DEFAULT_ROOT
    password = secrets.token_urlsafe(24)
    write_token(token_file, f"{user}:{password}")  # first: a crash after the change still leaves the password
    try:
        client = MilvusClient(uri, token=f"{user}:{default}", timeout=timeout)
        client.update_password(user, default, password, timeout=timeout)
        client.close()
    except Exception as exc:
        token_file.unlink(missing_ok=True)
        raise MilvusServerError(f"could not set Milvus's root password: {exc}") from None


def start_binary(
    data_dir: Path | None,
    port: int = DEFAULT_PORT,
    timeout: float = START_TIMEOUT_S,
    token_file: Path | None = None,
) -> MilvusProcess:
    """Run the Milvus binary with every port pinned from ``port`` and authentication on; returns once it is
    healthy and ``root`` has the password of ``token_file`` (default ``<data>/milvus-token``)."""
    started = time.monotonic()
    ports = ports_for(port)
    check_ports_free(ports)
    created = data_dir is None
    root = Path(tempfile.mkdtemp(prefix="drivebench-milvus-server-")) if data_dir is None else Path(data_dir)
    root = root.resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
        exe, env = _write_config(root, ports)
        log = root / "logs" / "milvus-stdout.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [str(exe), "run", "standalone"],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stop() signals everything it started
                preexec_fn=_die_with_parent,
            )
        server = MilvusProcess(proc, root, created, port, log)
        server.token_file = token_file or root / TOKEN_NAME
        try:
            _wait_ready(proc, lambda: _healthy(ports), log, timeout, "milvus")
            secure_root(server.uri, server.token_file)
        except BaseException:
            server.stop(timeout=5)
            raise
    except BaseException:
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    server.started_s = time.monotonic() - started
    return server


# ---------------------------------------------------------------------------------------------------- netns
class TcpRelay:
    """Relay every connection accepted on ``listener`` to a new connection made by ``connect()``, in threads."""

    def __init__(self, listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
        self.listener = listener
        self.connect = connect
        self._closed = False
        self.thread = threading.Thread(target=self._accept, name="milvus-relay", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = self.connect()
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.listener.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(1 << 16):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            src.close()


def _loopback_up() -> None:
    """``ip link set lo up`` without the ip command (a new network namespace starts with lo down)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), siocgifflags, req))[1]
        fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


def _unshare_cmd() -> list[str] | None:
    """``unshare -n`` as root, ``unshare -rn`` (a user namespace too) for anyone else where that is allowed;
    None where neither works."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return None
    if os.geteuid() == 0:
        return ["unshare", "-n"]
    try:
        probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return ["unshare", "-rn"] if probe.returncode == 0 else None


def can_use_netns() -> bool:
    return _unshare_cmd() is not None


def start_in_netns(
    data_dir: Path | None,
    port: int = DEFAULT_PORT,
    timeout: float = START_TIMEOUT_S,
    host: str = "127.0.0.1",
    token_file: Path | None = None,
) -> MilvusProcess:
    """Milvus in a network namespace of its own (``unshare -n``), reachable only through ``host:port`` here
    (``port`` 0: a free one), once ``root`` has the password of ``token_file`` (default ``<data>/milvus-token``)."""
    unshare = _unshare_cmd()
    if unshare is None:
        raise MilvusServerError(
            "--netns needs unshare (util-linux) on Linux, as root or with unprivileged user namespaces allowed",
            hint=ALL_INTERFACES_WARNING,
        )
    _package()
    started = time.monotonic()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise MilvusServerError(
            f"port {port} on {host} is in use: {exc.strerror}", hint="pass another --port"
        ) from None
    listener.listen(64)
    created = data_dir is None
    root = Path(tempfile.mkdtemp(prefix="drivebench-milvus-server-")) if data_dir is None else Path(data_dir)
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    sock_path = root / "proxy.sock"
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()
    (root / "logs").mkdir(exist_ok=True)
    log = root / "logs" / "netns.log"
    token_file = (token_file or root / TOKEN_NAME).resolve()
    cmd = [*unshare, sys.executable, "-m", "drivebench.server.milvus_server", "--inner", str(root), str(token_file)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    server = MilvusProcess(proc, root, created, listener.getsockname()[1], log, token_file=token_file)
    try:
        _wait_ready(proc, sock_path.exists, log, timeout, "milvus (in its network namespace)")
    except BaseException:
        listener.close()
        server.stop(timeout=5)
        raise

    def connect() -> socket.socket:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(str(sock_path))
        return upstream

    server.relay = TcpRelay(listener, connect)
    server.started_s = time.monotonic() - started
    return server


def _inner(root: Path, token_file: Path) -> None:
    """Inside the new namespace: loopback up, the binary on INNER_PORT with root's password set (before anything
    outside can reach it), then relay ``root/proxy.sock`` to it."""
    _loopback_up()
    stop, started = threading.Event(), threading.Event()

    def on_term(*_: object) -> None:  # once started it only flags: stopping here would race the loop below
        stop.set()
        if not started.is_set():
            raise SystemExit(0)  # start_binary stops the child on the way out

    signal.signal(signal.SIGTERM, on_term)
    server = start_binary(root, INNER_PORT, token_file=token_file)
    started.set()
    sock_path = root / "proxy.sock.tmp"
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock_path))
    listener.listen(64)
    relay = TcpRelay(listener, lambda: socket.create_connection(("127.0.0.1", INNER_PORT), timeout=None))
    os.replace(sock_path, root / "proxy.sock")  # the outer process waits for this name: ready
    print(f"milvus ready in its network namespace ({server.started_s:.1f} s)", flush=True)
    while not stop.wait(0.2) and server.alive():
        pass
    relay.close()
    code = server.proc.poll()
    server.stop()
    if stop.is_set():
        sys.exit(0)
    print(f"milvus exited with code {code}", flush=True)
    sys.exit(1)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--inner":
    _inner(Path(sys.argv[2]), Path(sys.argv[3]))
