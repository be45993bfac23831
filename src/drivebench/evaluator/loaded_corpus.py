"""A corpus read once for one run: its manifest (corpus.json) and its facts (facts.jsonl), and what the run builds
from them (the ids the eval set must name, the catalog, the leak oracle, the id mapper).

Parsing the manifest of a large corpus takes a noticeable share of a run's start (acme's manifests are megabytes):
every part of ``eval run`` that needs the corpus asks this object, and nothing reads the files again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from drivebench.formats.corpus import Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery
from drivebench.formats.facts import CorpusFact, load_facts

if TYPE_CHECKING:
    from drivebench.evaluator.catalog import Catalog
    from drivebench.evaluator.idmap import IdMapper
    from drivebench.evaluator.oracle import DriveOracle

NO_CORPUS_FACTS = "the corpus has no facts"


@dataclass
class LoadedCorpus:
    """The corpus at ``corpus_dir`` as ``name`` (what the user gave: a built-in name or a directory) names it."""

    name: str
    corpus_dir: Path
    manifest: Manifest
    facts: list[CorpusFact] | None  # None: the corpus has no facts.jsonl (answer leaks are not measured)
    _fitting: list[Sequence[EvalQuery]] = field(default_factory=list, repr=False)  # eval sets found to fit

    @classmethod
    def load(cls, corpus_dir: Path, name: str | None = None) -> LoadedCorpus:
        """Read corpus.json and facts.jsonl once. A missing manifest is a FileNotFoundError, a malformed one or a
        malformed facts.jsonl a ValueError naming the file (and line): before any query is sent."""
        corpus_dir = Path(corpus_dir)
        manifest, facts = load_manifest(corpus_dir), load_facts(corpus_dir)
        return cls(str(corpus_dir) if name is None else name, corpus_dir, manifest, facts)

    @property
    def no_facts_reason(self) -> str | None:
        """Why answer leaks cannot be measured against this corpus (None when it has facts)."""
        return None if self.facts is not None else NO_CORPUS_FACTS

    def fits_checked(self, queries: Sequence[EvalQuery]) -> bool:
        """Whether ``queries`` (this very list) was already found to fit: the eval set is checked once per run."""
        return any(checked is queries for checked in self._fitting)

    def mark_fits(self, queries: Sequence[EvalQuery]) -> None:
        self._fitting.append(queries)

    @cached_property
    def catalog(self) -> Catalog:
        """Resolves cited file names, and the documents' strata."""
        from drivebench.evaluator.catalog import Catalog

        return Catalog.from_manifest(self.manifest)

    def oracle(self, at: datetime | None = None) -> DriveOracle:
        """The leak oracle: the corpus's own policies (a fresh drive, never the target's), its texts for
        selectivity. Loaded on first use: building the permission engine takes seconds on a large corpus."""
        from drivebench.evaluator.oracle import corpus_oracle

        return corpus_oracle(self.corpus_dir, at, manifest=self.manifest)

    def id_mapper(self, match: str, profile_source: str | Path | None = None) -> IdMapper:
        """The mapper ``--match`` names, over this corpus (see ``idmap.id_mapper_for``)."""
        from drivebench.evaluator.idmap import id_mapper_for

        return id_mapper_for(match, self.corpus_dir, profile_source, manifest=self.manifest)
