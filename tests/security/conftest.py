"""Fixtures for the security regressions: one seed simulator (hash embedder: real FAISS + BM25, no model)
per module, reset to the corpus after every test. Their helpers (``h``, ``mcp_call``) are in
``tests.support.security``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from drivebench.simulator.backend import Simulator
from tests.support.sims import client_for, fresh_sim


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    yield fresh_sim()


@pytest.fixture
def client(sim: Simulator) -> Iterator[TestClient]:
    with client_for(sim) as c:
        yield c
    sim.reset()
