"""Summary numbers of a built corpus (for tests, reports and the CLI)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from drivebench.formats.corpus import Manifest
from drivebench.formats.evalset import EvalQuery


def corpus_stats(m: Manifest, queries: list[EvalQuery]) -> dict[str, Any]:
    types = {d.doc_id: d.file_type for d in m.documents}
    gold_by_type: Counter[str] = Counter()
    for q in queries:
        for t in {types[g.doc_id] for g in q.gold}:
            gold_by_type[t] += 1
    return {
        "documents": len(m.documents),
        "by_type": dict(sorted(Counter(d.file_type for d in m.documents).items())),
        "with_versions": sum(1 for d in m.documents if len(d.versions) > 1),
        "versions": sum(len(d.versions) for d in m.documents),
        "trashed": sum(1 for d in m.documents if d.trashed_at is not None),
        "moved": sum(1 for d in m.documents if d.moves),
        "by_level": dict(sorted(Counter(d.secret_level for d in m.documents).items())),
        "users": len(m.users),
        "departments": len(m.departments),
        "projects": len(m.projects),
        "folders": len(m.folders),
        "break_folders": sum(1 for f in m.folders if f.break_inheritance),
        "grants": len(m.grants),
        "deny_grants": sum(1 for g in m.grants if g.effect == "deny"),
        "bounded_grants": sum(1 for g in m.grants if g.valid_from or g.valid_until),
        "queries": len(queries),
        "by_kind": dict(sorted(Counter(q.tags["kind"] for q in queries).items())),
        "by_hops": dict(sorted(Counter(q.tags["hops"] for q in queries).items())),
        "by_length": dict(sorted(Counter(q.tags["length"] for q in queries).items())),
        "by_role": dict(sorted(Counter(q.tags["role"] for q in queries).items())),
        "by_version_mode": dict(sorted(Counter(q.tags["version"] for q in queries if "version" in q.tags).items())),
        "by_reason": dict(sorted(Counter(q.tags["reason"] for q in queries if "reason" in q.tags).items())),
        "gold_by_type": dict(sorted(gold_by_type.items())),
        "tag_file_type": dict(sorted(Counter(q.tags["file_type"] for q in queries).items())),
        "access_mean": round(sum(len(v) for v in (m.access or {}).values()) / max(1, len(m.users)), 1),
    }
