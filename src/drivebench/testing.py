"""A pytest plugin: the simulator in-process, and the same simulator behind a real uvicorn server.

Installed with drivebench (entry point ``pytest11``), so any project can write::

    def test_my_rag(drivebench_server):
        url, token = drivebench_server.url, drivebench_server.sim.tokens.eval_token
        ...

Options (``pytest.ini``/``pyproject.toml`` ``[tool.pytest.ini_options]``):
``drivebench_corpus`` (default ``seed``), ``drivebench_pipeline`` (default ``hybrid``, the best measured),
``drivebench_embedder`` (default ``e5``, multilingual), ``drivebench_faults`` (default none: a clean server;
e.g. ``leaky-acl,latency:delay_ms=20``).

Faults per test: the ``drivebench_faults`` fixture is the session simulator's ``FaultSet``; what a
test switches on is switched back to the session's faults when the test ends::

    def test_my_rag_under_leaks(drivebench_server, drivebench_faults):
        drivebench_faults.enable("leaky-acl", share=0.5)
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from drivebench.search.index.embedders import DEFAULT_EMBEDDER
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE
from drivebench.search.retrieval.rerank import DEFAULT_RERANK
from drivebench.server.process import RunningServer, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.faults import FaultSet


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("drivebench_corpus", "corpus for the drivebench fixtures", default="seed")
    parser.addini("drivebench_pipeline", "retrieval pipeline for the drivebench fixtures", default=DEFAULT_PIPELINE)
    parser.addini("drivebench_rerank", "reranker for the drivebench fixtures (none: off)", default=DEFAULT_RERANK)
    parser.addini("drivebench_embedder", "embedder for the drivebench fixtures", default=DEFAULT_EMBEDDER)
    parser.addini("drivebench_faults", "fault profiles of the drivebench simulator (NAME[:k=v][,NAME])", default="")


@dataclass
class ServedSimulator:
    sim: Simulator
    server: RunningServer

    @property
    def url(self) -> str:
        return self.server.url

    # the control plane, in-process (the same operations as /_sim over HTTP)
    def reset(self) -> dict[str, Any]:
        """Back to the loaded corpus (documents, grants, clock, change feed, index)."""
        return self.sim.reset()

    def seed(self, corpus: str | Path) -> dict[str, Any]:
        """Load another corpus by name or path (tokens follow the corpus name)."""
        return self.sim.seed(corpus)

    def set_clock(self, now: datetime) -> datetime:
        return self.sim.set_clock(now)

    def advance_clock(self, delta: timedelta) -> datetime:
        return self.sim.advance_clock(delta)

    def stats(self) -> dict[str, Any]:
        """Counts, index_version, policy_version and the snapshot fingerprint."""
        return self.sim.stats()


@pytest.fixture(scope="session")
def drivebench_simulator(pytestconfig: pytest.Config) -> Simulator:
    """The simulator loaded in-process (session-scoped: loading embeds the corpus once)."""
    from drivebench.api import load_simulator

    config = SimConfig(
        pipeline=str(pytestconfig.getini("drivebench_pipeline")),
        rerank=str(pytestconfig.getini("drivebench_rerank")),
        embedder=str(pytestconfig.getini("drivebench_embedder")),
    )
    sim = load_simulator(str(pytestconfig.getini("drivebench_corpus")), config=config)
    faults = str(pytestconfig.getini("drivebench_faults") or "")
    if faults.strip():
        from drivebench.simulator.faults import parse_fault_specs

        sim.faults.replace(parse_fault_specs(faults))
    return sim


@pytest.fixture
def drivebench_faults(drivebench_simulator: Simulator) -> Iterator[FaultSet]:
    """The session simulator's fault set, restored to the session's faults after the test."""
    faults = drivebench_simulator.faults
    before = faults.active
    try:
        yield faults
    finally:
        faults.replace(before)


@pytest.fixture(scope="session")
def drivebench_server(drivebench_simulator: Simulator) -> Iterator[ServedSimulator]:
    """The same simulator behind a real uvicorn server on a free local port."""
    server = start_in_thread(drivebench_simulator)
    try:
        yield ServedSimulator(drivebench_simulator, server)
    finally:
        server.stop()
