"""Text templates, one package per language (``zh``, ``en``) with the same modules and names.

``common`` holds formatting, folder names and question phrasing; the domain modules turn fact
dicts into ``DocSpec``s and hold the subjects, attributes and chain questions of their documents.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def load(lang: str, module: str) -> ModuleType:
    if lang not in ("zh", "en"):
        raise ValueError(f"unknown language {lang!r}")
    return importlib.import_module(f"drivebench.corpora.generator.templates.{lang}.{module}")
