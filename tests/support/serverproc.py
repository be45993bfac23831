"""A real ``drivebench serve --data-dir`` subprocess, for the restart, crash and concurrency tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from drivebench.drive.tokens import ADMIN_SERVICE, make_token, resolve_secret
from drivebench.server.process import free_port

DRIVEBENCH = Path(sys.executable).with_name("drivebench")


class ServerProc:
    """``drivebench serve --corpus seed --data-dir DIR --embedder hash`` (the documented test backend:
    real FAISS, real Casbin, real uvicorn; feature hashing instead of the model, to start fast)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        corpus: str = "seed",
        pipeline: str = "hybrid",
        log: Path | None = None,
        index: str = "faiss",  # --index faiss | milvus | milvus:URI
    ):
        self.data_dir = Path(data_dir)
        self.corpus = corpus
        self.pipeline = pipeline
        self.index = index
        self.log_path = log or self.data_dir.parent / f"{self.data_dir.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def token(self, subject: str) -> str:
        """The server's token for ``subject``: ``serve --data-dir`` keeps its random secret in the data dir."""
        secret = resolve_secret(self.data_dir, generate=False).secret
        return make_token(self.corpus, ADMIN_SERVICE if subject == "admin" else subject, secret)

    def headers(self, subject: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(subject)}"}

    def start(self, timeout: float = 90.0, env: dict[str, str] | None = None) -> float:
        """Start and wait until /healthz answers; returns the seconds it took."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.port = free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})}
        cmd = [str(DRIVEBENCH), "serve", "--corpus", self.corpus, "--data-dir", str(self.data_dir)]
        cmd += ["--embedder", "hash", "--pipeline", self.pipeline, "--port", str(self.port), "--index", self.index]
        log = self.log_path.open("ab")
        started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        deadline = started + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    self.starts += 1
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.kill()
        raise TimeoutError(f"server did not start within {timeout} s; see {self.log_path}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        """SIGTERM: uvicorn shuts down gracefully and the final index snapshot is written."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()

    def fd_count(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def thread_count(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/task"))

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def get(self, path: str, subject: str = "admin", **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, headers=self.headers(subject), timeout=60, **kw)

    def post(self, path: str, subject: str = "admin", **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, headers=self.headers(subject), timeout=60, **kw)
