"""Drive changes that make a state-dependent fault observable, and the oracle to judge them by.

``stale-acl`` only shows after a grant change and ``stale-index`` only after new versions, so the
demo and the end-to-end tests apply a scenario (while the fault is on) before they evaluate:

* ``revoke_gold_access``: for a share of the queries, a user-level deny of ``preview`` (valid from
  now) on a gold document that query's user may preview now (an administrator fixing wrong access);
* ``publish_new_versions``: a new version (same bytes, "re-saved") of every gold document pinned to
  its head version; the queries are re-pinned to the new head.

``current_policy_oracle`` is the leak oracle for a drive that changed after loading: a permission
engine built from the drive's *current* grants, independent of the engine the server serves with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drivebench.drive.model import GrantRec
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.evaluator.oracle import DriveOracle
from drivebench.formats.evalset import EvalQuery, GoldDoc
from drivebench.simulator.faults.faultset import unit

if TYPE_CHECKING:
    from drivebench.simulator.backend import Simulator


def current_policy_oracle(sim: Simulator) -> DriveOracle:
    """``may_preview(query, doc_id)`` under the drive's policy at the time this oracle is built."""
    return DriveOracle(sim.drive)


@dataclass
class ScenarioResult:
    queries: list[EvalQuery]
    changed: list[str] = field(default_factory=list)  # doc ids touched
    grants: list[str] = field(default_factory=list)  # grant ids added


def revoke_gold_access(
    sim: Simulator, queries: Sequence[EvalQuery], share: float = 1.0, seed: int = 0
) -> ScenarioResult:
    """Deny ``preview`` of one currently previewable gold document to the user of a share of the
    user queries (without ``as_of``). The queries are unchanged: their gold doc is now forbidden."""
    drive = sim.drive
    engine = PermissionEngine(drive)
    now = drive.clock.now()
    out = ScenarioResult(list(queries))
    done: set[tuple[str, str]] = set()
    for q in queries:
        if not q.user_id or q.as_of is not None or unit(seed, "revoke", q.query_id) >= share:
            continue
        principal = engine.user_principal(q.user_id)
        target = next(
            (
                g
                for g in q.gold_ids
                if g in drive.documents
                and drive.documents[g].trashed_at is None
                and engine.enforce(principal, doc_obj(g), "preview", now, drive.documents[g].secret_level)
            ),
            None,
        )
        if target is None or (q.user_id, target) in done:
            continue
        done.add((q.user_id, target))
        grant = GrantRec(
            grant_id=drive.next_grant_id(),
            subject=f"user:{q.user_id}",
            actions=["preview"],
            effect="deny",
            doc_id=target,
            valid_from=now,  # revoked from now on: questions about the past keep their answers
            note="scenario: access revoked",
        )
        drive.add_grant(grant, actor="scenario")
        out.grants.append(grant.grant_id)
        out.changed.append(target)
    return out


def publish_new_versions(sim: Simulator, queries: Sequence[EvalQuery]) -> ScenarioResult:
    """Re-save (same bytes) every gold document pinned to its current head version, as a new version,
    and re-pin those queries to the new head. Queries pinned to older versions are left alone."""
    drive = sim.drive
    heads = {d.doc_id: d.head.version_id for d in drive.documents.values()}
    to_bump = sorted(
        {
            g.doc_id
            for q in queries
            for g in q.gold
            if g.version_id is not None
            and heads.get(g.doc_id) == g.version_id
            and drive.documents[g.doc_id].trashed_at is None
        }
    )
    new_heads: dict[str, str] = {}
    for doc_id in to_bump:
        doc = drive.documents[doc_id]
        version = drive.add_version(doc_id, drive.blob(doc.head.blob), author="scenario", note="re-saved")
        new_heads[doc_id] = version.version_id
    repinned = []
    for q in queries:
        gold = [
            GoldDoc(doc_id=g.doc_id, version_id=new_heads.get(g.doc_id, g.version_id), grade=g.grade)
            if g.version_id is not None and heads.get(g.doc_id) == g.version_id
            else g
            for g in q.gold
        ]
        repinned.append(q.model_copy(update={"gold": gold}))
    return ScenarioResult(repinned, changed=to_bump)
