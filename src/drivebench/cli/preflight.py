"""Checks a command makes before its slow part, so a mistake is reported at once."""

from __future__ import annotations

import errno
import socket

from drivebench.errors import DrivebenchError


def ensure_port_free(host: str, port: int) -> None:
    """Raise a DrivebenchError when ``host:port`` cannot be listened on (bound the way uvicorn binds it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise DrivebenchError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="--host takes an interface address such as 127.0.0.1 (this machine only) or 0.0.0.0 (all)",
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: TIME_WAIT is not "in use"
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise DrivebenchError(
                    f"port {port} on {host} is already in use",
                    hint=f"pass another --port (or set DRIVEBENCH_SERVE_PORT), or stop what listens there "
                    f"(`ss -ltnp 'sport = :{port}'` shows it)",
                ) from None
            raise DrivebenchError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                hint="ports below 1024 need privileges; --host must be an address of this machine",
            ) from None
