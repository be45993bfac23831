"""A pytest plugin: the simulator in-process, and the same simulator behind a real uvicorn server.

Installed with drivebench (entry point ``pytest11``), so any project can write::

    def test_my_rag(drivebench_server):
        url, token = drivebench_server.url, drivebench_server.sim.tokens.eval_token
        ...

Options (``pytest.ini``/``pyproject.toml`` ``[tool.pytest.ini_options]``):
``drivebench_corpus`` (default ``seed``), ``drivebench_pipeline`` (default ``hybrid``),
``drivebench_embedder`` (default ``minilm``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from drivebench.server import RunningServer, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("drivebench_corpus", "corpus for the drivebench fixtures", default="seed")
    parser.addini("drivebench_pipeline", "retrieval pipeline for the drivebench fixtures", default="hybrid")
    parser.addini("drivebench_embedder", "embedder for the drivebench fixtures", default="minilm")


@dataclass
class ServedSimulator:
    sim: Simulator
    server: RunningServer

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="session")
def drivebench_simulator(pytestconfig: pytest.Config) -> Simulator:
    """The simulator loaded in-process (session-scoped: loading embeds the corpus once)."""
    from drivebench.api import load_simulator

    config = SimConfig(
        pipeline=str(pytestconfig.getini("drivebench_pipeline")),
        embedder=str(pytestconfig.getini("drivebench_embedder")),
    )
    return load_simulator(str(pytestconfig.getini("drivebench_corpus")), config=config)


@pytest.fixture(scope="session")
def drivebench_server(drivebench_simulator: Simulator) -> Iterator[ServedSimulator]:
    """The same simulator behind a real uvicorn server on a free local port."""
    server = start_in_thread(drivebench_simulator)
    try:
        yield ServedSimulator(drivebench_simulator, server)
    finally:
        server.stop()
