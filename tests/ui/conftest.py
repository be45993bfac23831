"""Fixtures for the console tests: one small simulator (the seed corpus, the ``hash`` embedder, the ``bm25``
pipeline) behind a real uvicorn server, with a history of three recorded runs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from drivebench.api import load_simulator
from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.report.sample import sample_result
from drivebench.server.process import RunningServer, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator

USER_A, USER_B = "u001", "u004"  # 张伟 (R&D engineer, internal) and 陈静 (finance manager, secret)
DENIED_USER, DENIED_DOC = "u010", "d0009"  # Emily Carter: an explicit deny on d0009 in /rd/platform


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


def token(sim: Simulator, subject: str) -> str:
    return sim.tokens.for_subject(subject).token


def previewable(sim: Simulator, user_id: str, at: datetime | None = None) -> set[str]:
    """Documents ``user_id`` may preview now, asked of the permission engine directly (not of the console)."""
    return sim.engine.previewable_docs(user_id, at or sim.drive.clock.now())


def forbidden_names(sim: Simulator, user_id: str) -> set[str]:
    """Names of the documents ``user_id`` may not preview that cannot be mistaken for something it may see (a
    name that is part of an allowed document's name or path is left out: its presence would prove nothing)."""
    allowed = previewable(sim, user_id)
    seen = " ".join(f"{d.name} {sim.drive.doc_path(d)}" for d in sim.drive.documents.values() if d.doc_id in allowed)
    return {d.name for d in sim.drive.documents.values() if d.doc_id not in allowed and d.name not in seen}
