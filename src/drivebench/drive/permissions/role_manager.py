"""A Casbin role manager built in bulk from the compiled ``g``/``g2`` links.

Casbin's default ``RoleManager`` adds links one at a time (a ``Role`` object with two sets per
name); at 100k documents building the ``g2`` links that way took 1-2 s per policy version. This
manager implements Casbin's ``RoleManager`` interface over plain dicts and answers ``has_link``
from a memoised ancestor set, with the same semantics as the default manager:

* ``has_link(a, a)`` is True;
* ``has_link(a, b)`` is True when ``b`` is reachable from ``a`` in at most
  ``max_hierarchy_level - 1`` steps (the default manager checks levels 0 .. max-1);
* no pattern matching and no domains (the drive's model uses neither).

``tests/permissions/test_role_manager.py`` proves it equal to Casbin's default manager on random
graphs (chains, diamonds, cycles, depth limits).
"""

from __future__ import annotations

from collections.abc import Iterable

from casbin.rbac.role_manager import RoleManager as CasbinRoleManager

MEMO_LIMIT = 200_000


class BulkRoleManager(CasbinRoleManager):
    def __init__(self, links: Iterable[tuple[str, str]] = (), max_hierarchy_level: int = 10) -> None:
        self.max_hierarchy_level = max_hierarchy_level
        self._roles: dict[str, dict[str, None]] = {}  # name -> its direct roles (insertion-ordered set)
        self._users: dict[str, dict[str, None]] = {}  # role -> its direct members
        self._ancestors: dict[str, frozenset[str]] = {}
        for name1, name2 in links:
            self._link(name1, name2)

    def _link(self, name1: str, name2: str) -> None:
        self._roles.setdefault(name1, {})[name2] = None
        self._users.setdefault(name2, {})[name1] = None

    # ------------------------------------------------------------------ Casbin's interface
    def clear(self) -> None:
        self._roles.clear()
        self._users.clear()
        self._ancestors.clear()

    def add_link(self, name1: str, name2: str, *domain: str) -> None:
        _no_domain(domain)
        self._link(name1, name2)
        self._ancestors.clear()

    def delete_link(self, name1: str, name2: str, *domain: str) -> None:
        _no_domain(domain)
        self._roles.get(name1, {}).pop(name2, None)
        self._users.get(name2, {}).pop(name1, None)
        self._ancestors.clear()

    def has_link(self, name1: str, name2: str, *domain: str) -> bool:
        _no_domain(domain)
        return name2 in self.ancestors(name1)

    def get_roles(self, name: str, *domain: str) -> list[str]:
        _no_domain(domain)
        return list(self._roles.get(name, ()))

    def get_users(self, name: str, *domain: str) -> list[str]:
        _no_domain(domain)
        return list(self._users.get(name, ()))

    def print_roles(self) -> None:
        return None

    # ------------------------------------------------------------------ closure
    def ancestors(self, name: str) -> frozenset[str]:
        """``name`` and everything it reaches within ``max_hierarchy_level - 1`` steps (memoised)."""
        found = self._ancestors.get(name)
        if found is not None:
            return found
        if self.max_hierarchy_level <= 0:
            return frozenset()
        seen = {name}
        frontier = [name]
        for _ in range(self.max_hierarchy_level - 1):
            nxt = []
            for node in frontier:
                for parent in self._roles.get(node, ()):
                    if parent not in seen:
                        seen.add(parent)
                        nxt.append(parent)
            if not nxt:
                break
            frontier = nxt
        found = frozenset(seen)
        if len(self._ancestors) >= MEMO_LIMIT:
            self._ancestors.clear()
        self._ancestors[name] = found
        return found

    @property
    def names(self) -> set[str]:
        return set(self._roles) | set(self._users)


def _no_domain(domain: tuple[str, ...]) -> None:
    if domain:
        raise ValueError("the drive's role managers take no domain")
