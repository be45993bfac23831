"""The scenario data of acme@2: ``scenario/<lang>.toml`` (question templates, descriptions of documents by
kind, typos, distractor wording, rationales), loaded into plain dicts; ``fill`` formats a template."""

from __future__ import annotations

import string
import tomllib
from functools import cache
from typing import Any

from drivebench.resources import package_dir

SCENARIO_DIR = package_dir("drivebench.corpora.acme2") / "scenario"


@cache
def load(language: str) -> dict[str, Any]:
    """The data file of ``language``; a clear error when there is none."""
    path = SCENARIO_DIR / f"{language}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))
        raise ValueError(f"no acme@2 scenario data for language {language!r} (have: {', '.join(known)})")
    with path.open("rb") as fh:
        return tomllib.load(fh)


@cache
def story() -> dict[str, Any]:
    """Language-neutral facts about the story (``scenario/story.toml``)."""
    with (SCENARIO_DIR / "story.toml").open("rb") as fh:
        return tomllib.load(fh)


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def fill(template: str, values: dict[str, str]) -> str | None:
    """``template`` with ``values`` filled in, or None when it names a value that is not there."""
    if not fields(template) <= values.keys():
        return None
    return template.format(**values)


def fillable(templates: list[str], values: dict[str, str]) -> list[str]:
    return [t for t in (fill(x, values) for x in templates) if t]
