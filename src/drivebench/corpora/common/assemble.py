"""The steps every acme version's build shares: a scale to a document count, the plans to the manifest (with
version 1's grant rules and the access ground truth), and the rendered files.

Everything is a function of its inputs: random streams are seeded per component, iteration is in fixed order,
and no wall-clock time is read, so a build's bytes depend only on (language, seed, scale).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.grants import document_level, structural
from drivebench.corpora.common.model import CLOCK_NOW, CLOCK_START, DocPlan, sub_rng
from drivebench.corpora.common.scenario import Scenario
from drivebench.corpora.render import DocSpec, render
from drivebench.formats.corpus import Clock, Document, Grant, Manifest, Version

PARALLEL_FROM = 200  # versions; below this, worker start-up costs more than it saves (acme-*@2 has 811)


def scale_count(scale: str | int, scales: Mapping[str, int]) -> int:
    """Documents for a scale name of ``scales`` (``small``, ``default``, ``large``) or a count (an int or a
    numeric string)."""
    if isinstance(scale, str) and scale.strip().isdigit():
        scale = int(scale)
    if isinstance(scale, int):
        if scale < 1:
            raise ValueError("scale must be a positive document count")
        return scale
    try:
        return scales[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; use one of {sorted(scales)} or a document count") from None


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
