"""Who may do what: grants compiled into Casbin policies, decided by a Casbin enforcer.

``PermissionEngine`` wraps one enforcer per policy version plus the materialized fast path
(the set of documents a principal may preview at a time), which tests prove equal to ``enforce``.
"""

from drivebench.drive.permissions.actions import allowed_by, denied_by
from drivebench.drive.permissions.engine import PermissionEngine, Principal

__all__ = ["PermissionEngine", "Principal", "allowed_by", "denied_by"]
