"""The leak oracle for a corpus: the corpus's own Casbin policies, independent of the target.

``corpus_oracle(dir)`` builds a fresh permission engine from the corpus manifest (not from the
server under test) and answers "may this query's principal preview this document at the query's
time?". The query's time is its ``as_of``, else the corpus clock's ``now`` (or ``at`` if given). A past time is
judged on the drive as it stood then: grants bounded by when they existed and the folder tree of that time, so
a document moved since is judged in the folder it was in (``drive.history``: one engine per tree epoch).
A document id the corpus does not know is treated as not previewable (fail closed: a target that
returns unknown documents is reported, not excused). Each decision is Casbin's ``enforce`` (the reference, not
the simulator's compiled fast path: the oracle shares nothing with the target's search), memoised per
(principal, document, time): the engine is a snapshot, so a repeated question has the same answer.

``explain(query, doc_id)`` says why a document may not be previewed (the failed-queries rows of a leak): the grant
and deny chain of ``drive.permissions.effective`` (the same compiled lines and role closures Casbin evaluates, its
decision checked against ``enforce``), the clearance veto, grants that reach the document but are not in force at
the query's time (expired or not yet valid), and a folder that breaks inheritance. ``reasons(query, doc_id)`` gives
the same reasons each with its cause (``leak_causes``: deny, clearance, expired, not yet valid, inheritance broken,
no grant), which the leak tables group by.

``previewable(query)`` is every document the query's principal may preview at its time that exists then (created,
not in the recycle bin): the visible share of the corpus (``visibility``) and the permitted documents under-fill
counts. It reads the engine's compiled masks (``PermissionEngine.allowed_mask``, proven equal to ``enforce``), one
pass per principal and time, cached: a Casbin call per document would take a minute on acme@3 (386 documents x 75
principal-times), and these sets are never used to call a result a leak. ``visible_share(query)`` is its share of the
documents that exist then; ``matching_permitted(query, enough)`` counts those that share a distinctive term with
the query (``corpus_terms``: only when the oracle was built from a corpus directory, which has the texts).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from drivebench.drive.clock import as_utc, to_us, within
from drivebench.drive.errors import DriveError
from drivebench.drive.history import PolicyView, epoch_of, epoch_start
from drivebench.drive.permissions import PermissionEngine, Principal
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.permissions.effective import ExplanationMismatch, GrantSource, effective_permissions
from drivebench.drive.state import Drive
from drivebench.evaluator.corpus_terms import CorpusTerms
from drivebench.evaluator.leak_causes import (
    CLEARANCE,
    DENY,
    EXPIRED,
    INHERITANCE_BROKEN,
    NO_GRANT,
    NOT_YET_VALID,
    UNEXPLAINED,
    UNKNOWN,
)
from drivebench.formats.corpus import SECRET_LEVELS, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery


class DriveOracle:
    """The oracle over a drive's policy as it stands when the oracle is built (the engine is a snapshot)."""

    def __init__(
        self, drive: Drive, at: datetime | None = None, corpus_dir: Path | None = None, manifest: Manifest | None = None
    ) -> None:
        self.drive = drive
        self.corpus_terms = CorpusTerms(corpus_dir, manifest) if corpus_dir is not None else None
        self.description = f"the corpus's policies ({drive.name}) at each query's time"
        self.engine = PermissionEngine(self.drive)
        self.at = as_utc(at) if at is not None else self.drive.clock.now()
        self._tree_changes = drive.placement_times()
        self._engines: dict[int, PermissionEngine] = {len(self._tree_changes): self.engine}
        self._principals: dict[tuple[str | None, str | None, str | None], Principal] = {}
        self._decisions: dict[tuple[Any, ...], bool] = {}
        self._previewable: dict[tuple[Any, ...], frozenset[str]] = {}
        self._existing: dict[datetime, int] = {}

    def _engine_at(self, at: datetime) -> PermissionEngine:
        """The engine compiled from the tree as it stood at ``at`` (the current one after the last move)."""
        epoch = epoch_of(self._tree_changes, at)
        if epoch not in self._engines:
            self._engines[epoch] = PermissionEngine(PolicyView(self.drive, epoch_start(self._tree_changes, epoch)))
        return self._engines[epoch]

    def principal(self, q: EvalQuery) -> Principal:
        key = (q.user_id, q.user_role, q.department)
        if key not in self._principals:
            if q.user_id:
                self._principals[key] = self.engine.user_principal(q.user_id)
            else:
                self._principals[key] = self.engine.role_principal(q.user_role or "", q.department)
        return self._principals[key]

    def __call__(self, q: EvalQuery, doc_id: str) -> bool:
        if doc_id not in self.engine.doc_index:
            return False
        at = as_utc(q.as_of) if q.as_of is not None else self.at
        key = (q.user_id, q.user_role, q.department, doc_id, at)
        if key not in self._decisions:
            try:
                level = self.engine.drive.doc(doc_id).secret_level
                engine = self._engine_at(at)
                self._decisions[key] = engine.enforce(self.principal(q), doc_obj(doc_id), "preview", at, level)
            except DriveError:
                self._decisions[key] = False
        return self._decisions[key]

    def previewable(self, q: EvalQuery) -> frozenset[str]:
        """The documents ``q``'s principal may preview at the query's time among those that exist then (created and
        not in the recycle bin); computed once per principal and time."""
        at = self._at(q)
        key = (q.user_id, q.user_role, q.department, at)
        if key not in self._previewable:
            engine = self._engine_at(at)
            mask = engine.allowed_mask(self.principal(q), "preview", at)
            self._previewable[key] = frozenset(
                d for d, allowed in zip(engine.doc_ids, mask.tolist(), strict=True) if allowed and self._exists(d, at)
            )
        return self._previewable[key]

    def visible_share(self, q: EvalQuery) -> float | None:
        """The share of the documents existing at the query's time that its principal may preview (``None``: no
        document exists then)."""
        at = self._at(q)
        if at not in self._existing:
            self._existing[at] = sum(1 for d in self.drive.documents if self._exists(d, at))
        return len(self.previewable(q)) / self._existing[at] if self._existing[at] else None

    def matching_permitted(self, q: EvalQuery, enough: int) -> int | None:
        """How many documents ``q``'s principal may preview share a distinctive term with the query at its time,
        counted up to ``enough`` (``None`` without the corpus's texts)."""
        if self.corpus_terms is None:
            return None
        return self.corpus_terms.count_matching(q.query, sorted(self.previewable(q)), self._at(q), enough)

    def _exists(self, doc_id: str, at: datetime) -> bool:
        doc = self.drive.documents.get(doc_id)
        return doc is not None and doc.created_at <= at and not doc.trashed_at_time(at)

    def _at(self, q: EvalQuery) -> datetime:
        return as_utc(q.as_of) if q.as_of is not None else self.at

    def _path_of(self, obj: str, at: datetime) -> str:
        kind, _, ident = obj.partition(":")
        try:
            if kind == "fld":
                return self.drive.folder_path_at(ident, at)
            return self.drive.doc_path_at(self.drive.doc(ident), at)
        except (KeyError, DriveError):
            return obj

    def _who(self, p: Principal) -> str:
        if p.user_id is not None:
            return f"user {p.user_id}"
        return f"role {p.roles[0] if p.roles else '?'}" + (f" in {p.department}" if p.department else "")

    def explain(self, q: EvalQuery, doc_id: str) -> list[str]:
        """Why ``q``'s principal may not preview ``doc_id`` at the query's time, one reason per item (``[]`` when it
        may). Read off the compiled policy lines the oracle's Casbin engine holds (``effective_permissions``, whose
        decision is checked against ``enforce``: an explanation that disagrees is never shown)."""
        return [text for _, text in self.reasons(q, doc_id)]

    def reasons(self, q: EvalQuery, doc_id: str) -> list[tuple[str, str]]:
        """``explain``'s reasons, each as ``(cause, text)`` with a cause of ``leak_causes.CAUSES``."""
        if doc_id not in self.engine.doc_index:
            return [(UNKNOWN, f"{doc_id} is not a document of the corpus: an unknown id is never previewable")]
        at = self._at(q)
        try:
            doc = self.drive.doc(doc_id)
            engine = self._engine_at(at)
            principal = self.principal(q)
            obj = doc_obj(doc_id)
            eff = effective_permissions(
                engine,
                principal,
                obj,
                at,
                doc.secret_level,
                path_of=lambda o: self._path_of(o, at),
                actions=("preview",),
            )
        except ExplanationMismatch as exc:
            return [(UNEXPLAINED, f"no explanation: it disagreed with Casbin's decision ({exc})")]
        except DriveError as exc:
            return [(UNEXPLAINED, f"not previewable: {exc}")]
        decision = eff.decision("preview")
        if decision.allowed:
            return []
        who = self._who(principal)
        doc_path = self._path_of(obj, at)
        reasons = [
            (DENY, self._deny_text(s, doc_path)) for s in decision.sources if s.effect == "deny"
        ]  # a deny beats every allow: first
        level = doc.secret_level
        if level > principal.clearance:
            vetoed = [s.grant_id for s in decision.sources if s.vetoed_by_clearance]
            text = f"secret level {level} ({_level_name(level)}) > {who}'s clearance {principal.clearance}"
            text += f" ({_level_name(principal.clearance)})"
            if vetoed:
                text += f"; the allow of grant {', '.join(vetoed)} is vetoed"
            reasons.append((CLEARANCE, text))
        if not any(s.effect == "allow" for s in decision.sources):
            subjects = sorted(engine.subjects_of(principal))
            ancestors = engine.object_ancestors(obj)
            t = to_us(at)
            for line in engine.lines("preview"):  # the same compiled lines, outside their validity at ``at``
                if line.eft != "allow" or line.obj not in ancestors:
                    continue
                if not (line.sub == "everyone" or line.sub in subjects) or within(t, line.nbf, line.exp):
                    continue
                where = self._path_of(line.obj, at)
                if line.exp and t >= int(line.exp):
                    reasons.append((EXPIRED, f"grant {line.gid} to {line.sub} on {where} expired {_day(line.exp)}"))
                else:
                    reasons.append(
                        (NOT_YET_VALID, f"grant {line.gid} to {line.sub} on {where} starts {_day(line.nbf)}")
                    )
            folders = sorted((a for a in ancestors if a.startswith("fld:")), key=lambda f: len(self._path_of(f, at)))
            if folders:
                top = folders[0][4:]
                node = self.drive.folders.get(top)
                if node is not None and node.break_inheritance and node.parent_id is not None:
                    where = self._path_of(folders[0], at)
                    reasons.append(
                        (INHERITANCE_BROKEN, f"folder {where} breaks inheritance: grants above it do not reach it")
                    )
            subjects_text = ", ".join(subjects)
            reasons.append(
                (NO_GRANT, f"no grant in force allows preview of {doc_path} to {who} (subjects {subjects_text})")
            )
        return reasons

    def _deny_text(self, s: GrantSource, doc_path: str) -> str:
        kind = "folder" if s.obj.startswith("fld:") else "document"
        text = f"{kind} {s.path or s.obj} denies {s.matched_as}"
        if s.subject != s.matched_as:
            text += f" (granted to {s.subject})"
        text += f" (grant {s.grant_id}"
        if s.inherited:
            text += f", inherited by {doc_path}"
        if s.valid_until is not None:
            text += f", until {s.valid_until.date().isoformat()}"
        return text + ")"


def _level_name(level: int) -> str:
    return SECRET_LEVELS[level] if 0 <= level < len(SECRET_LEVELS) else str(level)


def _day(bound: str) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(bound))).date().isoformat()


def corpus_oracle(corpus_dir: Path, at: datetime | None = None, manifest: Manifest | None = None) -> DriveOracle:
    """The oracle of a corpus as written on disk (a fresh drive, independent of any running simulator);
    ``manifest``: its corpus.json already read (a run reads it once)."""
    manifest = manifest if manifest is not None else load_manifest(corpus_dir)
    return DriveOracle(Drive.from_manifest(manifest, None), at, corpus_dir, manifest)
