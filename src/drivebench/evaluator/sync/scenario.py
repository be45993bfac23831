"""Scenarios of ``eval sync`` as data: ``scenarios/<name>.toml`` lists change classes and how many of each
(``include`` pulls in other scenarios), ``scenarios/classes.toml`` says what each class is. A scenario file
of one's own (``--scenario my.toml``) uses the same format; a new scenario needs no Python."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from drivebench.resources import package_dir

Kind = Literal["revoke", "grant", "content"]
Probe = Literal["recall", "answer"]
BUILTIN = ("revocations", "content", "all", "conformance")


@dataclass(frozen=True)
class ChangeClass:
    name: str
    kind: Kind
    what: str
    bug: str
    none: str = ""  # what the drive lacks when the planner finds no change of this class
    probe: Probe = "recall"  # the target's endpoint that must reflect the change


@dataclass(frozen=True)
class ManualChange:
    """A change a person makes with a real drive's own tools (``--manual``): who loses (or gains) which
    document, the queries that find it, and what to do."""

    cls: str
    principal: str
    doc_id: str
    queries: list[str]
    instruction: str


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    changes: list[tuple[str, int]] = field(default_factory=list)  # (class, count), in order
    conformance: bool = False
    manual: list[ManualChange] = field(default_factory=list)


class ScenarioError(ValueError):
    """A scenario that cannot be read (usage error: exit 2)."""


def _dir() -> Path:
    return package_dir("drivebench.evaluator.sync.scenarios")


def change_classes() -> dict[str, ChangeClass]:
    data = tomllib.loads((_dir() / "classes.toml").read_text(encoding="utf-8"))
    return {
        name: ChangeClass(name, v["kind"], v["what"], v["bug"], v.get("none", ""), v.get("probe", "recall"))
        for name, v in data.items()
    }


def load_scenario(name_or_file: str, _seen: frozenset[str] = frozenset()) -> Scenario:
    path = Path(name_or_file)
    if name_or_file in BUILTIN:
        path = _dir() / f"{name_or_file}.toml"
    elif not path.exists():
        raise ScenarioError(f"--scenario {name_or_file!r}: not a built-in ({', '.join(BUILTIN)}) nor a file")
    if str(path) in _seen:
        raise ScenarioError(f"scenario {path} includes itself")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"scenario {path}: {exc}") from exc
    classes = change_classes()
    changes: list[tuple[str, int]] = []
    for inc in data.get("include", []):
        changes += load_scenario(inc, _seen | {str(path)}).changes
    for i, entry in enumerate(data.get("changes", [])):
        cls, count = entry.get("class"), entry.get("count", 1)
        if cls not in classes:
            raise ScenarioError(f"scenario {path}: change {i + 1}: unknown class {cls!r}; known: {', '.join(classes)}")
        if not isinstance(count, int) or not 1 <= count <= 100:
            raise ScenarioError(f"scenario {path}: change {i + 1}: count must be a whole number 1..100")
        changes.append((cls, count))
    manual = []
    for i, entry in enumerate(data.get("manual", [])):
        where = f"scenario {path}: manual change {i + 1}"
        cls = entry.get("class")
        if cls not in classes or cls == "new-document":
            raise ScenarioError(f"{where}: class {cls!r} cannot be made by hand here (needs a known doc_id)")
        missing = [k for k in ("principal", "doc_id", "queries", "instruction") if not entry.get(k)]
        if missing:
            raise ScenarioError(f"{where}: give {', '.join(missing)}")
        if not isinstance(entry["queries"], list) or not all(isinstance(q, str) and q for q in entry["queries"]):
            raise ScenarioError(f"{where}: queries is a list of strings")
        manual.append(
            ManualChange(cls, str(entry["principal"]), str(entry["doc_id"]), entry["queries"], entry["instruction"])
        )
    conformance = bool(data.get("conformance", False))
    if not changes and not conformance and not manual:
        raise ScenarioError(f"scenario {path}: no changes")
    return Scenario(path.stem, str(data.get("description", "")), changes, conformance, manual)
