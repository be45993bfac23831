"""Build a corpus: ``build_acme(out_dir, language=..., seed=7, scale="default") -> Manifest``.

Writes ``out_dir/corpus.json``, ``out_dir/files/<doc_id>/v<n>.<ext>`` and ``out_dir/evalset.jsonl``.
Everything is a function of (language, seed, scale): random streams are ``random.Random`` instances
seeded per component, iteration is in fixed order, and no wall-clock time is read. The zh and en
corpora of one seed share one scenario (same documents, grants and timeline), differing in text.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Literal

from drivebench.corpora.generator.access import AccessModel
from drivebench.corpora.generator.content import language_dir
from drivebench.corpora.generator.documents import UNITS, plan_units
from drivebench.corpora.generator.documents.base import Scenario
from drivebench.corpora.generator.evalset import build_evalset
from drivebench.corpora.generator.folders import base_tree
from drivebench.corpora.generator.grants import document_level, structural
from drivebench.corpora.generator.model import CLOCK_NOW, CLOCK_START, Chain, DocPlan, sub_rng
from drivebench.corpora.generator.organisation import ROSTER, build_org
from drivebench.corpora.generator.versions import apply_lifecycle
from drivebench.corpora.render import DocSpec, render
from drivebench.formats.corpus import EVALSET_NAME, Clock, Document, Grant, Manifest, Version, write_manifest
from drivebench.formats.evalset import EvalQuery, write_jsonl

SCALES: dict[str, int] = {"small": 80, "default": 300, "large": 3000}
PARALLEL_FROM = 200  # versions; below this, worker start-up costs more than it saves (acme-*@2 has 811)


def doc_count(scale: str | int) -> int:
    """Documents for a scale name (``small``, ``default``, ``large``) or a count (an int or a numeric string)."""
    if isinstance(scale, str) and scale.strip().isdigit():
        scale = int(scale)
    if isinstance(scale, int):
        if scale < 1:
            raise ValueError("scale must be a positive document count")
        return scale
    try:
        return SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; use one of {sorted(SCALES)} or a document count") from None


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


def to_document(d: DocPlan) -> Document:
    return Document(
        doc_id=d.doc_id,
        name=d.name,
        folder=d.folder,
        file_type=d.file_type,
        secret_level=d.secret_level,
        title=d.title,
        owner=d.owner,
        created_at=d.created_at,
        trashed_at=d.trashed_at,
        moves=list(d.moves),
        tags={"kind": d.kind, "department": d.department},
        versions=[
            Version(
                version_id=d.version_id(n),
                version=n,
                file=f"files/{d.doc_id}/v{n}.{d.file_type}",
                created_at=v.created_at,
                author=v.author,
                note=v.note or None,
            )
            for n, v in enumerate(d.versions, 1)
        ],
    )


def assemble(name: str, s: Scenario, docs: list[DocPlan], seed: int) -> tuple[Manifest, AccessModel, list[Grant]]:
    documents = [to_document(d) for d in docs]
    folders = [s.folders[p] for p in sorted(s.folders)]
    grants = structural(s)
    model = AccessModel(s.org.departments, s.org.users(), s.projects, folders, grants, documents)
    grants += document_level(s, docs, model, sub_rng(seed, "doc-grants"), len(grants))
    model = AccessModel(s.org.departments, s.org.users(), s.projects, folders, grants, documents)
    manifest = Manifest(
        name=name,
        language=s.lang,
        seed=seed,
        description=str(s.common.data["description"]),
        clock=Clock(start=CLOCK_START, now=CLOCK_NOW),
        departments=s.org.departments,
        users=s.org.users(),
        projects=s.projects,
        folders=folders,
        documents=documents,
        grants=grants,
        access=model.access_map(CLOCK_NOW),
    )
    return manifest, model, grants


def _render_batch(specs: list[tuple[str, DocSpec]]) -> list[tuple[str, bytes]]:
    return [(path, render(spec)) for path, spec in specs]


def write_files(out: Path, docs: list[DocPlan], workers: int | None = None) -> None:
    """Render every version to ``files/<doc_id>/v<n>.<ext>``. Big corpora render in worker processes
    (each spec renders to the same bytes wherever it runs, so the output does not depend on them)."""
    jobs = [(f"files/{d.doc_id}/v{n}.{d.file_type}", v.spec) for d in docs for n, v in enumerate(d.versions, 1)]
    for d in docs:
        (out / "files" / d.doc_id).mkdir(parents=True, exist_ok=True)
    if workers is None:
        workers = min(4, os.cpu_count() or 1) if len(jobs) >= PARALLEL_FROM else 1
    if workers <= 1:
        results = _render_batch(jobs)
    else:
        batches = [jobs[i :: workers * 4] for i in range(workers * 4)]
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = [r for batch in pool.map(_render_batch, batches) for r in batch]
    for path, data in sorted(results):
        (out / path).write_bytes(data)


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
