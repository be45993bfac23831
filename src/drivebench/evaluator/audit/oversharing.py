"""The oversharing audit: for each document at or above a secret level, who may preview it now and
through which grant chain, with the documents that are shared too widely flagged and sorted by risk.

Who may preview comes from Casbin (the engine's previewable mask, proven equal to ``enforce``); the
chain of each (user, document) comes from ``effective_permissions`` (checked against ``enforce``):
every allow grant behind the decision, with its subject kind (user, role, department, project,
everyone) and whether it is inherited from a folder above.

Flags (each a finding; a document may carry several):

* ``broad-subject``: more than ``threshold`` users outside the document's owning department (the
  ``owner_department`` of its nearest folder that names one) preview it through a broad subject
  (``everyone``, a role, or a department);
* ``stale-membership``: someone previews it through a project grant by an open-ended membership
  (``valid_until`` null) of role ``external``: external members must have an end date;
* ``outlived-classification``: the document's level was raised (tags ``level_raised_at`` and
  ``level_was``) and a personal allow grant (to a user or a project) that predates the raise (``valid_from`` null or earlier; corpus
  grants have no creation time, so a grant without ``valid_from`` counts as older) still lets a user
  who is not in the owning department preview it.

Risk = level weight (internal 1, confidential 2, secret 3) x (previewers outside the owning
department + 1) x (1 + number of flags); the report is sorted by risk, then doc id.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.permissions.effective import effective_permissions
from drivebench.drive.state import Drive
from drivebench.formats.corpus import SECRET_LEVELS, Manifest, level_rank

BROAD_KINDS = ("everyone", "role", "department")
PERSONAL_KINDS = ("user", "project")
FLAGS = ("broad-subject", "stale-membership", "outlived-classification")
DEFAULT_THRESHOLD = 15


def subject_kind(subject: str) -> str:
    if subject == "everyone":
        return "everyone"
    prefix = subject.split(":", 1)[0]
    return {"user": "user", "role": "role", "dept": "department", "project": "project"}.get(prefix, prefix)


@dataclass
class DocAudit:
    doc_id: str
    path: str
    secret_level: str
    owner_department: str | None
    previewers: list[str]
    outside: list[str]
    chains: dict[str, dict[str, Any]]  # grant id -> {subject, kind, path, inherited, users}
    flags: list[dict[str, Any]] = field(default_factory=list)

    @property
    def risk(self) -> int:
        return (level_rank(self.secret_level)) * (len(self.outside) + 1) * (1 + len(self.flags))

    def as_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "path": self.path,
            "secret_level": self.secret_level,
            "owner_department": self.owner_department,
            "risk": self.risk,
            "previewers": len(self.previewers),
            "previewers_outside_department": len(self.outside),
            "by_subject_kind": dict(Counter(c["kind"] for c in self.chains.values())),
            "flags": self.flags,
            "grant_chains": sorted(self.chains.values(), key=lambda c: (-c["users"], c["grant_id"])),
        }


def _owner(drive: Drive, folder_id: str) -> str | None:
    for f in drive.folder_ancestors(folder_id):
        if f.owner_department:
            return f.owner_department
    return None


def _in_department(drive: Drive, user_id: str, dept: str | None) -> bool:
    return dept is not None and dept in drive.department_chain(drive.users[user_id].department)


def audit_oversharing(
    manifest: Manifest,
    level: str = "confidential",
    threshold: int = DEFAULT_THRESHOLD,
    at: datetime | None = None,
) -> dict[str, Any]:
    drive = Drive.from_manifest(manifest, None)
    engine = PermissionEngine(drive)
    now = at if at is not None else drive.clock.now()
    floor = level_rank(level)
    tags = {d.doc_id: d.tags for d in manifest.documents}
    users = sorted(drive.users)
    principals = {u: engine.user_principal(u) for u in users}
    masks = {u: engine.allowed_mask(principals[u], "preview", now) for u in users}
    externals = {
        (f"project:{p.id}", m.user_id)
        for p in drive.projects.values()
        for m in p.members
        if m.role == "external" and m.valid_until is None and (m.valid_from is None or m.valid_from <= now)
    }
    audits: list[DocAudit] = []
    for doc_id in engine.doc_ids:
        doc = drive.documents[doc_id]
        if doc.secret_level < floor or doc.trashed_at_time(now):
            continue
        i = engine.doc_index[doc_id]
        previewers = [u for u in users if masks[u][i]]
        owner = _owner(drive, doc.folder_id)
        outside = [u for u in previewers if not _in_department(drive, u, owner)]
        chains: dict[str, dict[str, Any]] = {}
        via: dict[str, list[tuple[str, str, Any]]] = defaultdict(list)  # user -> (grant id, kind, source)
        for u in previewers:
            eff = effective_permissions(
                engine, principals[u], doc_obj(doc_id), now, doc.secret_level, actions=("preview",)
            )
            for s in eff.decision("preview").sources:
                if s.effect != "allow" or s.vetoed_by_clearance:
                    continue
                kind = subject_kind(s.subject)
                chain = chains.setdefault(
                    s.grant_id,
                    {
                        "grant_id": s.grant_id,
                        "subject": s.subject,
                        "kind": kind,
                        "object": s.obj,
                        "path": drive.folder_path(s.obj[4:]) if s.obj.startswith("fld:") else drive.doc_path(doc),
                        "inherited": s.inherited,
                        "valid_from": s.valid_from.isoformat() if s.valid_from else None,
                        "valid_until": s.valid_until.isoformat() if s.valid_until else None,
                        "users": 0,
                    },
                )
                chain["users"] += 1
                via[u].append((s.grant_id, kind, s))
        audit = DocAudit(
            doc_id, drive.doc_path(doc), SECRET_LEVELS[doc.secret_level], owner, previewers, outside, chains
        )
        broad = sorted({u for u in outside if any(k in BROAD_KINDS for _, k, _ in via[u])})
        if len(broad) > threshold:
            grants = sorted({g for u in broad for g, k, _ in via[u] if k in BROAD_KINDS})
            audit.flags.append({"flag": "broad-subject", "users": len(broad), "grants": grants})
        stale = sorted(
            {(g, u) for u in previewers for g, k, s in via[u] if k == "project" and (s.subject, u) in externals}
        )
        if stale:
            audit.flags.append(
                {
                    "flag": "stale-membership",
                    "grants": sorted({g for g, _ in stale}),
                    "users": sorted({u for _, u in stale}),
                }
            )
        raised = tags.get(doc_id, {}).get("level_raised_at")
        if raised:
            when = datetime.fromisoformat(raised)
            old = sorted({g for u in outside for g, _, s in via[u] if s.valid_from is None or s.valid_from < when})
            if old:
                audit.flags.append(
                    {
                        "flag": "outlived-classification",
                        "grants": old,
                        "raised_at": raised,
                        "level_was": tags[doc_id].get("level_was"),
                    }
                )
        audits.append(audit)
    audits.sort(key=lambda a: (-a.risk, a.doc_id))
    flagged = [a for a in audits if a.flags]
    return {
        "corpus": manifest.name,
        "at": now.isoformat(),
        "level": level,
        "threshold": threshold,
        "counts": {
            "documents": len(audits),
            "flagged": len(flagged),
            "by_flag": {f: sum(1 for a in audits for x in a.flags if x["flag"] == f) for f in FLAGS},
        },
        "documents": [a.as_dict() for a in audits],
    }


def findings(result: dict[str, Any]) -> set[tuple[str, str]]:
    """The (flag, doc_id) pairs of an audit result (what a planted-overshare test compares)."""
    return {(f["flag"], d["doc_id"]) for d in result["documents"] for f in d["flags"]}
