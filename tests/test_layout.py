"""The test suite's layout: one fixture per concept (in a conftest.py), shared helpers in ``tests/support/``, and
no module that imports from a test module or a conftest.py. Read with ``ast``, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = "tests.support"


def _package(path: Path) -> list[str]:
    """The dotted package ``path`` is in (``tests/ui/test_x.py`` -> ``["tests", "ui"]``)."""
    parts = list(path.relative_to(TESTS.parent).with_suffix("").parts)
    return parts[:-1]


def _imported(tree: ast.Module, package: list[str]) -> list[tuple[int, str]]:
    """(line, module) of every module ``tree`` imports from, relative imports resolved against ``package``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if node.module is None or module == "tests":  # ``from . import x``, ``from tests import x``: submodules
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def violations(source: str, path: Path) -> list[str]:
    """Imports in ``source`` (the text of ``path``) of a ``tests`` module that is not ``tests.support[.*]``."""
    out = []
    for line, module in _imported(ast.parse(source, filename=str(path)), _package(path)):
        if (module == "tests" or module.startswith("tests.")) and not (
            module == SUPPORT or module.startswith(SUPPORT + ".")
        ):
            out.append(f"{path.relative_to(TESTS.parent)}:{line}: imports {module}")
    return out


def test_modules_import_from_tests_only_through_tests_support() -> None:
    sample = TESTS / "cli" / "test_sample.py"
    for bad in (
        "from tests.cli.test_x import y",
        "from tests.conftest import bearer",
        "from tests.ui.conftest import token",
        "import tests.drive.helpers",
        "from tests import conftest",
        "from .conftest import h",
        "from . import test_progress_output",
        "def f():\n    from tests.e2e.test_vendor_curl import VENDOR_BODY",
        "importlib.import_module('tests.cli.test_x')",
    ):
        assert violations(bad, sample), bad  # the check itself sees every form
    for good in ("from tests.support.clirun import run", "from tests.support import docs", "import tests.support.sims"):
        assert not violations(good, sample), good

    files = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    assert TESTS / "conftest.py" in files and len(files) > 100, len(files)
    problems = [v for path in files for v in violations(path.read_text(encoding="utf-8"), path)]
    assert not problems, "import shared helpers from tests/support/, never from a test module or a conftest.py:\n" + (
        "\n".join(problems)
    )


def test_shared_helpers_live_in_tests_support() -> None:
    """Outside tests/support/ a module is a test module, a conftest.py or a package's __init__.py."""
    stray = [
        str(p.relative_to(TESTS.parent))
        for p in sorted(TESTS.rglob("*.py"))
        if "__pycache__" not in p.parts
        and (TESTS / "support") not in p.parents
        and not (p.name.startswith("test_") or p.name in ("conftest.py", "__init__.py"))
    ]
    assert not stray, "shared helpers belong in tests/support/: " + ", ".join(stray)


def fixtures_defined(source: str) -> list[str]:
    """The names of the module-level pytest fixtures ``source`` defines (``name=`` overrides the function's)."""
    names = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for dec in node.decorator_list:
            func = dec.func if isinstance(dec, ast.Call) else dec
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) != "fixture":
                continue
            alias = [
                k.value.value
                for k in getattr(dec, "keywords", [])
                if k.arg == "name" and isinstance(k.value, ast.Constant)
            ]
            names.append(alias[0] if alias else node.name)
    return names


def test_a_conftest_fixture_is_defined_once() -> None:
    """One fixture per concept: a fixture a conftest.py shares (``sim``, ``fresh_sim``, ``module_sim``, ...) is
    defined in no other conftest.py and shadowed by no test module (a local ``sim`` that builds something else
    is how one name came to mean ten things)."""
    sample = (
        "import pytest\n\n@pytest.fixture\ndef sim():\n    ...\n\n@pytest.fixture(name='client')\ndef other():\n    ..."
    )
    assert fixtures_defined(sample) == ["sim", "client"]  # the check itself sees both forms
    shared: dict[str, list[str]] = {}
    for conftest in sorted(TESTS.rglob("conftest.py")):
        for name in fixtures_defined(conftest.read_text(encoding="utf-8")):
            shared.setdefault(name, []).append(str(conftest.relative_to(TESTS.parent)))
    assert {"sim", "fresh_sim", "module_sim"} <= set(shared), sorted(shared)
    problems = [f"{name}: {', '.join(where)}" for name, where in shared.items() if len(where) > 1]
    for module in sorted(TESTS.rglob("test_*.py")):
        for name in fixtures_defined(module.read_text(encoding="utf-8")):
            if name in shared:
                problems.append(f"{module.relative_to(TESTS.parent)} redefines {name} ({', '.join(shared[name])})")
    assert not problems, "\n".join(problems)
