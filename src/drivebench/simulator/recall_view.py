"""What the console's recall playground (``server/console/recall_view.py``) shows beside the results, for an
admin viewing as someone: the documents that matched but were withheld, each with the reason the
effective-permissions explanation gives.

The withheld list never decides a permission: it searches without the permission filter, drops what the principal
got, and asks ``permission_admin.effective`` (which checks its explanation against Casbin's ``enforce``) why each
remaining document was withheld. ``PIPELINES``: the pipelines the playground may run (``recall.recall_as`` with
``RecallQuery.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from drivebench.drive.permissions.effective import GrantSource
from drivebench.drive.permissions.engine import Principal
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.search.retrieval.pipelines import PIPELINES
from drivebench.simulator import permission_admin as admin
from drivebench.simulator.recall import RecallQuery

if TYPE_CHECKING:
    from drivebench.simulator.backend import Simulator

__all__ = ["PIPELINES", "Withheld", "withheld"]


@dataclass(frozen=True)
class Withheld:
    doc_id: str
    name: str
    path: str
    secret_level: str
    score: float
    reason: str  # trash | denied | clearance | no-grant | revoked
    detail: list[str] = field(default_factory=list)


def _source(s: GrantSource) -> str:
    where = s.path or s.obj
    inherited = f", inherited from {where}" if s.inherited else f" on {where}"
    until = f", valid until {s.valid_until.isoformat()}" if s.valid_until else ""
    veto = " (vetoed: the secret level exceeds the clearance)" if s.vetoed_by_clearance else ""
    return (
        f"{s.effect} {'/'.join(s.granted_actions)} to {s.subject} (matched as {s.matched_as}){inherited}{until}{veto}"
    )


def _context(sim: Simulator, principal: Principal, doc_id: str, at: datetime) -> list[str]:
    """What explains a ``no-grant``: folders above the document that break inheritance, grants to the
    principal's subjects on it or above it that have expired, project memberships that have ended (facts of
    the drive shown beside the explanation, not a decision)."""
    drive = sim.drive
    doc = drive.documents[doc_id]
    out = []
    chain = list(drive.folder_ancestors(doc.folder_id))
    for node in chain:
        if node.break_inheritance:
            out.append(f"inheritance is broken at {drive.folder_path(node.folder_id)}")
    subjects = sim.engine.subjects_of(principal) | {"everyone"}
    objects = {f.folder_id for f in chain}
    for g in list(drive.grants.values()):
        on_it = g.doc_id == doc_id or (g.folder_id is not None and g.folder_id in objects)
        if on_it and g.subject in subjects and g.valid_until is not None and g.valid_until <= at:
            out.append(f"grant {g.grant_id} ({g.effect} {'/'.join(g.actions)} to {g.subject}) expired {g.valid_until}")
    for project in list(drive.projects.values()):
        for m in project.members:
            if m.user_id == principal.user_id and m.valid_until is not None and m.valid_until <= at:
                out.append(f"membership of project {project.id} ended {m.valid_until}")
    return out


def withheld(sim: Simulator, principal: Principal, query: RecallQuery, got: set[str]) -> list[Withheld]:
    """The documents ``query`` matches among every current version (no permission, no trash filter) that
    the principal did not get, with the explanation's reason for each."""
    at = sim.resolve_as_of(query.as_of)
    when = None if query.as_of is None else at
    with sim.drive.lock:
        current = {v.version_id for d in sim.drive.documents.values() if (v := d.version_at(at)) is not None}
    with sim.store.lock:
        mask = np.fromiter((vid in current for vid in sim.store.version_ids), dtype=bool)
    hits = sim.retriever_for(query.pipeline).search(query.query, mask, query.top_k)
    out = []
    for h in hits:
        doc = sim.drive.documents.get(h.doc_id)
        if doc is None or h.doc_id in got:
            continue
        path = sim.drive.doc_path_at(doc, when)
        base: dict[str, Any] = {
            "doc_id": doc.doc_id,
            "name": doc.placement_at(when)[1],
            "path": path,
            "secret_level": SECRET_LEVELS[doc.secret_level],
            "score": float(h.score),
        }
        if doc.trashed_at_time(at):
            out.append(Withheld(**base, reason="trash", detail=[f"in the trash since {doc.trashed_at}"]))
            continue
        decision = admin.effective(sim, principal, path, query.as_of, doc.doc_id).permissions.decision("preview")
        if decision.allowed:
            continue  # allowed, ranked below the top_k of what the principal may see: not withheld
        detail = [_source(s) for s in decision.sources]
        if decision.reason == "clearance":
            detail.insert(
                0, f"secret level {base['secret_level']} is above the clearance {SECRET_LEVELS[principal.clearance]}"
            )
        if decision.reason in ("no-grant", "revoked"):
            detail += _context(sim, principal, doc.doc_id, at)
        out.append(Withheld(**base, reason=decision.reason, detail=detail))
    return out
