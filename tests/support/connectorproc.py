"""``drivebench connector`` as a subprocess (real uvicorn), fed from a running simulator."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx

from drivebench.server.process import free_port
from tests.support.serverproc import DRIVEBENCH


class ConnectorProc:
    def __init__(self, drive_url: str, drive_token: str, strategy: str, interval: float, log: Path) -> None:
        self.drive_url, self.drive_token, self.strategy, self.interval, self.log_path = (
            drive_url,
            drive_token,
            strategy,
            interval,
            log,
        )
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        self.port = free_port()
        cmd = [str(DRIVEBENCH), "connector", "--drive", self.drive_url, "--drive-token", self.drive_token]
        cmd += ["--port", str(self.port), "--strategy", self.strategy, "--interval", str(self.interval)]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"connector exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"connector did not start within {timeout} s; see {self.log_path}")

    def recall(self, user: str, query: str, top_k: int = 10, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token if token is not None else self.drive_token}"}
        return httpx.post(
            f"{self.url}/api/mcp/recall", json={"query": query, "user_id": user, "top_k": top_k}, headers=headers
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
