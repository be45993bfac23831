"""The permission engine: one Casbin enforcer per policy version, plus the materialized fast path.

``enforce`` is the decision. ``previewable_mask`` is the fast path used by search: for one
principal at one instant it computes, with numpy over precomputed reachability, the set of
documents ``enforce(sub, doc, "preview", t)`` allows, and caches it by
(principal, policy version, the set of policy lines in force at t). Tests prove the two equal;
search re-checks every hit with ``enforce`` anyway (defense in depth).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import casbin
import numpy as np
from casbin.rbac.default_role_manager.role_manager import RoleManager

from drivebench.simulator.drive.errors import UnknownPrincipal
from drivebench.simulator.drive.state import Drive
from drivebench.simulator.permissions.compiler import (
    CompiledPolicy,
    PolicyLine,
    compile_drive,
    doc_obj,
    folder_obj,
    role_principal,
    user_sub,
)
from drivebench.simulator.permissions.timeutil import to_us, within

MODEL_PATH = Path(__file__).resolve().parents[2] / "policies" / "drive_model.conf"
if not MODEL_PATH.is_file():  # installed as a wheel: policies/ is the package drivebench.policies
    from drivebench import policies as _policies

    MODEL_PATH = Path(_policies.__file__).parent / "drive_model.conf"

# Casbin's default role manager stops at 10 levels: deeper trees would silently lose inheritance.
MAX_HIERARCHY = 256
CACHE_SIZE = 4096


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


class PermissionEngine:
    def __init__(self, drive: Drive, compiled: CompiledPolicy | None = None) -> None:
        self.drive = drive
        self.policy_version = drive.policy_version
        self.compiled = compiled if compiled is not None else compile_drive(drive)
        self.enforcer = _build_enforcer(self.compiled)
        self._lock = threading.Lock()
        self.doc_ids: list[str] = sorted(drive.documents)
        self.doc_index: dict[str, int] = {d: i for i, d in enumerate(self.doc_ids)}
        self.levels = np.array([drive.documents[d].secret_level for d in self.doc_ids], dtype=np.int8)
        self._build_fast_path()
        self._cache: OrderedDict[tuple[object, ...], np.ndarray] = OrderedDict()

    @classmethod
    def from_manifest(cls, manifest: object, corpus_dir: Path | None = None) -> PermissionEngine:
        from drivebench.corpora.format import Manifest

        assert isinstance(manifest, Manifest)
        return cls(Drive.from_manifest(manifest, corpus_dir))

    # ------------------------------------------------------------------ principals
    def user_principal(self, user_id: str) -> Principal:
        u = self.drive.user(user_id)
        return Principal(user_sub(u.user_id), u.user_id, tuple(u.roles), u.department, u.clearance)

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
        with self._lock:
            return bool(self.enforcer.enforce(principal.subject, obj, act, to_us(at), principal.clearance, level))

    def explain(self, principal: Principal, obj: str, act: str, at: datetime, level: int = 0) -> list[str]:
        """The policy line Casbin matched (empty when nothing matched)."""
        with self._lock:
            _, rule = self.enforcer.enforce_ex(principal.subject, obj, act, to_us(at), principal.clearance, level)
        return list(rule)

    def may(self, principal: Principal, doc_id: str, act: str, at: datetime) -> bool:
        doc = self.drive.doc(doc_id)
        return self.enforce(principal, doc_obj(doc_id), act, at, doc.secret_level)

    def may_preview(self, user_id: str, doc_id: str, at: datetime) -> bool:
        return self.may(self.user_principal(user_id), doc_id, "preview", at)

    def may_on_folder(self, principal: Principal, folder_id: str, act: str, at: datetime) -> bool:
        return self.enforce(principal, folder_obj(folder_id), act, at, 0)

    # ------------------------------------------------------------------ the fast path
    def _build_fast_path(self) -> None:
        children: dict[str, list[str]] = defaultdict(list)
        for child, parent in self.compiled.g2:
            children[parent].append(child)
        reach_cache: dict[str, np.ndarray] = {}

        def reach(obj: str) -> np.ndarray:
            if obj in reach_cache:
                return reach_cache[obj]
            found: list[int] = []
            stack, seen = [obj], {obj}
            while stack:
                node = stack.pop()
                if node.startswith("doc:"):
                    idx = self.doc_index.get(node[4:])
                    if idx is not None:
                        found.append(idx)
                for c in children.get(node, ()):
                    if c not in seen:
                        seen.add(c)
                        stack.append(c)
            arr = np.array(sorted(found), dtype=np.int64)
            reach_cache[obj] = arr
            return arr

        preview = [line for line in self.compiled.p if line.act == "preview"]
        self._lines: list[PolicyLine] = preview
        self._by_subject: dict[str, list[int]] = defaultdict(list)
        for i, line in enumerate(preview):
            self._by_subject[line.sub].append(i)
        self._nbf = np.array([int(x.nbf) if x.nbf else np.iinfo(np.int64).min for x in preview], dtype=np.int64)
        self._exp = np.array([int(x.exp) if x.exp else np.iinfo(np.int64).max for x in preview], dtype=np.int64)
        self._reach = [reach(line.obj) for line in preview]

    def subjects_of(self, principal: Principal) -> set[str]:
        """The principal's subject and every role/department it reaches through ``g`` (per Casbin)."""
        with self._lock:
            roles = self.enforcer.get_implicit_roles_for_user(principal.subject)
        return {principal.subject, "everyone", *roles}

    def previewable_mask(self, principal: Principal, at: datetime) -> np.ndarray:
        """Boolean mask over ``doc_ids``: True where the principal may preview the document at ``at``."""
        t = to_us(at)
        candidates = sorted(i for s in self.subjects_of(principal) for i in self._by_subject.get(s, ()))
        active = tuple(i for i in candidates if self._nbf[i] <= t < self._exp[i])
        key = (principal.subject, principal.clearance, self.policy_version, active)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        n = len(self.doc_ids)
        allow = np.zeros(n, dtype=bool)
        deny = np.zeros(n, dtype=bool)
        for i in active:
            (allow if self._lines[i].eft == "allow" else deny)[self._reach[i]] = True
        mask = allow & ~deny & (self.levels <= principal.clearance)
        mask.flags.writeable = False
        with self._lock:
            self._cache[key] = mask
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return mask

    def previewable_docs(self, user_id: str, at: datetime) -> set[str]:
        mask = self.previewable_mask(self.user_principal(user_id), at)
        return {self.doc_ids[i] for i in np.flatnonzero(mask)}


def _build_enforcer(compiled: CompiledPolicy) -> casbin.Enforcer:
    enforcer = casbin.Enforcer(str(MODEL_PATH))
    enforcer.enable_auto_build_role_links(False)
    for ptype in ("g", "g2"):
        rm = RoleManager(max_hierarchy_level=MAX_HIERARCHY)
        enforcer.rm_map[ptype] = rm
        enforcer.model["g"][ptype].rm = rm
    enforcer.add_function("within", within)
    if compiled.p:
        enforcer.model.add_policies("p", "p", [line.as_list() for line in compiled.p])
    if compiled.g:
        enforcer.model.add_policies("g", "g", [list(x) for x in compiled.g])
    if compiled.g2:
        enforcer.model.add_policies("g", "g2", [list(x) for x in compiled.g2])
    enforcer.build_role_links()
    return enforcer
