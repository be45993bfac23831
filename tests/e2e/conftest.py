"""Fixtures shared by the end-to-end tests: the vendor-style recall API (``tests.support.vendor_server``) behind a
real uvicorn server, in front of the session simulator, one per module."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from drivebench.server.process import free_port
from drivebench.simulator.backend import Simulator
from tests.support.vendor_server import vendor_app


@pytest.fixture(scope="module")
def vendor_url(drivebench_simulator: Simulator) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(vendor_app(drivebench_simulator), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "vendor server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
