"""The import graph import-linter checks (grimp), read for what its contracts cannot say: no two modules of the
simulator import each other, directly or through others (``scripts/import_cycles.py``; an import counts wherever
it is written, in a function or under ``TYPE_CHECKING`` too)."""

from __future__ import annotations

import grimp

from scripts.import_cycles import cycles, cycles_in


def test_no_import_cycle_among_the_simulators_modules() -> None:
    assert cycles("drivebench.simulator") == []


def test_the_cycle_finder_sees_a_cycle_through_other_modules_and_only_inside_the_package() -> None:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d", "q"):
        graph.add_module(module)
    for importer, imported in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "q"), ("q", "p.d")):
        graph.add_import(importer=importer, imported=imported)
    assert cycles_in(graph, "p") == [["p.a", "p.b", "p.c"]]  # p.d <-> q leaves the package: not counted
