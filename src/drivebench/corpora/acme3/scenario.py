"""acme@3's data: ``scenario/<lang>/world.toml`` (names, vocabularies, question wording) and the document
templates ``scenario/<lang>/world/<kind>.j2`` (the markup of ``corpora/generator/content.py``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from drivebench.corpora.common.content import TextModule, read_toml
from drivebench.resources import package_dir

SCENARIO_DIR = package_dir("drivebench.corpora.acme3") / "scenario"


def languages() -> list[str]:
    return sorted(p.parent.name for p in SCENARIO_DIR.glob("*/world.toml"))


@cache
def words(lang: str) -> dict[str, Any]:
    """The words of ``lang``: ``names``, ``policies``, ``version``, ``ask``, ``chain`` and ``module`` (the
    templates, ``module.document(kind, facts) -> DocSpec``)."""
    directory = SCENARIO_DIR / lang
    if not (directory / "world.toml").is_file():
        raise ValueError(f"acme@3 has no data for language {lang!r} (have: {', '.join(languages())})")
    data = read_toml(directory / "world.toml")
    return {**data, "module": TextModule(directory, "world")}
