"""Shared fixtures. The simulator fixtures themselves come from the drivebench pytest plugin
(``drivebench.testing``): ``drivebench_simulator`` (in-process) and ``drivebench_server`` (uvicorn)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("DRIVEBENCH_CACHE", str(Path(__file__).resolve().parents[1] / ".cache"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DRIVEBENCH_HISTORY", "none")  # tests never write into ./reports/history.sqlite3

import pytest
from fastapi.testclient import TestClient

from drivebench.formats.corpus import EVALSET_NAME, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator


@pytest.fixture(scope="session")
def sim(drivebench_simulator: Simulator) -> Simulator:
    return drivebench_simulator


@pytest.fixture(scope="session")
def client(sim: Simulator) -> TestClient:
    return TestClient(create_app(sim), raise_server_exceptions=False)


@pytest.fixture(scope="session")
def seed_manifest(sim: Simulator) -> Manifest:
    assert sim.corpus_dir is not None
    return load_manifest(sim.corpus_dir)


@pytest.fixture(scope="session")
def seed_evalset(sim: Simulator) -> list[EvalQuery]:
    assert sim.corpus_dir is not None
    return load_evalset(sim.corpus_dir / EVALSET_NAME)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
