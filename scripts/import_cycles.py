"""Import cycles among the modules of one drivebench package (default ``drivebench.simulator``), from the import
graph import-linter checks (grimp).

Rule: an import counts wherever it is written: at module level, inside a function (a lazy import still ties the
two files together) and under ``if TYPE_CHECKING:`` (grimp reads them all), so a cycle is reported whether or
not it would run. Prints each strongly connected group of modules that import each other and exits 1 when there
is one.

    python scripts/import_cycles.py [package]
"""

from __future__ import annotations

import sys

import grimp


def cycles(package: str) -> list[list[str]]:
    """The groups of modules under ``package`` that import each other, directly or through others of them."""
    return cycles_in(grimp.build_graph("drivebench", include_external_packages=False), package)


def cycles_in(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """``cycles`` over ``graph``: Tarjan's strongly connected components of size > 1, or a module importing
    itself."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or module in edges[module]:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for module in modules:
        if module not in index:
            visit(module)
    return groups


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    package = args[0] if args else "drivebench.simulator"
    groups = cycles(package)
    for group in groups:
        print(f"cycle of {len(group)} modules:")
        for module in group:
            print(f"  {module}")
    print(f"{len(groups)} import cycles among the modules of {package}")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
