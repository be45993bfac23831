"""The acme generators' scenario model: documents, versions, question hooks and hop chains, the clock and the
seeded random streams.

These are plans, language-neutral in structure; each version's builders fill them with text (``content``), and
``assemble`` turns them into the on-disk format of ``drivebench.formats.corpus``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from drivebench.corpora.render.spec import DocSpec
from drivebench.formats.corpus import Move

AnswerKind = Literal["who", "amount", "date", "what", "number", "org"]

CLOCK_START = datetime(2026, 1, 1, tzinfo=UTC)
CLOCK_NOW = datetime(2026, 11, 1, tzinfo=UTC)


def sub_rng(seed: int, name: str) -> random.Random:
    """An independent, deterministic random stream for one component (str seeds hash with sha512)."""
    return random.Random(f"drivebench:{seed}:{name}")


def day(d: datetime) -> datetime:
    """Midnight UTC of the day of ``d``."""
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def office_time(rng: random.Random, d: datetime) -> datetime:
    """``d``'s day at a random office hour and minute (UTC)."""
    return day(d) + timedelta(hours=rng.randint(1, 10), minutes=rng.randrange(0, 60, 5))


@dataclass
class Hook:
    """A single-document question: ``attr`` of ``subject`` is ``facts[fact]`` of the asked version.

    ``content``: ``subject`` names what the document is about by what it says, not the document by its
    title (drawings: their title and number make up the file name, so their questions name the part
    number or the overall dimensions instead); asked with ``common.content_question``.
    """

    fact: str
    subject: str
    attr: str
    answer: AnswerKind
    alias_subject: str | None = None  # paraphrases that avoid the document's own wording
    alias_attr: str | None = None
    content: bool = False


@dataclass
class VersionPlan:
    spec: DocSpec
    created_at: datetime
    author: str
    note: str
    facts: dict[str, str]


@dataclass
class DocPlan:
    key: str
    kind: str
    file_type: str
    folder: str
    name: str
    title: str
    secret_level: str
    owner: str
    department: str
    versions: list[VersionPlan] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    trashed_at: datetime | None = None
    moves: list[Move] = field(default_factory=list)
    doc_id: str = ""
    subject: str = ""

    @property
    def created_at(self) -> datetime:
        return self.versions[0].created_at

    def version_id(self, n: int) -> str:
        return f"{self.doc_id}-v{n}"

    def version_at(self, t: datetime) -> int | None:
        """The version number current at ``t`` (None before the document existed)."""
        current = None
        for i, v in enumerate(self.versions, 1):
            if v.created_at <= t:
                current = i
        return current

    def folder_at(self, t: datetime) -> str:
        """The folder holding the document at ``t``: the first folder, then every move with ``at <= t``."""
        folder = self.moves[0].from_folder if self.moves else self.folder
        for mv in self.moves:
            if mv.at <= t:
                folder = mv.to_folder
        return folder


@dataclass
class Chain:
    """A multi-hop question: start at ``hops[0]`` and follow references to the answer in ``hops[-1]``."""

    kind: str
    hops: list[DocPlan]
    fact: str
    answer: AnswerKind
    texts: dict[str, str]  # length bucket ("short"/"medium"/"long") -> question
