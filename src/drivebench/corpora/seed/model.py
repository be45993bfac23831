"""Plain records the hand-written seed content is made of.

The content modules (``docs_*.py``) describe each document once, with every version's
``DocSpec``; ``build.py`` turns them into the ``corpus.json`` records and the file bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drivebench.corpora.render.spec import DocSpec

LENGTHS: tuple[str, ...] = ("short", "medium", "long")


@dataclass(frozen=True)
class SeedVersion:
    """One version of a seed document: when it was saved, by whom, and what it says."""

    created_at: str
    author: str
    spec: DocSpec
    note: str | None = None


@dataclass(frozen=True)
class SeedDoc:
    """One document of the seed corpus, with all of its versions (oldest first)."""

    doc_id: str
    name: str
    folder: str
    file_type: str
    secret_level: str
    owner: str
    department: str
    language: str
    length: str
    versions: list[SeedVersion] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.length not in LENGTHS:
            raise ValueError(f"{self.doc_id}: length must be one of {LENGTHS}")
        for v in self.versions:
            if v.spec.file_type != self.file_type:
                raise ValueError(f"{self.doc_id}: a version's spec has file_type {v.spec.file_type}")
            if v.spec.language != self.language:
                raise ValueError(f"{self.doc_id}: a version's spec has language {v.spec.language}")

    @property
    def title(self) -> str:
        return self.versions[-1].spec.title

    @property
    def created_at(self) -> str:
        return self.versions[0].created_at

    def version_id(self, n: int) -> str:
        return f"{self.doc_id}-v{n}"

    def file(self, n: int) -> str:
        return f"files/{self.doc_id}/v{n}.{self.file_type}"
