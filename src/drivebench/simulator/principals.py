"""Who a request acts as (``principal_for``) and what a writer may see of a folder's names (``doc_lister``).
Both read the drive and its current policy only."""

from __future__ import annotations

import logging
from collections.abc import Callable

from drivebench.drive.errors import Forbidden, PermissionCheckFailed, UnknownPrincipal
from drivebench.drive.permissions import Principal
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.permissions.pointintime import Policies
from drivebench.drive.tokens import TokenInfo

log = logging.getLogger("drivebench.simulator")


# Every evaluate-as is logged; the in-memory trail keeps the newest ones only. Unbounded, a long probe session
# (tens of thousands of evaluate-as requests a minute) grew it without end, and every full garbage collection
# walked all of it while requests, writes included, waited.
AUDIT_KEEP = 10_000


def principal_for(
    policies: Policies,
    audit: list[dict[str, object]],
    token: TokenInfo,
    *,
    user_id: str | None = None,
    user_role: str | None = None,
    department: str | None = None,
    trust_body: bool = False,
) -> Principal:
    """Resolve who a request acts as. The token decides; the body may only narrow or, with the
    ``evaluate-as`` scope, name someone else (appended to ``audit`` and logged). ``trust_body`` is only ever
    true under the role-from-body fault: the body names who acts, whatever the token (``body_principal``)."""
    engine, drive = policies.engine, policies.drive
    if trust_body:
        return body_principal(policies, token, user_id=user_id, user_role=user_role, department=department)
    if token.user_id is not None:
        # a user token is judged against its own user before anything is looked up, so naming another
        # user, role or department answers the same 403 whether that name exists or not (no oracle)
        me = drive.user(token.user_id)
        if user_id is not None and user_id != me.user_id:
            raise Forbidden(f"this token acts as {me.user_id}; evaluating as {user_id} needs the evaluate-as scope")
        if user_role is not None and user_role not in me.roles:
            raise Forbidden(f"user {me.user_id} does not hold the role {user_role!r}")
        if department is not None and department != me.department:
            raise Forbidden(f"user {me.user_id} is not in department {department!r}")
        return engine.user_principal(me.user_id)
    if not token.has("evaluate-as"):
        raise Forbidden("this token may not evaluate as another principal")
    if user_id is not None and user_id not in drive.users:
        raise UnknownPrincipal(f"unknown user_id {user_id!r}")
    if user_role is not None and user_role not in drive.roles:
        raise UnknownPrincipal(f"unknown user_role {user_role!r}")
    if department is not None and department not in drive.departments:
        raise UnknownPrincipal(f"unknown department {department!r}")
    if user_id is not None:
        p = engine.user_principal(user_id)
        if user_role is not None and user_role not in p.roles:
            raise UnknownPrincipal(f"user {user_id} does not hold the role {user_role!r}")
    elif user_role is not None:
        p = engine.role_principal(user_role, department)
    else:
        raise UnknownPrincipal("a service token must name the principal: give user_id or user_role")
    principal = Principal(p.subject, p.user_id, p.roles, p.department, p.clearance, True, token.subject)
    entry: dict[str, object] = {"caller": token.subject, "as": p.subject, "at": drive.clock.now().isoformat()}
    audit.append(entry)
    if len(audit) > 2 * AUDIT_KEEP:  # the newest AUDIT_KEEP (the log has every one), trimmed in batches
        del audit[:-AUDIT_KEEP]
    log.info("evaluate-as %s by %s", p.subject, token.subject)
    return principal


def body_principal(
    policies: Policies,
    token: TokenInfo,
    *,
    user_id: str | None = None,
    user_role: str | None = None,
    department: str | None = None,
) -> Principal:
    """FAULT role-from-body: the principal the request body describes, as a vendor API that reads the role from
    the body would: the user ``user_id``; else the role ``user_role`` (in ``department``); else the token user's
    first role in ``department``. Unknown names answer 400 as they do for an evaluate-as."""
    engine, drive = policies.engine, policies.drive
    for kind, name, known in (
        ("user_id", user_id, drive.users),
        ("user_role", user_role, drive.roles),
        ("department", department, drive.departments),
    ):
        if name is not None and name not in known:
            raise UnknownPrincipal(f"unknown {kind} {name!r}")
    if user_id is not None:
        p = engine.user_principal(user_id)
        if user_role is not None and user_role not in p.roles:
            raise UnknownPrincipal(f"user {user_id} does not hold the role {user_role!r}")
    elif user_role is not None:
        p = engine.role_principal(user_role, department)
    elif token.user_id is not None and drive.user(token.user_id).roles:
        p = engine.role_principal(drive.user(token.user_id).roles[0], department)
    else:
        raise UnknownPrincipal("name the principal: give user_id or user_role")
    log.info("role-from-body: token %s acts as %s named in the body", token.subject, p.subject)
    return Principal(p.subject, p.user_id, p.roles, p.department, p.clearance, False, token.subject)


def doc_lister(policies: Policies, principal: Principal | None) -> Callable[[str], bool] | None:
    """``visible(doc_id)``: may ``principal`` list the document now (None: the admin, sees all). Built
    outside the drive lock (it takes the engine), called inside writes to judge name conflicts."""
    if principal is None:
        return None
    try:  # off the masks (proven equal to enforce): a hidden namesake costs what no namesake costs
        lookup = policies.engine.lookup(principal, "list", policies.drive.clock.now())
    except Exception as exc:  # fail closed: refuse the write rather than guess
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc

    def visible(doc_id: str) -> bool:
        return lookup(doc_obj(doc_id))  # newer than the engine: False, the caller has never been shown it

    return visible
