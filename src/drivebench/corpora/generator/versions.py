"""The document lifecycle after creation: moves and trash, on the simulated timeline.

Versions are created by the units (``documents.base.new_doc``): each later version changes facts
(budget, approver, material, price, venue, deadline...) and lands 1-13 weeks after the previous one,
never after ``LATEST`` (3 days before ``clock.now``). Here:

* moves (recorded in ``Document.moves``; ``folder`` is where the document ends up): some weekly
  reports and minutes go to the closed-projects archive, some drawings to their product's
  ``released`` folder, some personal notes to the owner's department space, some market research to
  the archive of old drafts;
* trash: about 5% of documents (never a company policy) are trashed some days after their last version.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

from drivebench.corpora.common.model import DocPlan, office_time
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.formats.corpus import Move

POLICIES = frozenset({"handbook", "expense_policy", "it_security", "announcement"})


def _target(s: Scenario, doc: DocPlan, r: float) -> str | None:
    if doc.kind in ("weekly", "minutes") and r < 0.3:
        return s.special["closed"]
    if doc.kind in ("assembly", "part") and r < 0.15:
        return s.folder(f"{doc.folder}/{s.name('released')}", kind="department", owner="design")
    if doc.kind == "note" and r < 0.35:
        return s.dept_path(s.person(doc.owner).department)
    if doc.kind == "research" and r < 0.2:
        return s.special["drafts"]
    return None


def apply_lifecycle(s: Scenario, docs: list[DocPlan], rng: random.Random) -> None:
    for doc in docs:
        target = _target(s, doc, rng.random())
        if target is not None and target != doc.folder:
            at = office_time(rng, doc.created_at + timedelta(days=rng.randint(5, 60)))
            if doc.created_at < at <= LATEST:
                doc.moves.append(Move(at=at, from_folder=doc.folder, to_folder=target))
                doc.folder = target
        if rng.random() < 0.05 and doc.kind not in POLICIES:
            at = office_time(rng, doc.versions[-1].created_at + timedelta(days=rng.randint(3, 40)))
            if at <= LATEST:
                doc.trashed_at = at


def version_stats(docs: list[DocPlan]) -> dict[str, int]:
    counts = Counter(len(d.versions) for d in docs)
    return {
        "documents": len(docs),
        "with_versions": sum(1 for d in docs if len(d.versions) > 1),
        "versions": sum(len(d.versions) for d in docs),
        "moved": sum(1 for d in docs if d.moves),
        "trashed": sum(1 for d in docs if d.trashed_at is not None),
        **{f"docs_with_{k}_versions": v for k, v in sorted(counts.items())},
    }
