"""The bulk-built role manager answers exactly as Casbin's default role manager, on random graphs
(chains, diamonds, cycles) and every hierarchy limit, and an enforcer using it decides the same."""

from __future__ import annotations

import casbin
from casbin.rbac.default_role_manager.role_manager import RoleManager
from hypothesis import given
from hypothesis import strategies as st

from drivebench.drive.clock import within
from drivebench.drive.permissions.compiler import BulkRoleManager
from drivebench.drive.permissions.engine import MODEL_PATH
from tests.support.perm_org import examples

NODES = [f"n{i}" for i in range(8)]
edges = st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)), max_size=16)


@examples(300)
@given(links=edges, level=st.integers(0, 9))
def test_bulk_role_manager_equals_casbins_default(links: list[tuple[str, str]], level: int) -> None:
    default = RoleManager(level)
    for a, b in links:
        default.add_link(a, b)
    bulk = BulkRoleManager(links, level)
    for a in [*NODES, "unknown"]:
        assert set(bulk.get_roles(a)) == set(default.get_roles(a))
        assert set(bulk.get_users(a)) == set(default.get_users(a))
        for b in [*NODES, "unknown"]:
            assert bulk.has_link(a, b) == default.has_link(a, b), (a, b, level)


def test_bulk_role_manager_add_and_delete_links_invalidate_the_closure() -> None:
    rm = BulkRoleManager([("a", "b")], 10)
    assert rm.has_link("a", "b") and not rm.has_link("a", "c")
    rm.add_link("b", "c")
    assert rm.has_link("a", "c")
    rm.delete_link("b", "c")
    assert not rm.has_link("a", "c")
    rm.clear()
    assert not rm.has_link("a", "b") and rm.has_link("a", "a")


def _enforcer(rm_g, rm_g2, lines) -> casbin.Enforcer:
    e = casbin.Enforcer(str(MODEL_PATH))
    e.enable_auto_build_role_links(False)
    for ptype, rm in (("g", rm_g), ("g2", rm_g2)):
        e.rm_map[ptype] = rm
        e.model["g"][ptype].rm = rm
    e.add_function("within", within)
    e.model.add_policies("p", "p", lines)
    return e


@examples(100)
@given(
    g=st.lists(st.tuples(st.sampled_from(["u", "r1", "r2", "d1", "d2"]), st.sampled_from(["r1", "r2", "d1", "d2"]))),
    g2=st.lists(st.tuples(st.sampled_from(["doc", "f1", "f2", "f3"]), st.sampled_from(["f1", "f2", "f3"]))),
    lines=st.lists(
        st.tuples(
            st.sampled_from(["u", "r1", "r2", "d1", "d2", "everyone"]),
            st.sampled_from(["doc", "f1", "f2", "f3"]),
            st.sampled_from(["allow", "deny"]),
        ),
        max_size=8,
    ),
)
def test_enforce_with_bulk_role_managers_equals_casbins_default(g, g2, lines) -> None:
    policy = [[sub, obj, "preview", eft, "", "", f"g{i}"] for i, (sub, obj, eft) in enumerate(lines)]
    default_g, default_g2 = RoleManager(10), RoleManager(10)
    for a, b in g:
        default_g.add_link(a, b)
    for a, b in g2:
        default_g2.add_link(a, b)
    ours = _enforcer(BulkRoleManager(g, 10), BulkRoleManager(g2, 10), policy)
    theirs = _enforcer(default_g, default_g2, policy)
    for obj in ("doc", "f1", "f2", "f3"):
        assert ours.enforce("u", obj, "preview", 0, 3, 0) == theirs.enforce("u", obj, "preview", 0, 3, 0)
