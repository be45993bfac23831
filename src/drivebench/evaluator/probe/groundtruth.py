"""The corpus as ground truth: who may preview which document now, and why a user may not.

``GroundTruth(drive, manifest)`` builds a fresh ``PermissionEngine`` (Casbin) from the drive, never
from the target. ``forbidden(user_id, doc_id)`` is True when the user may not preview the document at
the corpus clock's ``now`` or the document is in the trash. ``why(user_id, doc_id)`` names the reason
and the grant path that should hide the document:

* ``deny``: a deny grant reaches the document (``effective_permissions`` lists it);
* ``clearance``: an allow reaches it but the secret level exceeds the user's clearance;
* ``trashed``: the user could preview it, but it is in the trash;
* ``moved-away``: the user may preview a folder the document was moved out of (manifest ``moves``);
* ``expired-membership``: a project grant reaches it, the user's membership of that project ended;
* ``expired-grant``: a grant to one of the user's subjects reaches it, but it ended;
* ``broken-inheritance``: a grant to the user's subjects sits on a folder above the document, cut
  off by a folder that breaks inheritance;
* ``no-grant``: nothing reaches it (another department's document, say).

The first three come from ``effective_permissions`` (checked against ``enforce``); the others refine
``no-grant`` from the corpus structure, first match in the order above.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.actions import allowed_by
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.effective import effective_permissions
from drivebench.drive.state import Drive
from drivebench.formats.corpus import SECRET_LEVELS, Manifest

REASONS: dict[str, str] = {
    "deny": "an explicit deny reaches the document",
    "clearance": "the secret level is above the user's clearance",
    "trashed": "the document is in the trash",
    "moved-away": "moved out of a folder the user may preview",
    "expired-membership": "the user's project membership ended",
    "expired-grant": "the grant that gave access has ended",
    "broken-inheritance": "a folder grant above is cut off by break_inheritance",
    "no-grant": "no grant reaches the document for this user",
}


@dataclass(frozen=True)
class Why:
    reason: str
    path: list[dict[str, Any]]  # the grants (or facts) that hide the document, for the report

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "meaning": REASONS[self.reason], "path": self.path}


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


class GroundTruth:
    def __init__(self, drive: Drive, manifest: Manifest | None = None, at: datetime | None = None) -> None:
        self.drive = drive
        self.manifest = manifest
        self.engine = PermissionEngine(drive)
        self.now = at if at is not None else drive.clock.now()
        self._masks: dict[str, np.ndarray] = {}
        self._moves: dict[str, list[str]] = {}
        self._grants: tuple[int, list[Any]] | None = None  # (policy version, allow grants implying preview)
        if manifest is not None:
            for d in manifest.documents:
                if d.moves:
                    self._moves[d.doc_id] = [m.from_folder for m in d.moves]

    # ------------------------------------------------------------------ decisions
    def users(self) -> list[str]:
        return sorted(self.drive.users)

    def docs(self) -> list[str]:
        return sorted(self.drive.documents)

    def mask(self, user_id: str) -> np.ndarray:
        if user_id not in self._masks:
            self._masks[user_id] = self.engine.allowed_mask(self.engine.user_principal(user_id), "preview", self.now)
        return self._masks[user_id]

    def trashed(self, doc_id: str) -> bool:
        return self.drive.documents[doc_id].trashed_at_time(self.now)

    def may_preview(self, user_id: str, doc_id: str) -> bool:
        """Casbin's decision (``enforce``) at ``now``; unknown documents are never previewable."""
        if doc_id not in self.drive.documents:
            return False
        level = self.engine.drive.doc(doc_id).secret_level
        return self.engine.enforce(self.engine.user_principal(user_id), doc_obj(doc_id), "preview", self.now, level)

    def forbidden(self, user_id: str, doc_id: str) -> bool:
        if doc_id not in self.engine.doc_index:
            return True
        return not bool(self.mask(user_id)[self.engine.doc_index[doc_id]]) or self.trashed(doc_id)

    def level(self, doc_id: str) -> str:
        return SECRET_LEVELS[self.drive.documents[doc_id].secret_level]

    def doc_path(self, doc_id: str) -> str:
        return self.drive.doc_path(self.drive.documents[doc_id])

    def _path_of(self, obj: str) -> str | None:
        if obj.startswith("fld:"):
            return self.drive.folder_path(obj[4:])
        if obj.startswith("doc:") and obj[4:] in self.drive.documents:
            return self.doc_path(obj[4:])
        return None

    # ------------------------------------------------------------------ why not
    def why(self, user_id: str, doc_id: str, *, verify: bool = True) -> Why:
        """The reason and grant path. ``verify``: check the decision against ``enforce`` (Casbin) too;
        sampling explains its pool without it (the mask is proven equal to ``enforce``) and verifies
        every pair it picks."""
        principal = self.engine.user_principal(user_id)
        doc = self.drive.documents[doc_id]
        eff = effective_permissions(
            self.engine,
            principal,
            doc_obj(doc_id),
            self.now,
            doc.secret_level,
            path_of=self._path_of,
            actions=("preview",),
            verify=verify,
        )
        decision = eff.decision("preview")
        sources = [_source(s) for s in decision.sources]
        if decision.allowed:
            if not self.trashed(doc_id):
                raise ValueError(f"{user_id} may preview {doc_id}: not a forbidden pair")
            span = next((s for s in doc.trash_spans if s.end is None), None)
            trashed = _iso(span.start if span else doc.trashed_at)
            return Why("trashed", [{"fact": "trashed", "trashed_at": trashed}, *sources])
        if decision.reason == "denied":
            return Why("deny", [s for s in sources if s["effect"] == "deny"])
        if decision.reason == "clearance":
            fact = {"fact": "clearance", "secret_level": self.level(doc_id), "clearance": SECRET_LEVELS[eff.clearance]}
            return Why("clearance", [fact, *sources])
        return self._why_no_grant(user_id, doc_id)

    def _previewing_grants(self) -> list[Any]:
        if self._grants is None or self._grants[0] != self.drive.policy_version:
            grants = [
                g
                for g in self.drive.grants.values()
                if g.effect == "allow" and any("preview" in allowed_by(a) for a in g.actions)
            ]
            self._grants = (self.drive.policy_version, grants)
        return self._grants[1]

    def _why_no_grant(self, user_id: str, doc_id: str) -> Why:
        principal = self.engine.user_principal(user_id)
        doc = self.drive.documents[doc_id]
        subjects = self.engine.subjects_of(principal)
        cleared = principal.clearance >= doc.secret_level
        for old in self._moves.get(doc_id, []):
            try:
                folder = self.drive.folder_by_path(old)
            except Exception:
                continue
            if cleared and self.engine.enforce(principal, folder_obj(folder.folder_id), "preview", self.now):
                return Why("moved-away", [{"fact": "moved", "from": old, "to": self.doc_path(doc_id)}])
        reaching = self.engine.object_ancestors(doc_obj(doc_id))
        structural = {folder_obj(f.folder_id) for f in self.drive.folder_ancestors(doc.folder_id)} | {doc_obj(doc_id)}
        grants = self._previewing_grants()

        def entry(g: Any, **extra: Any) -> dict[str, Any]:
            obj = doc_obj(g.doc_id) if g.doc_id else folder_obj(g.folder_id or "")
            return {
                "grant_id": g.grant_id,
                "effect": g.effect,
                "subject": g.subject,
                "object": obj,
                "path": self._path_of(obj),
                "valid_from": _iso(g.valid_from),
                "valid_until": _iso(g.valid_until),
                **extra,
            }

        def obj_of(g: Any) -> str:
            return doc_obj(g.doc_id) if g.doc_id else folder_obj(g.folder_id or "")

        def live(g: Any) -> bool:
            return (g.valid_from is None or g.valid_from <= self.now) and (
                g.valid_until is None or self.now < g.valid_until
            )

        def covers(g: Any) -> bool:
            return g.subject in subjects or g.subject == "everyone" or self._member(g.subject, user_id)

        for g in grants:
            if obj_of(g) in reaching and g.subject.startswith("project:") and live(g):
                project = self.drive.projects.get(g.subject.removeprefix("project:"))
                for m in project.members if project else []:
                    if m.user_id == user_id and m.valid_until is not None and m.valid_until <= self.now:
                        return Why("expired-membership", [entry(g, membership_ended=_iso(m.valid_until))])
        for g in grants:
            ended = g.valid_until is not None and g.valid_until <= self.now
            if obj_of(g) in reaching and ended and covers(g):
                return Why("expired-grant", [entry(g)])
        for g in grants:
            obj = obj_of(g)
            if obj in structural and obj not in reaching and live(g) and covers(g):
                breaker = self._breaker(doc.folder_id, obj)
                return Why("broken-inheritance", [entry(g), {"fact": "break_inheritance", "at": breaker}])
        holders = [entry(g) for g in grants if obj_of(g) in reaching and live(g)][:5]
        return Why("no-grant", [{"fact": "no grant for the user's subjects", "grants_here": holders}])

    def _member(self, subject: str, user_id: str) -> bool:
        if not subject.startswith("project:"):
            return False
        project = self.drive.projects.get(subject.removeprefix("project:"))
        return project is not None and any(m.user_id == user_id for m in project.members)

    def _breaker(self, folder_id: str, above: str) -> str | None:
        for f in self.drive.folder_ancestors(folder_id):
            if folder_obj(f.folder_id) == above:
                return None
            if f.break_inheritance:
                return self.drive.folder_path(f.folder_id)
        return None


def _source(s: Any) -> dict[str, Any]:
    return {
        "grant_id": s.grant_id,
        "effect": s.effect,
        "subject": s.subject,
        "matched_as": s.matched_as,
        "object": s.obj,
        "path": s.path,
        "inherited": s.inherited,
        "valid_from": _iso(s.valid_from),
        "valid_until": _iso(s.valid_until),
        "vetoed_by_clearance": s.vetoed_by_clearance,
    }
