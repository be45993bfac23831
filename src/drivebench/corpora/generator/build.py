"""Build a corpus: ``build_acme(out_dir, language=..., seed=7, scale="default") -> Manifest``.

Writes ``out_dir/corpus.json``, ``out_dir/files/<doc_id>/v<n>.<ext>`` and ``out_dir/evalset.jsonl``.
Everything is a function of (language, seed, scale): random streams are ``random.Random`` instances
seeded per component, iteration is in fixed order, and no wall-clock time is read. The zh and en
corpora of one seed share one scenario (same documents, grants and timeline), differing in text.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

from drivebench.corpora.common.assemble import assemble, scale_count, write_files
from drivebench.corpora.common.content import language_dir
from drivebench.corpora.common.folders import base_tree
from drivebench.corpora.common.model import CLOCK_START, Chain, DocPlan, sub_rng
from drivebench.corpora.common.organisation import ROSTER, build_org
from drivebench.corpora.common.scenario import Scenario
from drivebench.corpora.generator.documents import UNITS, plan_units
from drivebench.corpora.generator.evalset import build_evalset
from drivebench.corpora.generator.versions import apply_lifecycle
from drivebench.formats.corpus import EVALSET_NAME, Manifest, write_manifest
from drivebench.formats.evalset import EvalQuery, write_jsonl

SCALES: dict[str, int] = {"small": 80, "default": 300, "large": 3000}


def doc_count(scale: str | int) -> int:
    """Documents for a scale name (``small``, ``default``, ``large``) or a count (an int or a numeric string)."""
    return scale_count(scale, SCALES)


def user_count(n_docs: int) -> int:
    """The roster (48 people) up to 400 documents, then one more person per 25 documents (at most 200)."""
    return min(200, max(len(ROSTER), len(ROSTER) + (n_docs - 400) // 25))


def plan(language: str, seed: int, n_docs: int) -> tuple[Scenario, list[DocPlan], list[Chain]]:
    """The scenario: organisation, folders, documents (ids assigned, lifecycle applied) and hop chains."""
    s = Scenario(lang=language, seed=seed, org=build_org(language, user_count(n_docs)))
    base_tree(s)
    units = plan_units(n_docs)
    timing = sub_rng(seed, "timing")
    docs: list[DocPlan] = []
    chains: list[Chain] = []
    for i, name in enumerate(units):
        base = CLOCK_START + timedelta(days=5 + 175 * i / max(1, len(units)) + timing.randint(0, 10))
        out = UNITS[name][0](s, sub_rng(seed, f"unit:{i}:{name}"), base)
        docs += out.docs
        chains += out.chains
    for i, d in enumerate(docs, 1):
        d.doc_id = f"d{i:04d}"
    apply_lifecycle(s, docs, sub_rng(seed, "lifecycle"))
    return s, docs, chains


def build_acme(out_dir: Path, *, language: str, seed: int = 7, scale: str | int = "default") -> Manifest:
    """Generate the ``acme-<language>`` corpus into ``out_dir`` and return its manifest."""
    language_dir(language)  # a clear error for a language without data
    n_docs = doc_count(scale)
    s, docs, chains = plan(language, seed, n_docs)
    manifest, model, _ = assemble(f"acme-{language}", s, docs, seed)
    queries = build_evalset(s, docs, chains, model, sub_rng(seed, "evalset"))
    out = Path(out_dir)
    write_files(out, docs)
    write_manifest(manifest, out)
    write_jsonl(out / EVALSET_NAME, queries)
    return manifest


def build_queries(language: Literal["zh", "en"], seed: int = 7, scale: str | int = "default") -> list[EvalQuery]:
    """The eval set alone (no files written)."""
    s, docs, chains = plan(language, seed, doc_count(scale))
    _, model, _ = assemble(f"acme-{language}", s, docs, seed)
    return build_evalset(s, docs, chains, model, sub_rng(seed, "evalset"))
