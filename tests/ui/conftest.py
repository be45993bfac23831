"""Fixtures for the console tests: one small simulator (the seed corpus, the ``hash`` embedder, the ``bm25``
pipeline) behind a real uvicorn server, with a history of three recorded runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from drivebench.api import load_simulator
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.sample import sample_result
from drivebench.server.process import RunningServer, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator


@pytest.fixture(scope="session")
def ui_sim() -> Simulator:
    return load_simulator("seed", config=SimConfig(pipeline="bm25", embedder="hash"))


@pytest.fixture(scope="session")
def ui_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ui-history") / "history.sqlite3"
    store = HistoryStore(path)
    for seed in range(3):
        store.record(sample_result(seed=seed, n_queries=24, resamples=50))
    return path


@pytest.fixture(scope="session")
def ui_server(ui_sim: Simulator, ui_history: Path) -> Iterator[RunningServer]:
    server = start_in_thread(ui_sim)
    server.server.config.app.state.ui_history = ui_history
    try:
        yield server
    finally:
        server.stop()
