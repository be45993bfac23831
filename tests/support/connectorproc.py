"""``drivebench connector`` as a subprocess (real uvicorn), fed from a running simulator."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import httpx

from drivebench.server.process import free_port
from tests.support.serverproc import DRIVEBENCH

GENERATED_TOKEN = re.compile(r"client token \(send as Bearer; --token to choose one\): (\S+)")


class ConnectorProc:
    def __init__(
        self, drive_url: str, drive_token: str, strategy: str, interval: float, log: Path, token: str | None = None
    ) -> None:
        """``token``: the client token to start it with (``--token``); None: the one it generates, read from
        what it prints at start."""
        self.drive_url, self.drive_token, self.strategy, self.interval, self.log_path = (
            drive_url,
            drive_token,
            strategy,
            interval,
            log,
        )
        self.token = token or ""
        self.given_token = token
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        self.port = free_port()
        cmd = [str(DRIVEBENCH), "connector", "--drive", self.drive_url, "--drive-token", self.drive_token]
        cmd += ["--port", str(self.port), "--strategy", self.strategy, "--interval", str(self.interval)]
        cmd += ["--token", self.given_token] if self.given_token is not None else []
        start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"connector exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    if self.given_token is None:
                        printed = GENERATED_TOKEN.findall(self.log_path.read_bytes()[start:].decode("utf-8", "replace"))
                        assert len(printed) == 1, f"no generated client token printed; see {self.log_path}"
                        self.token = printed[0]
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"connector did not start within {timeout} s; see {self.log_path}")

    def recall(self, user: str, query: str, top_k: int = 10, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token if token is not None else self.token}"}
        return httpx.post(
            f"{self.url}/api/mcp/recall", json={"query": query, "user_id": user, "top_k": top_k}, headers=headers
        )

    def health(self) -> dict:
        """``/healthz`` with the drive token: the counts (syncs, documents, errors, resyncs)."""
        r = httpx.get(f"{self.url}/healthz", headers={"Authorization": f"Bearer {self.drive_token}"}, timeout=5)
        assert r.status_code == 200, r.text
        return r.json()

    def wait_syncs(self, more: int, timeout: float = 30.0) -> dict:
        """Until ``more`` sync steps have completed after this call (a condition, not a sleep): the counts."""
        target = self.health()["syncs"] + more
        deadline = time.monotonic() + timeout
        while (health := self.health())["syncs"] < target:
            assert time.monotonic() < deadline, f"fewer than {more} syncs in {timeout} s: {health}"
            time.sleep(min(0.05, self.interval / 4))
        return health

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
