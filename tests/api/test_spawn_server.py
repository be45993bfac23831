"""``drivebench.server.process.spawn_server``: how benchmarks and tests start a server process and learn it failed."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from drivebench.server.process import READY_LINE, free_port, spawn_server


def test_a_server_that_exits_first_raises_with_its_stderr() -> None:
    args = [sys.executable, "-c", "import sys; sys.stderr.write('no corpus named x\\n'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match=r"exited 3: no corpus named x"):
        spawn_server(args, f"http://127.0.0.1:{free_port()}", "test server", timeout=60)


def test_a_server_that_never_answers_is_stopped_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    script = f"import sys, time; sys.stderr.write('{READY_LINE}\\n'); sys.stderr.flush(); time.sleep(600)"
    started: list[subprocess.Popen[str]] = []

    class Recording(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    with pytest.raises(TimeoutError, match=r"did not start within 1\.5 s"):
        spawn_server([sys.executable, "-c", script], f"http://127.0.0.1:{free_port()}", "mute", 1.5, ready_lines=1)
    (proc,) = started
    assert proc.wait(10) is not None  # terminated, not left running


def test_it_returns_once_healthz_answers() -> None:
    port = free_port()
    app = (
        "import uvicorn\n"
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http': return\n"
        "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': b'ok'})\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning', lifespan='off')\n"
    )
    proc = spawn_server([sys.executable, "-c", app], f"http://127.0.0.1:{port}", "bare", timeout=60)
    try:
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
