"""What the acme@3 world is made of: askable facts, chains, and the world that holds them (``world.py``
builds it)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from drivebench.corpora.common.model import DocPlan
from drivebench.corpora.common.scenario import Scenario

SCALES: dict[str, int] = {"small": 4, "default": 12, "large": 60}  # projects; documents ~27 per project


@dataclass
class Fact:
    """An askable fact: ``doc.versions[i].facts[key]`` for every version ``i``; ``anchors`` name its entity. A
    question describes the entity with what the document itself states (``described``)."""

    doc: DocPlan
    key: str
    anchors: list[str]


@dataclass
class Chain:
    """A multi-hop question: the question names ``start`` (words of hop 1); each hop names the next one's
    identifier; the answer is ``fact`` of the last hop."""

    kind: str
    hops: list[DocPlan]
    fact: Fact
    start: dict[str, str]


@dataclass
class World:
    s: Scenario
    docs: list[DocPlan] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    product_folders: dict[str, list[str]] = field(default_factory=dict)  # project id -> its product's folders


def project_count(scale: str | int) -> int:
    if isinstance(scale, str) and scale.strip().isdigit():
        scale = int(scale)
    if isinstance(scale, int):
        if scale < 1:
            raise ValueError("scale must be a positive document count")
        return max(2, round(scale / 27))
    try:
        return SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; use one of {sorted(SCALES)} or a document count") from None


_SPACE = re.compile(r"\s+")
HIDDEN = frozenset({"author", "title"})  # facts the templates get but the text may not show


def norm(text: str) -> str:
    return _SPACE.sub("", text).lower()


def described(doc: DocPlan, version: int, asked: str) -> dict[str, str]:
    """The facts of ``doc``'s version ``version`` (0-based) that its text shows, except ``asked``: what a
    question may use to say which document it means."""
    v = doc.versions[version]
    text = norm(v.spec.plain_text())
    return {k: x for k, x in v.facts.items() if k != asked and k not in HIDDEN and x and norm(x) in text}
