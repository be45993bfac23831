"""The permission engine: Casbin enforcers per policy version, plus the materialized fast path.

Four decision verbs, all over the same compiled lines (objects are ``doc_obj(doc_id)`` /
``folder_obj(folder_id)`` of ``compiler.py``; a document's ``level`` is its ``secret_level``, a folder's 0).
``enforce`` is the reference; each other verb is proven equal to it:

* ``enforce`` -- **the reference**: Casbin's decision, evaluating ``policies/drive_model.conf`` over the
  compiled lines (the drive API's per-document checks, effective permissions, name conflicts).
* ``allowed_mask`` -- **the fast path**: a mask over ``doc_ids`` for one principal, action and instant
  (recall's search mask, folder listings, the change feed). Equal to ``enforce`` by
  ``tests/permissions/test_perm_properties.py::test_fast_path_equals_enforce_equals_oracle`` (random
  organisations, every action, against a reference oracle too),
  ``tests/permissions/test_perm_regressions.py::test_fast_path_equals_enforce_on_a_synthetic_thousand_document_drive``
  and ``::test_fast_path_for_other_actions_equals_enforce``.
* ``decide`` -- **the independent re-check**: the compiled decision; ``decide_doc``, the same for a document
  by id, is what recall runs on every hit. Both equal to ``enforce`` by
  ``test_fast_path_equals_enforce_equals_oracle``; that it shares nothing with the mask (a poisoned mask is
  caught: 503) by ``tests/security/test_recheck_independent.py``.
* ``enforce_full`` -- the reference again from one enforcer holding every line (for tests). Equal to
  ``enforce`` by ``test_fast_path_equals_enforce_equals_oracle``.

An engine derived by ``after_grant_changes`` decides like a full compile:
``tests/permissions/test_incremental_policy.py``. The same verbs under the point-in-time rule (at ``as_of``
and now) are ``pointintime.enforce`` and ``pointintime.allowed_mask``.

``enforce``: because the matcher requires ``r.act == p.act``, a line of another action can never match, so
the engine keeps one enforcer per action holding only that action's lines (same model, same role
managers): identical decisions, ~1/5 of the lines scanned per call. ``full_enforcer`` (``enforce_full``)
holds every line in one enforcer.

Both role managers (``g``: users, roles, departments; ``g2``: documents and folders) are
``BulkRoleManager`` objects built in one pass from the compiled links, with a hierarchy limit above
the number of names, so no chain is ever cut (Casbin's default manager stops at 10 levels).

Time: one engine decides at any instant ``at`` of the policy it was compiled from. Which policy and which
instants a request is judged at is the point-in-time rule of ``pointintime.py``: a principal acting as
itself with ``as_of`` T needs the right at T (the engine of the tree at T, ``Policies.engine_at``) **and**
now (the live engine); the evaluation token needs it at T only; ``as_of`` after the clock is refused.

``allowed_mask`` is the fast path used by search (with ``act="preview"``): for one principal at one
instant it computes, with numpy, the documents ``enforce(sub, doc_obj(d), act, t, level)`` allows. It
reads the same compiled lines and the same role-manager closures Casbin uses: the principal's
subjects (``g``) select the candidate lines, the instant selects the lines in force, and each line
marks the folders below its object (``g2``) or its one document; a document is allowed when an
allow reaches it, no deny does, and its secret level is within the principal's clearance. Masks are
cached by (principal, clearance, policy version, the lines in force at t).

``decide`` (``decide_doc`` for a document by id) is the per-hit re-check recall runs on every result (defense in
depth). It is a *compiled decision*: Casbin's matcher evaluated term by term over an index of the same compiled
lines, keyed by (subject, object). For a request it looks up the lines of every (subject the principal reaches
through ``g`` or ``everyone``) x (object or ancestor folder through ``g2``) pair, keeps those in force at ``t``
(``within``), and applies the model's effect: some allow whose clearance holds, and no deny. Cost: |subjects| x
|ancestors| dict look-ups (tens), independent of the size of the policy and the corpus, where ``enforce`` scans
every line of the action (2 ms at 200 lines, 40 ms at 10,000 documents). It shares nothing with the search-time
mask but the role managers Casbin itself calls: no folder positions, no bitmaps, no mask cache, so a bug or a
corruption in the mask is caught by it (the recall answers 503). It takes no lock (the index is built once per
engine, immutable afterwards), so recalls re-check in parallel; ``enforce`` itself stays behind ``CASBIN_LOCK`` and
off the recall path.

The names a request needs are resolved when the engine is compiled: every user's subject and its closure
through ``g`` (``subjects_of``), every document's closure through ``g2`` (``decide_doc``); a request looks
them up, so the compiler's naming and its role graphs stay off the recall path. They are the role managers'
own ``ancestors`` (names compiled later, and role principals, are asked of the role managers).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import casbin
import numpy as np

from drivebench.drive.clock import to_us, within
from drivebench.drive.errors import UnknownPrincipal
from drivebench.drive.history import PolicyView
from drivebench.drive.permissions.actions import ACTIONS
from drivebench.drive.permissions.compiler import (
    BulkRoleManager,
    CompiledPolicy,
    PolicyLine,
    compile_drive,
    compile_grant,
    doc_obj,
    role_principal,
    user_sub,
)
from drivebench.drive.state import Drive
from drivebench.resources import package_dir

MODEL_PATH = package_dir("drivebench.policies") / "drive_model.conf"

# Casbin's default role manager stops at 10 levels: deeper trees would silently lose inheritance.
# The engine sets the limit to (number of names in the hierarchy + 1), never below this floor.
MAX_HIERARCHY = 256
CACHE_BYTES = 256 << 20  # budget for cached masks (one byte per document each)
_I64_MIN, _I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
# Casbin evaluates matchers with simpleeval, which calls ast.parse on every enforce. CPython 3.11 before
# 3.11.8 can fail concurrent ast.parse calls in different threads ("AST constructor recursion depth
# mismatch", gh-106905), and several engines (a rebuild in flight, stale-acl's old engine, an evaluator's
# oracle) may enforce at once. One process-wide lock serialises every enforce; the GIL serialised them anyway.
# Recall never takes it, so reads run in parallel: its per-hit re-check is ``decide``, and its masks are numpy.
# Surfaces that still call ``enforce`` (effective permissions, the drive API's per-document checks) do.
CASBIN_LOCK = threading.RLock()


@dataclass(frozen=True)
class Principal:
    """Who a request acts as. ``subject`` is the Casbin subject; ``user_id`` is None for a role principal."""

    subject: str
    user_id: str | None
    roles: tuple[str, ...]
    department: str | None
    clearance: int
    evaluated_as: bool = False
    caller: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class _FastLines:
    """One action's lines, arranged for the numpy fast path."""

    lines: list[PolicyLine]
    by_subject: dict[str, list[int]]
    nbf: np.ndarray
    exp: np.ndarray
    deny: np.ndarray  # bool per line
    folders: list[np.ndarray | None]  # per line: folder positions it reaches (folder object), else None
    docs: np.ndarray  # per line: the document position it targets (document object), else -1


# change kinds that never touch the policy (a new version, a restore, trash, retention, a rename in place):
# skipped when deriving an engine; if one of them did move the policy version, the count check refuses
_CONTENT_ONLY = frozenset({"updated", "restored", "trashed", "untrashed", "version_deleted", "renamed"})


class PermissionEngine:
    """The decisions of one compiled policy. Decision verbs (see the module docstring for where each is
    proven equal to ``enforce``):

    * ``enforce(principal, obj, act, at, level)`` -- the reference (Casbin).
    * ``allowed_mask(principal, act, at)`` -- the fast path: a boolean mask over ``doc_ids``.
    * ``decide(principal, obj, act, at, level)`` -- the independent re-check (recall's per hit); no lock.
    * ``enforce_full(...)`` -- the reference from one enforcer holding every line (for tests).

    ``obj`` is ``doc_obj(doc_id)`` with the document's ``secret_level`` as ``level``, or ``folder_obj(folder_id)``
    with level 0. Not decisions: ``lines``, ``subjects_of``, ``object_ancestors``, ``user_principal``,
    ``role_principal``."""

    def __init__(
        self,
        drive: Drive | PolicyView,
        compiled: CompiledPolicy | None = None,
        *,
        base: PermissionEngine | None = None,
    ) -> None:
        """Compile ``drive`` (or take ``compiled``). ``base``: an engine of the same drive whose documents,
        secret levels, ``g`` and ``g2`` links are those of ``compiled`` (only grants differ): its document
        list, role managers and folder tree are reused instead of rebuilt (``after_grant_changes``)."""
        self.drive = drive
        self.doc_index: dict[str, int]
        self.levels: np.ndarray  # each document's secret level (int8), in doc_ids order
        self.max_hierarchy_level: int
        self.role_managers: dict[str, BulkRoleManager]
        with drive.lock:  # a consistent snapshot: version, policy and document levels together
            self.policy_version = drive.policy_version
            self.changes_seen = len(drive.changes)
            self.compiled = compiled if compiled is not None else compile_drive(drive)
            user_ids = list(drive.users)
            if base is None:
                self.doc_ids: list[str] = sorted(drive.documents)
                self.levels = np.array([drive.documents[d].secret_level for d in self.doc_ids], dtype=np.int8)
        if base is not None:
            self.doc_ids, self.doc_index, self.levels = base.doc_ids, base.doc_index, base.levels
            self.max_hierarchy_level, self.role_managers = base.max_hierarchy_level, base.role_managers
        else:
            self.doc_index = {d: i for i, d in enumerate(self.doc_ids)}
            names = {x for link in self.compiled.g for x in link} | {x for link in self.compiled.g2 for x in link}
            self.max_hierarchy_level = max(MAX_HIERARCHY, len(names) + 1)
            self.role_managers = {
                "g": BulkRoleManager(self.compiled.g, self.max_hierarchy_level),
                "g2": BulkRoleManager(self.compiled.g2, self.max_hierarchy_level),
            }
        by_act: dict[str, list[PolicyLine]] = defaultdict(list)
        for line in self.compiled.p:
            by_act[line.act].append(line)
        self._lines_by_act = by_act
        self.enforcers = _Enforcers(by_act, self.role_managers)  # built on first use (recall never needs one)
        self._full: casbin.Enforcer | None = None
        self._lock = threading.Lock()
        self._folder_pos: dict[str, int]  # folder object -> position
        self._doc_folder: np.ndarray  # each document's folder position (int64; len(_folder_pos): no folder)
        self._below: dict[str, np.ndarray]  # folder object -> the positions of the folders that inherit from it
        self._user_subject: dict[str, str]  # user id -> its subject
        self._subjects: dict[str, frozenset[str]]  # a user's subject -> subjects_of (``everyone`` included)
        self._doc_objects: dict[str, frozenset[str]]  # document id -> object_ancestors(doc_obj(document id))
        if base is not None:
            self._folder_pos, self._doc_folder, self._below = base._folder_pos, base._doc_folder, base._below
            self._user_subject, self._subjects = base._user_subject, base._subjects
            self._doc_objects = base._doc_objects
        else:
            self._build_tree()
            self._resolve_names(user_ids)
        self._fast: dict[str, _FastLines] = {}
        self._cache: OrderedDict[tuple[object, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()
        self._cache_limit = max(16, CACHE_BYTES // max(1, len(self.doc_ids)))
        self._fast_lines("preview")  # search's action: ready before the first request
        self._decisions: dict[str, dict[tuple[str, str], tuple[tuple[bool, int, int], ...]]] = {}
        self._decision_index("preview")

    @classmethod
    def after_grant_changes(cls, previous: PermissionEngine, drive: Drive) -> PermissionEngine | None:
        """The engine of ``drive``'s current policy, derived from ``previous`` when every policy change since
        it was built is a grant added or removed (the change feed names each; the policy version moved by
        exactly their number; content-only changes such as new versions or trash are skipped): only those grants' lines are recompiled; documents, ``g``, ``g2``, role
        managers and the folder tree are reused (a grant changes none of them). None when anything else
        changed (a user, a folder, a document, a direct edit): the caller compiles in full.

        Grant lines depend only on the grant and, for a project grant, on the project's members (whose
        changes are not grant changes, so they force the full compile). ``tests/permissions`` prove the
        derived engine decides exactly like a full compile."""
        if previous.drive is not drive:
            return None
        with drive.lock:
            changes = [c for c in drive.changes[previous.changes_seen :] if c.kind not in _CONTENT_ONLY]
            bumps = drive.policy_version - previous.policy_version
            if not changes or bumps != len(changes):
                return None
            if any(c.kind != "acl_changed" or not c.grant_id for c in changes):
                return None
            changed = {c.grant_id for c in changes if c.grant_id}  # every one has a grant_id (checked above)
            old = previous.compiled
            by_grant: dict[str, list[PolicyLine]] = defaultdict(list)
            for line in old.p:
                if line.gid not in changed:
                    by_grant[line.gid].append(line)
            grants = {gid: g for gid, g in old.grants.items() if gid not in changed}
            for gid in changed:
                grant = drive.grants.get(gid)
                if grant is not None:
                    grants[gid] = replace(grant, actions=list(grant.actions))
                    by_grant[gid] = compile_grant(drive, grant)
            compiled = CompiledPolicy(
                p=[line for gid in sorted(by_grant) for line in by_grant[gid]],
                g=old.g,
                g2=old.g2,
                grants=dict(sorted(grants.items())),
            )
            return cls(drive, compiled, base=previous)

    @classmethod
    def from_manifest(cls, manifest: object, corpus_dir: Path | None = None) -> PermissionEngine:
        from drivebench.formats.corpus import Manifest

        assert isinstance(manifest, Manifest)
        return cls(Drive.from_manifest(manifest, corpus_dir))

    # ------------------------------------------------------------------ principals
    def user_principal(self, user_id: str) -> Principal:
        u = self.drive.user(user_id)
        subject = self._user_subject.get(u.user_id) or user_sub(u.user_id)
        return Principal(subject, u.user_id, tuple(u.roles), u.department, u.clearance)

    def role_principal(self, role: str, department: str | None = None) -> Principal:
        """A principal that holds one role (and department). Its clearance is the lowest clearance
        of the users who hold that role (in that department, when given): evaluating as a role never
        sees more than every such user could. No such user: public clearance."""
        if role not in self.drive.roles:
            raise UnknownPrincipal(f"unknown user_role {role!r}")
        if department is not None and department not in self.drive.departments:
            raise UnknownPrincipal(f"unknown department {department!r}")
        holders = [
            u.clearance
            for u in self.drive.users.values()
            if role in u.roles and (department is None or u.department == department)
        ]
        return Principal(role_principal(role, department), None, (role,), department, min(holders, default=0))

    # ------------------------------------------------------------------ the decision
    def enforce(self, principal: Principal, obj: str, act: str, at: datetime, level: int = 0) -> bool:
        """Casbin's decision for one (subject, object, action) at ``at``. Any error fails closed (raises)."""
        enforcer = self.enforcers.get(act)
        if enforcer is None:
            raise ValueError(f"unknown action {act!r}; known: {', '.join(ACTIONS)}")
        with CASBIN_LOCK:
            return bool(enforcer.enforce(principal.subject, obj, act, to_us(at), principal.clearance, level))

    def enforce_full(self, principal: Principal, obj: str, act: str, at: datetime, level: int = 0) -> bool:
        """The same decision from one enforcer holding every line (slower; tests prove it equal)."""
        enforcer = self.full_enforcer
        with CASBIN_LOCK:
            return bool(enforcer.enforce(principal.subject, obj, act, to_us(at), principal.clearance, level))

    @property
    def full_enforcer(self) -> casbin.Enforcer:
        with self._lock:
            if self._full is None:
                self._full = _build_enforcer(self.compiled.p, self.role_managers)
            return self._full

    # ------------------------------------------------------------------ the compiled decision (re-check)
    def _decision_index(self, act: str) -> dict[tuple[str, str], tuple[tuple[bool, int, int], ...]]:
        """(line subject, line object) -> ((is deny, nbf, exp), ...) for one action's lines (built once)."""
        index = self._decisions.get(act)
        if index is not None:
            return index
        grouped: dict[tuple[str, str], list[tuple[bool, int, int]]] = defaultdict(list)
        for line in self._lines_by_act.get(act, []):
            nbf = int(line.nbf) if line.nbf else _I64_MIN
            exp = int(line.exp) if line.exp else _I64_MAX
            grouped[(line.sub, line.obj)].append((line.eft == "deny", nbf, exp))
        index = {k: tuple(v) for k, v in grouped.items()}
        with self._lock:
            return self._decisions.setdefault(act, index)

    def decide(self, principal: Principal, obj: str, act: str, at: datetime, level: int = 0) -> bool:
        """``enforce``'s decision, compiled: the model's matcher and effect over the (subject, object)
        index of the same lines. O(|subjects| x |ancestors|); no lock; proven equal to ``enforce``."""
        return self._decide(principal, self.role_managers["g2"].ancestors(obj), act, at, level)

    def decide_doc(self, principal: Principal, doc_id: str, act: str, at: datetime, level: int = 0) -> bool:
        """``decide(principal, doc_obj(doc_id), act, at, level)`` with the document's closure resolved at compile
        (recall's re-check of every hit)."""
        objects = self._doc_objects.get(doc_id)
        if objects is None:  # a document the engine was not compiled with: only its own name reaches it
            objects = self.role_managers["g2"].ancestors(doc_obj(doc_id))
        return self._decide(principal, objects, act, at, level)

    def _decide(self, principal: Principal, objects: frozenset[str], act: str, at: datetime, level: int) -> bool:
        if act not in self.enforcers:
            raise ValueError(f"unknown action {act!r}; known: {', '.join(ACTIONS)}")
        index = self._decisions.get(act) or self._decision_index(act)
        t = to_us(at)
        subjects = self._subjects.get(principal.subject)
        if subjects is None:
            subjects = self.role_managers["g"].ancestors(principal.subject) | {"everyone"}
        cleared = principal.clearance >= level
        allowed = False
        for s in subjects:
            for o in objects:
                for deny, nbf, exp in index.get((s, o), ()):
                    if nbf <= t < exp:
                        if deny:
                            return False
                        allowed = allowed or cleared
        return allowed

    def lines(self, act: str) -> list[PolicyLine]:
        """The compiled policy lines of one action (what that action's enforcer holds)."""
        return self._lines_by_act.get(act, [])

    # ------------------------------------------------------------------ closures (what Casbin's g/g2 see)
    def subjects_of(self, principal: Principal) -> frozenset[str]:
        """The principal's subject, ``everyone``, and every role/department it reaches through ``g``."""
        resolved = self._subjects.get(principal.subject)
        if resolved is not None:
            return resolved
        with self._lock:
            return self.role_managers["g"].ancestors(principal.subject) | {"everyone"}

    def object_ancestors(self, obj: str) -> frozenset[str]:
        """The object and every folder it inherits from through ``g2`` (stops at a break)."""
        with self._lock:
            return self.role_managers["g2"].ancestors(obj)

    # ------------------------------------------------------------------ the fast path
    def _build_tree(self) -> None:
        """Folder positions, each document's folder, and per folder the folders that inherit from it."""
        g2 = self.role_managers["g2"]
        folders = sorted(
            {x for link in self.compiled.g2 for x in link if x.startswith("fld:")}
            | {line.obj for line in self.compiled.p if line.obj.startswith("fld:")}
        )
        self._folder_pos = {f: i for i, f in enumerate(folders)}
        n_f = len(folders)
        doc_folder = np.full(len(self.doc_ids), n_f, dtype=np.int64)  # n_f = "no folder" (always False)
        for i, d in enumerate(self.doc_ids):
            parents = g2.get_roles(doc_obj(d))
            if len(parents) > 1 or any(p not in self._folder_pos for p in parents):
                raise ValueError(f"fast path expects one folder per document, got {parents} for {d}")
            if parents:
                doc_folder[i] = self._folder_pos[parents[0]]
        self._doc_folder = doc_folder
        below: dict[str, list[int]] = defaultdict(list)
        for f, i in self._folder_pos.items():
            for anc in g2.ancestors(f):
                below[anc].append(i)
        self._below = {f: np.array(sorted(ids), dtype=np.int64) for f, ids in below.items()}

    def _resolve_names(self, user_ids: list[str]) -> None:
        """Every user's subject and ``subjects_of``, every document's ``object_ancestors``, off the role managers
        once (what a request then looks up)."""
        g, g2 = self.role_managers["g"], self.role_managers["g2"]
        self._user_subject = {u: user_sub(u) for u in user_ids}
        self._subjects = {s: g.ancestors(s) | {"everyone"} for s in self._user_subject.values()}
        self._doc_objects = {d: g2.ancestors(doc_obj(d)) for d in self.doc_ids}

    def _fast_lines(self, act: str) -> _FastLines:
        fast = self._fast.get(act)
        if fast is not None:
            return fast
        lines = self._lines_by_act.get(act, [])
        by_subject: dict[str, list[int]] = defaultdict(list)
        for i, line in enumerate(lines):
            by_subject[line.sub].append(i)
        folders: list[np.ndarray | None] = []
        docs = np.full(len(lines), -1, dtype=np.int64)
        for i, line in enumerate(lines):
            if line.obj.startswith("fld:"):
                folders.append(self._below.get(line.obj, np.zeros(0, dtype=np.int64)))
            else:
                folders.append(None)
                if line.obj.startswith("doc:"):
                    docs[i] = self.doc_index.get(line.obj[4:], -1)
        fast = _FastLines(
            lines=lines,
            by_subject=dict(by_subject),
            nbf=np.array([int(x.nbf) if x.nbf else _I64_MIN for x in lines], dtype=np.int64),
            exp=np.array([int(x.exp) if x.exp else _I64_MAX for x in lines], dtype=np.int64),
            deny=np.array([x.eft == "deny" for x in lines], dtype=bool),
            folders=folders,
            docs=docs,
        )
        with self._lock:
            self._fast.setdefault(act, fast)
        return fast

    def allowed_mask(self, principal: Principal, act: str, at: datetime) -> np.ndarray:
        """Boolean mask over ``doc_ids``: True where ``enforce(principal, doc, act, at)`` allows."""
        return self._masks(principal, act, at)[0]

    def lookup(self, principal: Principal, act: str, at: datetime) -> Callable[[str], bool]:
        """``obj -> enforce(principal, obj, act, at, level)`` for document and folder objects (a document's level
        is the engine's, a folder's 0), read off the fast path's masks, fetched once here. Each call is the same
        work for an object that exists and one that does not: one dict look-up and one array read (an unknown
        object reads the masks' last slot, which is always False). Every lookup by id or path asks this first,
        so a hidden object and a missing one take the same path and no Casbin call runs for either (no timing
        oracle); the surfaces then confirm a visible object with ``enforce``."""
        _, docs, folders = self._masks(principal, act, at)
        doc_index, folder_pos = self.doc_index, self._folder_pos

        def allowed(obj: str) -> bool:
            kind, _, ident = obj.partition(":")
            if kind == "doc":
                return bool(docs[doc_index.get(ident, -1)])
            return bool(folders[folder_pos.get(obj, -1)])

        return allowed

    def visible(self, principal: Principal, obj: str, act: str, at: datetime) -> bool:
        """``lookup(principal, act, at)(obj)``: one object's decision off the masks."""
        return self.lookup(principal, act, at)(obj)

    def _masks(self, principal: Principal, act: str, at: datetime) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mask over ``doc_ids``, the same with one False slot last, mask over folder positions with one
        False slot last), cached by (action, principal, clearance, the lines in force at ``at``)."""
        if act not in self.enforcers:
            raise ValueError(f"unknown action {act!r}")
        fast = self._fast_lines(act)
        t = to_us(at)
        subjects = self.subjects_of(principal)
        candidates = sorted(i for s in subjects for i in fast.by_subject.get(s, ()))
        active = tuple(i for i in candidates if fast.nbf[i] <= t < fast.exp[i])
        key = (act, principal.subject, principal.clearance, active)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        n_f = len(self._folder_pos)
        f_allow = np.zeros(n_f + 1, dtype=bool)
        f_deny = np.zeros(n_f + 1, dtype=bool)
        d_allow = np.zeros(len(self.doc_ids), dtype=bool)
        d_deny = np.zeros(len(self.doc_ids), dtype=bool)
        for i in active:
            below = fast.folders[i]
            if below is not None:
                (f_deny if fast.deny[i] else f_allow)[below] = True
            elif fast.docs[i] >= 0:
                (d_deny if fast.deny[i] else d_allow)[fast.docs[i]] = True
        allow = f_allow[self._doc_folder] | d_allow
        deny = f_deny[self._doc_folder] | d_deny
        padded = np.zeros(len(self.doc_ids) + 1, dtype=bool)  # the last slot: an unknown document
        padded[:-1] = allow & ~deny & (self.levels <= principal.clearance)
        # a folder's level is 0 (the matcher's clearance veto); the last slot (no folder) is never allowed
        folders = f_allow & ~f_deny & (principal.clearance >= 0)
        mask = padded[:-1]
        for a in (padded, mask, folders):
            a.flags.writeable = False
        masks = (mask, padded, folders)
        with self._lock:
            self._cache[key] = masks
            while len(self._cache) > self._cache_limit:
                self._cache.popitem(last=False)
        return masks

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()


class _Enforcers(Mapping[str, casbin.Enforcer]):
    """One Casbin enforcer per action, each built the first time it is asked for (a policy change does not
    pay for enforcers nobody calls: recall's re-check is ``decide``)."""

    def __init__(self, by_act: dict[str, list[PolicyLine]], role_managers: dict[str, BulkRoleManager]) -> None:
        self._by_act, self._role_managers = by_act, role_managers
        self._built: dict[str, casbin.Enforcer] = {}
        self._lock = threading.Lock()

    def __getitem__(self, act: str) -> casbin.Enforcer:
        enforcer = self._built.get(act)
        if enforcer is not None:
            return enforcer
        if act not in ACTIONS:
            raise KeyError(act)
        with self._lock:
            if act not in self._built:
                self._built[act] = _build_enforcer(self._by_act.get(act, []), self._role_managers)
            return self._built[act]

    def __contains__(self, act: object) -> bool:
        return act in ACTIONS

    def __iter__(self) -> Iterator[str]:
        return iter(ACTIONS)

    def __len__(self) -> int:
        return len(ACTIONS)


def _build_enforcer(lines: list[PolicyLine], role_managers: dict[str, BulkRoleManager]) -> casbin.Enforcer:
    """An enforcer over ``lines`` whose ``g``/``g2`` are the given (shared, prebuilt) role managers."""
    enforcer = casbin.Enforcer(str(MODEL_PATH))
    enforcer.enable_auto_build_role_links(False)
    for ptype, rm in role_managers.items():
        enforcer.rm_map[ptype] = rm
        enforcer.model["g"][ptype].rm = rm
    enforcer.add_function("within", within)
    if lines:
        enforcer.model.add_policies("p", "p", [line.as_list() for line in lines])
    return enforcer
