"""Effective permissions: for one principal, one object and one instant, every action's decision and
every grant behind it (direct, or inherited from an ancestor folder).

Computed from what Casbin itself evaluates: the compiled policy lines of each action, the
principal's subjects through ``g`` (the same role manager the enforcer calls) and the object's
ancestors through ``g2`` (likewise). A line contributes when its subject is one of the principal's
subjects or ``everyone``, its object is one of the object's ancestors, and the instant is inside its
validity; an allow line only counts when the object's secret level is within the principal's
clearance (otherwise it is reported as vetoed). An action is allowed when an allow counts and no
deny contributes: the model's matcher and deny-override effect, term by term.

Every decision is then checked against ``enforce`` (``verify=True``, the default): a disagreement
raises ``ExplanationMismatch`` (the HTTP layer answers 503), so an explanation can never claim
something Casbin would not decide. ``tests/permissions`` prove the two equal on random drives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from drivebench.drive.clock import as_utc, to_us, within
from drivebench.drive.permissions.actions import ACTIONS
from drivebench.drive.permissions.engine import PermissionEngine, Principal


class ExplanationMismatch(RuntimeError):
    """The explanation and ``enforce`` disagree: never answer with either."""


@dataclass(frozen=True)
class GrantSource:
    grant_id: str
    effect: str  # allow | deny
    subject: str  # the grant's subject as granted: user:<id>, role:<r>, dept:<d>, project:<p>, everyone
    matched_as: str  # the Casbin subject that matched: the principal, one of its roles/departments, or everyone
    granted_actions: tuple[str, ...]  # the actions the grant names (the line may be one they imply)
    obj: str  # the grant's object: fld:<id> or doc:<id>
    path: str | None  # that object's path (None when unknown to the caller)
    inherited: bool  # True when the grant sits on an ancestor folder of the object asked about
    valid_from: datetime | None
    valid_until: datetime | None
    vetoed_by_clearance: bool = False  # an allow that would apply, but the secret level exceeds clearance


@dataclass(frozen=True)
class ActionDecision:
    action: str
    allowed: bool
    reason: str  # allowed | denied | clearance | no-grant
    sources: tuple[GrantSource, ...] = ()


@dataclass(frozen=True)
class EffectivePermissions:
    subject: str
    obj: str
    at: datetime
    secret_level: int
    clearance: int
    policy_version: int
    actions: tuple[ActionDecision, ...] = field(default_factory=tuple)

    @property
    def allowed(self) -> list[str]:
        return [a.action for a in self.actions if a.allowed]

    def decision(self, action: str) -> ActionDecision:
        return next(a for a in self.actions if a.action == action)


def _bound(value: str) -> datetime | None:
    if not value:
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(value))


def effective_permissions(
    engine: PermissionEngine,
    principal: Principal,
    obj: str,
    at: datetime,
    level: int = 0,
    *,
    path_of: Callable[[str], str | None] | None = None,
    actions: tuple[str, ...] = ACTIONS,
    verify: bool = True,
) -> EffectivePermissions:
    """Every action's decision on ``obj`` (``doc:<id>`` with its secret ``level``, or ``fld:<id>``) for
    ``principal`` at ``at``, with the grants behind it. ``path_of`` names grant objects by path."""
    at = as_utc(at)
    t = to_us(at)
    subjects = engine.subjects_of(principal)
    ancestors = engine.object_ancestors(obj)
    cleared = principal.clearance >= level
    grants = engine.compiled.grants
    decisions = []
    for act in actions:
        allows: list[GrantSource] = []
        denies: list[GrantSource] = []
        vetoed: list[GrantSource] = []
        for line in engine.lines(act):
            if line.obj not in ancestors or not (line.sub == "everyone" or line.sub in subjects):
                continue
            if not within(t, line.nbf, line.exp):
                continue
            grant = grants.get(line.gid)
            source = GrantSource(
                grant_id=grant.grant_id if grant is not None else line.gid,
                effect=line.eft,
                subject=grant.subject if grant is not None else line.sub,
                matched_as=line.sub,
                granted_actions=tuple(grant.actions) if grant is not None else (line.act,),
                obj=line.obj,
                path=path_of(line.obj) if path_of is not None else None,
                inherited=line.obj != obj,
                valid_from=_bound(line.nbf),
                valid_until=_bound(line.exp),
                vetoed_by_clearance=line.eft == "allow" and not cleared,
            )
            if line.eft == "deny":
                denies.append(source)
            elif cleared:
                allows.append(source)
            else:
                vetoed.append(source)
        allowed = bool(allows) and not denies
        reason = "denied" if denies else "allowed" if allows else "clearance" if vetoed else "no-grant"
        if verify:
            decided = engine.enforce(principal, obj, act, at, level)
            if decided != allowed:
                raise ExplanationMismatch(
                    f"explanation says {allowed} but enforce says {decided} for {principal.subject} {act} {obj} at {at}"
                )

        def order(s: GrantSource) -> tuple[bool, bool, str]:
            return (s.effect != "deny", s.inherited, s.grant_id)

        sources = tuple(sorted(denies, key=order) + sorted(allows, key=order) + sorted(vetoed, key=order))
        decisions.append(ActionDecision(act, allowed, reason, sources))
    return EffectivePermissions(
        subject=principal.subject,
        obj=obj,
        at=at,
        secret_level=level,
        clearance=principal.clearance,
        policy_version=engine.policy_version,
        actions=tuple(decisions),
    )
