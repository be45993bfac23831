"""The import graph import-linter checks (grimp), read for what its contracts cannot say: no two modules of the
simulator import each other, directly or through others (``scripts/import_cycles.py``; an import counts wherever
it is written, in a function or under ``TYPE_CHECKING`` too); and the files one recall runs through, counted by
tracing one (``scripts/recall_path.py``): the path stays short enough to read."""

from __future__ import annotations

import grimp
import pytest

from scripts.import_cycles import cycles, cycles_in
from scripts.recall_path import by_file, traced_request

# The files a user's hybrid recall over HTTP runs through, router to response body (docs/index.md, "One recall,
# file by file"). A new file on the path fails here: fold it into the stage it serves or raise this with the reason.
MAX_RECALL_FILES = 15
# the stages every recall must cross: a trace without them traced nothing and would pass any bound
RECALL_STAGES = (
    "drivebench/server/api/recall.py",  # the router
    "drivebench/simulator/recall.py",  # the recall service
    "drivebench/drive/permissions/engine.py",  # the permission mask and the re-check
    "drivebench/search/retrieval/pipelines.py",  # search over the index, fusion
    "drivebench/drive/state.py",  # hydration of the hits
    "drivebench/server/api/schemas.py",  # the request and response schema
)
# work that is not a clean recall's, kept off its path: the fault hooks (asked only while a fault touches
# recall), the per-chunk visibility arrays (synced only after a write), the policy compiler (a request's names
# are resolved when the engine is compiled)
OFF_RECALL_PATH = (
    "drivebench/simulator/faults/faultset.py",
    "drivebench/simulator/visibility.py",
    "drivebench/drive/permissions/compiler.py",
)


@pytest.fixture(scope="module")
def users_recall() -> dict[str, list[str]]:
    return by_file(traced_request("user", "hybrid"))


def test_no_import_cycle_among_the_simulators_modules() -> None:
    assert cycles("drivebench.simulator") == []


def test_the_cycle_finder_sees_a_cycle_through_other_modules_and_only_inside_the_package() -> None:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d", "q"):
        graph.add_module(module)
    for importer, imported in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "q"), ("q", "p.d")):
        graph.add_import(importer=importer, imported=imported)
    assert cycles_in(graph, "p") == [["p.a", "p.b", "p.c"]]  # p.d <-> q leaves the package: not counted


def test_a_users_recall_crosses_at_most_max_recall_files_files(users_recall: dict[str, list[str]]) -> None:
    files = users_recall
    listing = "\n".join(f"{len(functions):4d}  {name}" for name, functions in files.items())
    assert [stage for stage in RECALL_STAGES if stage not in files] == [], listing
    assert len(files) <= MAX_RECALL_FILES, f"one recall crosses {len(files)} files:\n{listing}"


def test_a_clean_recall_runs_no_fault_hook_no_array_sync_and_no_compiler(users_recall: dict[str, list[str]]) -> None:
    evaluating = by_file(traced_request("eval", "hybrid"))  # the evaluate-as path asked role-from-body's hook too
    assert {name: users_recall[name] for name in OFF_RECALL_PATH if name in users_recall} == {}
    assert {name: evaluating[name] for name in OFF_RECALL_PATH if name in evaluating} == {}
