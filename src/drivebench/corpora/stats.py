"""Corpus statistics: what ``drivebench corpus stats`` prints (and checks thresholds against)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from drivebench.formats.corpus import EVALSET_NAME, load_manifest
from drivebench.formats.evalset import load_evalset


def corpus_stats(corpus_dir: Path) -> dict[str, Any]:
    corpus_dir = Path(corpus_dir)
    m = load_manifest(corpus_dir)
    types = {d.doc_id: d.file_type for d in m.documents}
    evalset = corpus_dir / EVALSET_NAME
    queries = load_evalset(evalset) if evalset.is_file() else []
    kinds = Counter(q.tags.get("kind", "untagged") for q in queries)
    hops = Counter(str(len(q.hops)) for q in queries if q.hops)
    gold_by_type = Counter(types[g] for q in queries for g in set(q.gold_ids) if g in types)
    n_docs = len(m.documents)
    from drivebench.corpora.builtin import corpus_version

    return {
        "name": m.name,
        "corpus_version": corpus_version(corpus_dir),
        "language": m.language,
        "documents": n_docs,
        "documents_by_type": dict(sorted(Counter(types.values()).items())),
        "versions": sum(len(d.versions) for d in m.documents),
        "documents_with_versions": sum(1 for d in m.documents if len(d.versions) > 1),
        "share_with_versions": round(sum(1 for d in m.documents if len(d.versions) > 1) / n_docs, 3) if n_docs else 0.0,
        "trashed": sum(1 for d in m.documents if d.trashed_at is not None),
        "moved": sum(1 for d in m.documents if d.moves),
        "users": len(m.users),
        "users_by_role": dict(sorted(Counter(r for u in m.users for r in u.roles).items())),
        "departments": len(m.departments),
        "sub_departments": sum(1 for d in m.departments if d.parent),
        "projects": len(m.projects),
        "folders": len(m.folders),
        "folders_breaking_inheritance": sum(1 for f in m.folders if f.break_inheritance),
        "grants": len(m.grants),
        "deny_grants": sum(1 for g in m.grants if g.effect == "deny"),
        "expiring_grants": sum(1 for g in m.grants if g.valid_until is not None),
        "documents_by_secret_level": dict(sorted(Counter(d.secret_level for d in m.documents).items())),
        "queries": len(queries),
        "queries_by_kind": dict(sorted(kinds.items())),
        "queries_by_hops": dict(sorted(hops.items())),
        "queries_by_length": dict(sorted(Counter(q.tags.get("length", "untagged") for q in queries).items())),
        "queries_with_as_of": sum(1 for q in queries if q.as_of is not None),
        "gold_by_type": dict(sorted(gold_by_type.items())),
    }
