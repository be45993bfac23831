"""Checks a command makes before its slow part, so a mistake is reported at once."""

from __future__ import annotations

import difflib
import errno
import socket
from pathlib import Path
from urllib.parse import urlsplit

from drivebench.errors import DrivebenchError

URL_SCHEMES = ("http", "https")  # what the HTTP and MCP targets speak


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


def check_url(url: str, what: str = "--target") -> None:
    """Raise a DrivebenchError (exit 2) unless ``url`` is ``http(s)://HOST[...]``: a mistyped scheme is a usage
    error named as such, never a connection failure ("is the server running?") found by the preflight."""
    accepted = ", ".join(URL_SCHEMES)
    parts = urlsplit(url.strip())
    if "://" not in url:
        raise DrivebenchError(
            f"{what} {url!r} is not a URL: it has no scheme (accepted: {accepted})",
            hint=f"write the scheme, e.g. http://{url.strip().lstrip('/')}",
        )
    scheme = parts.scheme.lower()
    if scheme not in URL_SCHEMES:
        close = difflib.get_close_matches(scheme, URL_SCHEMES, n=1, cutoff=0.6)
        rest = url.strip()[len(parts.scheme) + 3 :]
        raise DrivebenchError(
            f"{what} {url!r}: unsupported URL scheme {parts.scheme + '://'!r} (accepted: {accepted})",
            hint=f"did you mean {close[0]}://{rest}?" if close else f"use {accepted}, e.g. http://127.0.0.1:8000",
        )
    if not parts.hostname:
        raise DrivebenchError(f"{what} {url!r} names no host", hint="e.g. http://127.0.0.1:8000")


def check_served_corpus(url: str, token: str | None, corpus: str) -> None:
    """Raise a DrivebenchError (exit 2) when the target says which corpus it serves and ``--corpus`` names
    another built-in corpus or version. Asked of a URL at the simulator's recall or MCP path only (the token
    goes to no other path); quiet when ``corpus`` is a directory or the target does not say (the simulator says
    so on /healthz, to the admin token)."""
    from drivebench.corpora.builtin import is_builtin, is_corpus_dir, lookup_builtin
    from drivebench.evaluator.preflight import served_corpus
    from drivebench.evaluator.targets.profile import SIMULATOR_RECALL_PATH

    if urlsplit(url).path.rstrip("/") not in (SIMULATOR_RECALL_PATH, "/mcp"):
        return
    if is_corpus_dir(Path(corpus)) or not is_builtin(corpus):
        return
    named = lookup_builtin(corpus).label
    served = served_corpus(url, token)
    if served is None:
        return
    # a name with its version must be the same version; a bare name (the simulator's) the same corpus
    same = served == named if "@" in served else served == named.partition("@")[0]
    if not same:
        raise DrivebenchError(
            f"the target serves corpus {served}, but --corpus names {named}",
            hint=f"give --corpus {served} (the oracle must be the corpus the target serves), or point --target at "
            f"a server of {named} (`drivebench serve --corpus {named}`)",
        )
