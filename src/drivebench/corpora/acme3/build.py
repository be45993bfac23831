"""Build ``acme-<lang>@3``: ``build_acme3(out_dir, language=..., seed=7, scale="default") -> Manifest``.

1. The world (``world.py``): organisation and folder tree of version 1's story, then projects, products,
   purchases, people, policies, notices and events whose facts are drawn once and owned by one document.
2. Document ids in a seeded random order (an id says nothing about a document's kind).
3. Grants: version 1's structural and document-level rules, plus "project members preview their product's
   drawings, purchase contracts and inspection packs" (a folder per product); the access ground truth.
4. The eval set (``questions.py``).

Writes ``corpus.json`` (``corpus_version: 3``), ``files/``, ``evalset.jsonl``, ``facts.jsonl`` (the facts each
document owns: ``facts.py``) and ``generation.json`` (what the generator drew and rejected, and the composition
``corpus audit`` checks).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from drivebench.corpora.acme3.facts import world_facts
from drivebench.corpora.acme3.lexical import whole_drive_bm25
from drivebench.corpora.acme3.questions import Draw, build_evalset
from drivebench.corpora.acme3.scenario import languages, words
from drivebench.corpora.acme3.world import World, build_world
from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.assemble import assemble, write_files
from drivebench.corpora.common.grants import GrantList
from drivebench.corpora.common.model import CLOCK_NOW, DocPlan, sub_rng
from drivebench.formats.corpus import EVALSET_NAME, Manifest, write_manifest
from drivebench.formats.evalset import EvalQuery, write_jsonl
from drivebench.formats.facts import CorpusFact, write_facts
from drivebench.search.index.tokenize import tokenize

VERSION = 3
GENERATION_REPORT = "generation.json"
NO_ASKING_ROLES = {"admin", "auditor"}


def _product_grants(world: World, start: int) -> list[Any]:
    g = GrantList()
    for pid, folders in sorted(world.product_folders.items()):
        for path in folders:
            g.add("project", pid, ["preview"], path=path, note="project members read their product's files")
    for i, grant in enumerate(g.grants):
        grant.grant_id = f"g{start + i + 1:04d}"
    return g.grants


def generate(
    language: str, seed: int = 7, scale: str | int = "default"
) -> tuple[Manifest, list[EvalQuery], list[DocPlan], dict[str, Any], list[CorpusFact]]:
    """(manifest, queries, documents, report, facts) without writing anything."""
    world = build_world(language, seed, scale)
    docs = world.docs
    ids = [f"d{i:04d}" for i in range(1, len(docs) + 1)]
    sub_rng(seed, "v3:ids").shuffle(ids)
    for doc, doc_id in zip(docs, ids, strict=True):
        doc.doc_id = doc_id
    docs.sort(key=lambda d: d.doc_id)
    manifest, _, grants = assemble(f"acme-{language}", world.s, docs, seed)
    manifest.corpus_version = VERSION
    manifest.grants = grants + _product_grants(world, len(grants))
    model = AccessModel.from_manifest(manifest)
    manifest.access = model.access_map(CLOCK_NOW)
    visible = {u: len(v) for u, v in manifest.access.items()}
    askers = [u.user_id for u in manifest.users if not NO_ASKING_ROLES & set(u.roles)]
    draw = Draw(
        world=world,
        model=model,
        index=whole_drive_bm25(docs),
        simulator_index=whole_drive_bm25(docs, tokenize),
        words=words(language),
        other_words=words("en" if language == "zh" else "zh") if len(languages()) > 1 else {"ask": {}},
        rng=sub_rng(seed, "v3:evalset"),
        visible=visible,
        askers=askers,
    )
    queries = build_evalset(draw)
    return manifest, queries, docs, report(queries, draw, docs), world_facts(world)


def report(queries: list[EvalQuery], draw: Draw, docs: list[DocPlan]) -> dict[str, Any]:
    types = {d.doc_id: d.file_type for d in docs}
    live = [d for d in docs if d.trashed_at is None]
    gold_by_type: dict[str, set[str]] = {}
    for q in queries:
        for g in q.gold:
            gold_by_type.setdefault(types[g.doc_id], set()).add(g.doc_id)
    return {
        "generator": f"acme@{VERSION}",
        "documents": len(docs),
        "queries": len(queries),
        "by_kind": dict(sorted(Counter(q.tags["kind"] for q in queries).items())),
        "multi_hop_by_hops": dict(sorted(Counter(q.tags["hops"] for q in queries if q.hops).items())),
        "versioned_share": round(sum(len(d.versions) > 1 for d in live) / max(1, len(live)), 4),
        "gold_documents_by_type": {t: len(v) for t, v in sorted(gold_by_type.items())},
        "contradictions": 0,  # every fact has one owner document; the audit's gold linter checks it
        "draw": dict(sorted(draw.report.items())),
        "median_visible_documents_of_askers": sorted(draw.visible.get(q.user_id or "", 0) for q in queries)[
            len(queries) // 2
        ]
        if queries
        else None,
        "clock_now": CLOCK_NOW.isoformat(),
    }


def build_acme3(out_dir: Path, *, language: str, seed: int = 7, scale: str | int = "default") -> Manifest:
    """Generate ``acme-<language>@3`` into ``out_dir`` and return its manifest."""
    manifest, queries, docs, rep, facts = generate(language, seed, scale)
    out = Path(out_dir)
    write_files(out, docs)
    write_manifest(manifest, out)
    write_jsonl(out / EVALSET_NAME, queries)
    write_facts(out, facts)
    (out / GENERATION_REPORT).write_text(
        json.dumps(rep, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest
