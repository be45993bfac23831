"""Shared fixtures. The simulator fixtures themselves come from the drivebench pytest plugin
(``drivebench.testing``): ``drivebench_simulator`` (in-process) and ``drivebench_server`` (uvicorn).

A fixture name means one thing across the suite:

* ``sim`` / ``client``: the session's simulator (``drivebench_simulator``) and a client over it, shared by the
  whole session: a test leaves it as it found it.
* ``fresh_sim`` / ``fresh_client``: a writable simulator of the test's own on the seed corpus (hash embedder:
  real FAISS + BM25, no model; ``tests.support.sims.fresh_sim``), and a client over it.
* ``module_sim`` / ``module_client``: the same writable seed simulator, one per module (loaded once for the
  module's tests), and a client over it that resets it to the corpus after each test.

A module that needs another simulator names it for what it is (``tiny_org_sim``, ``pipeline_sim``,
``vector_store_sim``, ``ui_sim``), never ``sim``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("DRIVEBENCH_CACHE", str(Path(__file__).resolve().parents[1] / ".cache"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DRIVEBENCH_HISTORY", "none")  # tests never write into ./reports/history.sqlite3
# gRPC (pymilvus) restarts its poller thread in a forked child; a child that then closes its descriptors before
# exec (every subprocess.run) aborted on the closed epoll fd: make never ran (SIGABRT)
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import pytest
from fastapi.testclient import TestClient

from drivebench.formats.corpus import EVALSET_NAME, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator
from tests.support import sims
from tests.support.milvus import SessionServer

_MILVUS = SessionServer()


def pytest_configure(config: pytest.Config) -> None:
    """One Milvus server for the session, started before collection (in the background: the tests that use
    it wait for it to be ready); xdist workers inherit its address (tests/support/milvus.py)."""
    _MILVUS.start(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    _MILVUS.stop()


# What makes a test slow is what it touches, not a list kept by hand: a test is marked ``slow`` when its module
# uses a way to start a process or a server, to build a corpus or to load a model (below), when it uses a fixture
# that does, or when it lives in tests/e2e/. ``make test-fast`` leaves those out.
HEAVY_MODULES = frozenset(
    {
        "subprocess",
        "pty",
        "multiprocessing",
        "tests.support.clirun",
        "tests.support.serverproc",
        "tests.support.vendor_server",
        "tests.support.webdriver",
        "drivebench.server.process",
        "drivebench.corpora.builtin",
        "drivebench.corpora.generator.build",
        "drivebench.corpora.acme2.build",
        "drivebench.corpora.acme3.build",
        "drivebench.experiments.corpus_audit",
        "drivebench.experiments.vector_packs",
        "drivebench.search.index.embedders",
        "drivebench.simulator.loader",
        "drivebench.api",
        "tests.support.milvus",  # milvus-lite runs a server process
        "pymilvus",
        "schemathesis",
        "hypothesis",
    }
)
HEAVY_FIXTURES = frozenset({"drivebench_server", "ui_server", "ui_sim", "default_sim", "served", "server"})


def _modules_used(module: object) -> set[str]:
    used: set[str] = set()
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, type(os)) else getattr(value, "__module__", None)
        if isinstance(name, str):
            parts = name.split(".")
            used.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))  # hypothesis.core -> hypothesis
    return used


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Marks the slow tests before ``-m`` selects (and pytest groups parametrized fixtures), orders the files
    after."""
    heavy_module: dict[object, bool] = {}
    for item in items:
        module = getattr(item, "module", None)
        if module not in heavy_module:
            heavy_module[module] = module is not None and bool(_modules_used(module) & HEAVY_MODULES)
        in_e2e = "e2e" in Path(str(item.path)).parts
        if in_e2e or heavy_module[module] or HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    yield
    heavy_files_first(items)


def heavy_files_first(items: list[pytest.Item]) -> None:
    """The files with a slow test run first, each file's tests in their own order. ``make test`` hands out files
    in this order (``--dist loadfile --no-loadscope-reorder``): xdist's own order, most tests first, started the
    few-test files that start servers and processes last, and the run waited a minute on one of them."""
    heavy_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy_files)  # stable: light files keep their order too


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


@pytest.fixture
def fresh_sim() -> Simulator:
    """A writable simulator of this test's own on the seed corpus."""
    return sims.fresh_sim()


@pytest.fixture
def fresh_client(fresh_sim: Simulator) -> TestClient:
    return sims.client_for(fresh_sim)


@pytest.fixture(scope="module")
def module_sim() -> Simulator:
    """A writable simulator on the seed corpus shared by the tests of one module."""
    return sims.fresh_sim()


@pytest.fixture
def module_client(module_sim: Simulator) -> Iterator[TestClient]:
    """A client over ``module_sim``; the simulator is reset to the corpus when the test ends."""
    with sims.client_for(module_sim) as c:
        yield c
    module_sim.reset()
