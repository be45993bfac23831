"""Names of the acme story, read from the data: ``scenario/<lang>/names.toml`` (people, departments, job titles
and the pools of the story's things) and ``scenario/story.toml`` (what is the same in every language).

Entry ``i`` of a pool names the same thing in every language, so ``acme-zh`` and ``acme-en`` built with one
seed share one scenario and differ in text; a new language supplies pools of the same lengths.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from drivebench.corpora.common.content import SCENARIO_DIR, language_dir, read_toml


def names(lang: str) -> dict[str, Any]:
    return _names(language_dir(lang) / "names.toml")


@cache
def _names(path: Path) -> dict[str, Any]:
    return read_toml(path)


@cache
def story() -> dict[str, Any]:
    """The language-independent facts (``scenario/story.toml``)."""
    return read_toml(SCENARIO_DIR / "story.toml")


def people(lang: str) -> tuple[str, ...]:
    """The hand-written pool of people's names (roster first, then outsiders)."""
    return tuple(names(lang)["people"])


def pool(lang: str, name: str) -> tuple[str, ...]:
    """The pool ``name`` (``parts``, ``suppliers``, ...) in ``lang``."""
    return tuple(names(lang)["pools"][name])


def department_name(lang: str, dept_id: str) -> str:
    return str(names(lang)["departments"][dept_id])


def job_title(lang: str, key: str) -> str:
    return str(names(lang)["job_titles"][key])


def extra_people(lang: str, count: int, taken: set[str]) -> list[str]:
    """``count`` more distinct names not in ``taken`` and not sub-strings of one another (deterministic order):
    every combination of ``[extra_people]``'s family and given names, ``outer`` varying slowest."""
    spec = names(lang)["extra_people"]
    if spec["outer"] == "given":
        pairs = [(f, g) for g in spec["given"] for f in spec["family"]]
    else:
        pairs = [(f, g) for f in spec["family"] for g in spec["given"]]
    out: list[str] = []
    for family, given in pairs:
        if len(out) == count:
            break
        name = spec["pattern"].format(family=family, given=given)
        if name in taken or any(name in t or t in name for t in taken):
            continue
        out.append(name)
        taken.add(name)
    if len(out) < count:
        raise ValueError(f"name pool exhausted: wanted {count}, got {len(out)}")
    return out
