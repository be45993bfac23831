"""``drivebench serve --access-log/--no-access-log``: a line per request on stdout by
default, none with ``--no-access-log``; a real ``drivebench serve`` process either way."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from drivebench.drive.tokens import EVAL_SERVICE, SECRET_ENV, make_token
from drivebench.server.process import free_port

DRIVEBENCH = Path(sys.executable).with_name("drivebench")
SECRET = "access-log-test-secret"
ACCESS_LINE = '"POST /api/mcp/recall HTTP/1.1" 200'


def _serve_and_recall(tmp_path: Path, *flags: str) -> str:
    """Start ``drivebench serve`` (seed corpus, bm25, hash embedder), send one recall, stop it; its stdout."""
    port = free_port()
    out = tmp_path / f"serve{port}.log"
    cmd = [str(DRIVEBENCH), "serve", "--corpus", "seed", "--pipeline", "bm25", "--embedder", "hash"]
    cmd += ["--port", str(port), *flags]
    env = {**os.environ, SECRET_ENV: SECRET, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    with out.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.DEVNULL, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, out.read_text()
            assert time.monotonic() < deadline, "serve did not start"
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        token = make_token("seed", EVAL_SERVICE, SECRET.encode())
        body = {"query": "项目X的技术方案审批人", "user_role": "engineer"}
        r = httpx.post(url + "/api/mcp/recall", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert r.status_code == 200, r.text
        time.sleep(0.3)  # the log line is written after the response
    finally:
        proc.terminate()
        proc.wait(30)
    return out.read_text()


@pytest.mark.slow
def test_access_log_is_on_by_default_and_off_on_request(tmp_path: Path) -> None:
    assert ACCESS_LINE in _serve_and_recall(tmp_path)
    quiet = _serve_and_recall(tmp_path, "--no-access-log")
    assert "serving on" in quiet  # the server ran and printed
    assert "POST /api/mcp/recall" not in quiet
