"""Build ``acme-<lang>@2``: ``build_acme2(out_dir, language=..., seed=7, scale="default") -> Manifest``.

1. The story: version 1's scenario plan (``corpora/generator``, frozen: organisation, folders, documents,
   chains, lifecycle) for ``scale`` documents.
2. Distractors (``distractors.py``): drafts, outdated copies, meeting notes quoting old figures.
3. Document ids are assigned in a seeded random order, so an id says nothing about being a distractor
   (and ties in a ranking do not favour the story's documents).
4. Guests (``principals.py``): principals who see little (one project, one folder).
5. Grants and the access ground truth (version 1's rules) over story and distractors together, then the
   documented overshares planted (``evaluator/audit/planted_overshares.json``; written to
   ``planted_overshares.json``), before any question is drawn.
6. The eval set (``questions.py``) with the words of ``scenario/<lang>.toml``.

Writes ``corpus.json`` (``corpus_version: 2``), ``files/``, ``evalset.jsonl`` and ``generation.json``: what
the generator rejected or dropped (chains a question alone identifies, contradicted questions) and counts
that ``corpus audit`` shows.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from drivebench.corpora.acme2.distractors import add_distractors, replace_all
from drivebench.corpora.acme2.lexical import TitleWords
from drivebench.corpora.acme2.principals import add_guests, guest_grants
from drivebench.corpora.acme2.questions import Gen, build_evalset
from drivebench.corpora.acme2.scenario import load, story
from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.common.assemble import assemble, scale_count, write_files
from drivebench.corpora.common.lexical import TextIndex
from drivebench.corpora.common.model import CLOCK_NOW, DocPlan, sub_rng
from drivebench.corpora.generator.build import plan
from drivebench.corpora.plants import apply_plants
from drivebench.formats.corpus import EVALSET_NAME, Manifest, write_manifest
from drivebench.formats.evalset import EvalQuery, write_jsonl

VERSION = 2
SCALES: dict[str, int] = {"small": 80, "default": 300, "large": 3000}  # story documents; distractors come on top
GENERATION_REPORT = "generation.json"
PLANTED = "planted_overshares.json"  # the overshares planted, as ``corpora/plants.py`` reports them
_NEGATIVE = re.compile(r"^-\d[\d,]*$")


def _scale(scale: str | int) -> int:
    return scale_count(scale, SCALES)


# (manifest, queries, documents, generation report, planted overshares)
Generated = tuple[Manifest, list[EvalQuery], list[DocPlan], dict[str, object], list[dict[str, Any]]]


def generate(language: Literal["zh", "en"], seed: int = 7, scale: str | int = "default") -> Generated:
    """(manifest, queries, docs, report) without writing anything."""
    data = load(language)  # a clear error for a language without acme@2 data
    other_lang = data["other_language"]
    n = _scale(scale)
    s, docs, chain_pool = plan(language, seed, n)
    _, other_docs, _ = plan(other_lang, seed, n)  # same story, other language: for cross-language questions
    story_docs = list(docs)
    fixed = no_negative_amounts(story_docs)
    twins = {id(a): b for a, b in zip(docs, other_docs, strict=True)}
    extra = add_distractors(s, story_docs, data, sub_rng(seed, "v2:distractors"))
    guests = add_guests(s, story_docs, story()["guests"])
    everything = story_docs + [d.doc for d in extra.items]
    order = sub_rng(seed, "v2:ids")
    ids = [f"d{i:04d}" for i in range(1, len(everything) + 1)]
    order.shuffle(ids)
    for doc, doc_id in zip(everything, ids, strict=True):
        doc.doc_id = doc_id
    everything.sort(key=lambda d: d.doc_id)
    manifest, _, _ = assemble(f"acme-{language}", s, everything, seed)
    manifest.corpus_version = VERSION
    manifest.grants += guest_grants(guests, s, story()["guests"])
    manifest, planted = plant_overshares(manifest, everything)
    model = AccessModel.from_manifest(manifest)
    manifest.access = model.access_map(CLOCK_NOW)
    gen = Gen(
        s=s,
        data=data,
        other=load(other_lang),
        other_docs=twins,
        model=model,
        rng=sub_rng(seed, "v2:evalset"),
        index=TextIndex(everything),
        titles=TitleWords(everything),
        distractors=extra,
        story=story_docs,
        entity_facts=frozenset(story()["entity_facts"]),
        visible={u: len(v) for u, v in (manifest.access or {}).items()},
        access={u: set(v) for u, v in (manifest.access or {}).items()},
    )
    queries = build_evalset(gen, chain_pool)
    report = generation_report(queries, gen, len(story_docs), len(extra.items))
    report["negative_amounts_fixed"] = fixed
    report["guests"] = len(guests) + len(s.spaces)
    report["planted_overshares"] = len(planted)
    return manifest, queries, everything, report, planted


def plant_overshares(manifest: Manifest, docs: list[DocPlan]) -> tuple[Manifest, list[dict[str, Any]]]:
    """The documented overshares (``evaluator/audit/planted_overshares.json``) planted into the drive before
    the eval set is drawn, so its questions and the access ground truth see the real grants. A raised
    classification is raised in the document's plan too (its questions carry the new level)."""
    manifest, planted = apply_plants(manifest)
    levels = {d.doc_id: d.secret_level for d in manifest.documents}
    for d in docs:
        d.secret_level = levels[d.doc_id]
    return manifest, planted


def no_negative_amounts(docs: list[DocPlan]) -> int:
    """Version 1's story can compute a negative amount (a contract changed by more than its value): state
    the amount as positive, in the facts and in the text. Returns how many versions were fixed."""
    fixed = 0
    for d in docs:
        for v in d.versions:
            bad = {k: x for k, x in v.facts.items() if _NEGATIVE.match(x)}
            if bad:
                v.facts.update({k: x[1:] for k, x in bad.items()})
                v.spec = replace_all(v.spec, {x: x[1:] for x in bad.values()})
                fixed += 1
    return fixed


def generation_report(queries: list[EvalQuery], gen: Gen, n_story: int, n_distractors: int) -> dict[str, object]:
    chains_seen = gen.report["chains_accepted"] + gen.report["chains_rejected"]
    scored = [q for q in queries if q.gold and not q.hops]  # several valid answers, not a chain's hops
    return {
        "generator": f"acme@{VERSION}",
        "story_documents": n_story,
        "distractor_documents": n_distractors,
        "distractors_by_kind": dict(Counter(d.kind for d in gen.distractors.items)),
        "queries": len(queries),
        "chains_checked": chains_seen,
        "chains_rejected": gen.report["chains_rejected"],
        "dropped_contradicted": gen.report["dropped_contradicted"],
        "typos_added": gen.report["typos_added"],
        "contradictions": 0,  # contradicted questions are dropped (above), never written
        "multi_gold_share": round(sum(1 for q in scored if len(q.gold) > 1) / max(1, len(scored)), 4),
        "known_item_share": round(
            sum(1 for q in queries if q.tags.get("phrasing") == "known_item") / max(1, len(queries)), 4
        ),
        "phrasing": dict(sorted(Counter(q.tags.get("phrasing", "none") for q in queries).items())),
        "typo_share": round(sum(1 for q in queries if q.tags.get("noise") == "typo") / max(1, len(queries)), 4),
        "median_visible_documents_of_askers": _median([gen.visible.get(q.user_id or "", 0) for q in queries]),
        "clock_now": CLOCK_NOW.isoformat(),
    }


def _median(values: list[int]) -> float:
    v = sorted(values)
    if not v:
        return 0.0
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def build_acme2(
    out_dir: Path, *, language: Literal["zh", "en"], seed: int = 7, scale: str | int = "default"
) -> Manifest:
    """Generate ``acme-<language>@2`` into ``out_dir`` and return its manifest."""
    manifest, queries, docs, report, planted = generate(language, seed, scale)
    out = Path(out_dir)
    (out / PLANTED).write_text(json.dumps(planted, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    write_files(out, docs)
    write_manifest(manifest, out)
    write_jsonl(out / EVALSET_NAME, queries)
    (out / GENERATION_REPORT).write_text(
        json.dumps(report, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest
