"""Permission fast path vs Casbin ``enforce``: materializing what a principal may preview.

For 1k, 10k and 100k documents on a synthetic organisation (``make_drive``: nested departments,
users with roles and clearances, projects with time-bounded memberships, a folder tree with breaks,
allow/deny grants with validity windows on folders and documents), measured in one process:

* engine construction: compile + Casbin enforcers + role links + fast-path arrays; next to it, the
  same role links built the way Casbin's default role manager does (one ``add_link`` per link);
* the materialized previewable set (``allowed_mask`` with ``preview``), cold (cache miss) and warm, over a sample
  of users (median, p95, max);
* per-document ``enforce`` (the per-action enforcer the engine uses, and one enforcer holding every
  line): measured on every document at 1k, on a random sample at 10k and 100k and extrapolated to
  all documents (the output says which);
* ratio = per-document enforce over the whole drive / cold materialization (target >= 1,000x), and
  the fast path checked equal to ``enforce`` on every sampled document;
* the recall hot path on the seed corpus: one ``enforce`` per hit, per-action enforcer vs one
  enforcer holding every line.

Writes ``benchmarks/results/bench_permissions.json`` and ``.md``. ``BENCH_QUICK=1``: fewer samples.
Run: ``.venv/bin/python benchmarks/bench_permissions.py``.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import casbin
from casbin.rbac.default_role_manager.role_manager import RoleManager

from drivebench.drive.clock import SimClock, to_us, within
from drivebench.drive.model import (
    DepartmentRec,
    DocumentRec,
    GrantRec,
    MembershipRec,
    ProjectRec,
    UserRec,
    VersionRec,
)
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import compile_drive, doc_obj
from drivebench.drive.permissions.engine import MODEL_PATH
from drivebench.drive.state import Drive

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
ROLES = ("engineer", "manager", "finance", "hr", "legal", "sales", "it", "auditor")
ACTION_CHOICES = ("list", "preview", "preview", "preview", "download", "edit", "manage")


def make_drive(n_docs: int, seed: int = 0) -> Drive:
    rng = random.Random(seed)
    drive = Drive(f"synthetic-{n_docs}", "en", SimClock(NOW))

    # departments: hq -> 6 divisions -> 4 teams each
    drive.departments["hq"] = DepartmentRec("hq", "HQ", None)
    teams = []
    for i in range(6):
        div = f"div{i}"
        drive.departments[div] = DepartmentRec(div, div, "hq")
        for j in range(4):
            team = f"{div}-t{j}"
            drive.departments[team] = DepartmentRec(team, team, div)
            teams.append(team)
    depts = sorted(drive.departments)

    n_users = max(40, min(2000, n_docs // 100))
    users = [f"u{i:04d}" for i in range(n_users)]
    for u in users:
        roles = rng.sample(ROLES, rng.choice((1, 1, 2)))
        clearance = rng.choices((0, 1, 2, 3), weights=(1, 5, 3, 1))[0]
        drive.users[u] = UserRec(u, u, rng.choice(teams), roles, clearance)

    for p in range(20):
        members = []
        for u in rng.sample(users, rng.randint(3, min(25, n_users))):
            lo = hi = None
            if rng.random() < 0.3:
                lo = NOW - timedelta(days=rng.randint(1, 300))
                hi = lo + timedelta(days=rng.randint(1, 600))
            members.append(MembershipRec(u, "member", lo, hi))
        drive.projects[f"p{p}"] = ProjectRec(f"p{p}", f"project {p}", members)

    # folders: the root, one folder per top-level department, then a random tree
    root = drive._add_folder_node("", None, False, None, "other")
    folders = [root.folder_id]
    depth = {root.folder_id: 0}
    tops = []
    for d in depts:
        node = drive._add_folder_node(d, root.folder_id, False, d, "department")
        folders.append(node.folder_id)
        depth[node.folder_id] = 1
        tops.append((node.folder_id, d))
    n_folders = max(20, n_docs // 50)
    while len(folders) < n_folders:
        parent = rng.choice(folders[1:])
        if depth[parent] >= 9:
            continue
        node = drive._add_folder_node(f"f{len(folders)}", parent, rng.random() < 0.05, None, "other")
        folders.append(node.folder_id)
        depth[node.folder_id] = depth[parent] + 1

    leafish = folders[1:]
    for i in range(n_docs):
        doc_id = f"d{i:06d}"
        level = rng.choices((0, 1, 2, 3), weights=(2, 5, 2, 1))[0]
        version = VersionRec(f"{doc_id}-v1", 1, "", 0, NOW - timedelta(days=30))
        drive.documents[doc_id] = DocumentRec(
            doc_id, f"{doc_id}.md", rng.choice(leafish), "md", level, NOW - timedelta(days=30), [version]
        )

    def subject() -> str:
        kind = rng.choices(("user", "role", "dept", "project", "everyone"), weights=(4, 3, 4, 1, 1))[0]
        if kind == "user":
            return f"user:{rng.choice(users)}"
        if kind == "role":
            return f"role:{rng.choice(ROLES)}"
        if kind == "dept":
            return f"dept:{rng.choice(depts)}"
        if kind == "project":
            return f"project:p{rng.randrange(20)}"
        return "everyone"

    def bounds() -> tuple[datetime | None, datetime | None]:
        if rng.random() >= 0.2:
            return None, None
        lo = NOW - timedelta(days=rng.randint(0, 200))
        return lo, lo + timedelta(days=rng.randint(1, 400))

    n = 0
    for folder_id, dept in tops:
        n += 1
        drive.grants[f"g{n}"] = GrantRec(f"g{n}", f"dept:{dept}", ["edit"], "allow", folder_id=folder_id)
    for _ in range(len(folders) // 2):
        n += 1
        deny = rng.random() < 0.12
        lo, hi = bounds()
        drive.grants[f"g{n}"] = GrantRec(
            f"g{n}",
            subject(),
            [rng.choice(("preview", "list")) if deny else rng.choice(ACTION_CHOICES)],
            "deny" if deny else "allow",
            folder_id=rng.choice(folders),
            valid_from=lo,
            valid_until=hi,
        )
    doc_ids = sorted(drive.documents)
    for _ in range(max(5, n_docs // 200)):
        n += 1
        deny = rng.random() < 0.12
        lo, hi = bounds()
        drive.grants[f"g{n}"] = GrantRec(
            f"g{n}",
            subject(),
            ["preview" if deny else rng.choice(ACTION_CHOICES)],
            "deny" if deny else "allow",
            doc_id=rng.choice(doc_ids),
            valid_from=lo,
            valid_until=hi,
        )
    drive.policy_version = 1
    return drive


SIZES = (1_000, 10_000, 100_000)
TARGET_COLD_MS = 100.0
TARGET_RATIO = 1_000.0


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 4)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_size(n_docs: int, quick: bool) -> dict[str, Any]:
    rng = random.Random(n_docs)
    drive = make_drive(n_docs)
    t0 = time.perf_counter()
    compiled = compile_drive(drive)
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine = PermissionEngine(drive, compiled)
    t_engine = time.perf_counter() - t0
    t0 = time.perf_counter()  # Casbin's default role manager, one add_link per link, for comparison
    default_rm = {"g": RoleManager(10), "g2": RoleManager(10)}
    for a, b in compiled.g:
        default_rm["g"].add_link(a, b)
    for a, b in compiled.g2:
        default_rm["g2"].add_link(a, b)
    t_default_links = time.perf_counter() - t0
    del default_rm

    now = drive.clock.now()
    users = rng.sample(sorted(drive.users), min(len(drive.users), 20 if quick else 60))
    principals = [engine.user_principal(u) for u in users]
    engine.clear_cache()
    t0 = time.perf_counter()
    first = engine.allowed_mask(principals[0], "preview", now)
    t_first = time.perf_counter() - t0
    cold, warm, sizes = [t_first], [], [int(first.sum())]
    for p in principals[1:]:
        t0 = time.perf_counter()
        m = engine.allowed_mask(p, "preview", now)
        cold.append(time.perf_counter() - t0)
        sizes.append(int(m.sum()))
    for p in principals:
        t0 = time.perf_counter()
        engine.allowed_mask(p, "preview", now)
        warm.append(time.perf_counter() - t0)

    # per-document enforce: every document at 1k, a sample above (extrapolated)
    sample_n = n_docs if n_docs <= 1_000 else (300 if quick else 1_000) if n_docs <= 10_000 else (100 if quick else 300)
    p = principals[0]
    mask = engine.allowed_mask(p, "preview", now)
    docs = engine.doc_ids if sample_n >= n_docs else rng.sample(engine.doc_ids, sample_n)
    mismatches = 0
    t0 = time.perf_counter()
    for d in docs:
        allowed = engine.enforce(p, doc_obj(d), "preview", now, int(engine.levels[engine.doc_index[d]]))
        mismatches += allowed != bool(mask[engine.doc_index[d]])
    per_enforce = (time.perf_counter() - t0) / len(docs)
    full_docs = docs[: max(20, len(docs) // (10 if n_docs >= 10_000 else 4))]
    t0 = time.perf_counter()
    for d in full_docs:
        allowed = engine.enforce_full(p, doc_obj(d), "preview", now, int(engine.levels[engine.doc_index[d]]))
        mismatches += allowed != bool(mask[engine.doc_index[d]])
    per_enforce_full = (time.perf_counter() - t0) / len(full_docs)
    # the compiled decision recall re-checks every hit with, on the same documents (and equal)
    t0 = time.perf_counter()
    for d in docs:
        allowed = engine.decide(p, doc_obj(d), "preview", now, int(engine.levels[engine.doc_index[d]]))
        mismatches += allowed != bool(mask[engine.doc_index[d]])
    per_decide = (time.perf_counter() - t0) / len(docs)
    # a grant change derives the next engine (that grant recompiled) instead of a full build
    folder = sorted(drive.folders)[len(drive.folders) // 2]
    drive.add_grant(GrantRec("g-bench-derive", "everyone", ["list"], "allow", folder_id=folder))
    t0 = time.perf_counter()
    derived = PermissionEngine.after_grant_changes(engine, drive)
    t_derive = time.perf_counter() - t0
    assert derived is not None
    t0 = time.perf_counter()
    PermissionEngine(drive)
    t_rebuild = time.perf_counter() - t0
    drive.remove_grant("g-bench-derive")
    total_enforce = per_enforce * n_docs
    cold_median, cold_max = statistics.median(cold), max(cold)
    return {
        "documents": n_docs,
        "folders": len(drive.folders),
        "users": len(drive.users),
        "grants": len(drive.grants),
        "policy_lines": len(compiled.p),
        "preview_lines": len(engine.lines("preview")),
        "g_links": len(compiled.g),
        "g2_links": len(compiled.g2),
        "compile_ms": _ms(t_compile),
        "engine_build_ms": _ms(t_engine),
        "casbin_default_role_links_ms": _ms(t_default_links),
        "users_sampled": len(principals),
        "allowed_docs_median": int(statistics.median(sizes)),
        "materialize_first_ms": _ms(t_first),
        "materialize_cold_median_ms": _ms(cold_median),
        "materialize_cold_p95_ms": _ms(_pct(cold, 0.95)),
        "materialize_cold_max_ms": _ms(cold_max),
        "materialize_warm_median_ms": _ms(statistics.median(warm)),
        "enforce_per_doc_ms": _ms(per_enforce),
        "enforce_full_enforcer_per_doc_ms": _ms(per_enforce_full),
        "decide_per_doc_ms": _ms(per_decide),
        "ratio_enforce_over_decide": round(per_enforce / per_decide, 1),
        "grant_change_derived_engine_ms": _ms(t_derive),
        "grant_change_full_engine_ms": _ms(t_rebuild),
        "enforce_docs_timed": len(docs),
        "enforce_all_docs_ms": _ms(total_enforce),
        "enforce_all_docs_is": "measured" if len(docs) == n_docs else f"extrapolated from {len(docs)} documents",
        "ratio_enforce_all_over_cold_median": round(total_enforce / cold_median, 1),
        "ratio_enforce_all_over_cold_max": round(total_enforce / cold_max, 1),
        "fast_path_mismatches": mismatches,
    }


def bench_hot_path(quick: bool) -> dict[str, Any]:
    """Recall's per-hit re-check on the seed corpus: per-action enforcer vs one enforcer with every line."""
    from drivebench.corpora.builtin import resolve_corpus

    drive = Drive.from_corpus(resolve_corpus("seed"))
    engine = PermissionEngine(drive)
    now = drive.clock.now()
    pairs = [(engine.user_principal(u), d) for u in sorted(drive.users) for d in sorted(drive.documents)]
    legacy = _legacy_enforcer(engine)
    rounds = 3 if quick else 10
    best_action, best_full, best_legacy = float("inf"), float("inf"), float("inf")
    for _ in range(rounds):  # interleaved, best of: the machine is shared
        t0 = time.perf_counter()
        for p, d in pairs:
            engine.enforce(p, doc_obj(d), "preview", now, drive.documents[d].secret_level)
        best_action = min(best_action, (time.perf_counter() - t0) / len(pairs))
        t0 = time.perf_counter()
        for p, d in pairs:
            engine.enforce_full(p, doc_obj(d), "preview", now, drive.documents[d].secret_level)
        best_full = min(best_full, (time.perf_counter() - t0) / len(pairs))
        t0 = time.perf_counter()
        for p, d in pairs:
            legacy.enforce(p.subject, doc_obj(d), "preview", to_us(now), p.clearance, drive.documents[d].secret_level)
        best_legacy = min(best_legacy, (time.perf_counter() - t0) / len(pairs))
    for p, d in pairs:  # same decisions
        level = drive.documents[d].secret_level
        assert legacy.enforce(p.subject, doc_obj(d), "preview", to_us(now), p.clearance, level) == engine.enforce(
            p, doc_obj(d), "preview", now, level
        )
    return {
        "corpus": "seed",
        "checks": len(pairs),
        "policy_lines": len(engine.compiled.p),
        "preview_lines": len(engine.lines("preview")),
        "per_action_enforcer_ms": _ms(best_action),
        "full_enforcer_ms": _ms(best_full),
        "before_ms": _ms(best_legacy),
        "before_is": "one enforcer with every line, the previous matcher order, Casbin's default role manager",
        "ratio_full_over_per_action": round(best_full / best_action, 2),
        "ratio_before_over_per_action": round(best_legacy / best_action, 2),
    }


LEGACY_MATCHER = (
    'm = (p.sub == "everyone" || g(r.sub, p.sub)) && g2(r.obj, p.obj) && r.act == p.act '
    '&& within(r.t, p.nbf, p.exp) && (p.eft == "deny" || r.clr >= r.lvl)'
)


def _legacy_enforcer(engine: PermissionEngine) -> casbin.Enforcer:
    """The engine as it was before: one enforcer, every line, the old matcher order, default role managers."""
    text = MODEL_PATH.read_text(encoding="utf-8")
    head, _, _ = text.partition("\nm = ")
    model = casbin.model.Model()
    model.load_model_from_text(head + "\n" + LEGACY_MATCHER + "\n")
    enforcer = casbin.Enforcer(model)
    enforcer.enable_auto_build_role_links(False)
    for ptype in ("g", "g2"):
        rm = RoleManager(256)
        enforcer.rm_map[ptype] = rm
        enforcer.model["g"][ptype].rm = rm
    enforcer.add_function("within", within)
    enforcer.model.add_policies("p", "p", [line.as_list() for line in engine.compiled.p])
    enforcer.model.add_policies("g", "g", [list(x) for x in engine.compiled.g])
    enforcer.model.add_policies("g", "g2", [list(x) for x in engine.compiled.g2])
    enforcer.build_role_links()
    return enforcer


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    rows = []
    print("materialized previewable set vs per-document Casbin enforce (one process)")
    header = (
        f"{'docs':>8} {'lines':>7} {'build ms':>9} {'default-rm ms':>13} {'cold med':>9} {'cold max':>9} "
        f"{'warm':>7} {'enforce/doc':>11} {'enforce all docs':>17} {'ratio':>10}"
    )
    print(header)
    for n in SIZES:
        r = bench_size(n, quick)
        rows.append(r)
        note = "" if r["enforce_all_docs_is"] == "measured" else " (extrapolated)"
        print(
            f"{n:>8} {r['policy_lines']:>7} {r['engine_build_ms']:>9.1f} {r['casbin_default_role_links_ms']:>13.1f} "
            f"{r['materialize_cold_median_ms']:>9.3f} {r['materialize_cold_max_ms']:>9.3f} "
            f"{r['materialize_warm_median_ms']:>7.3f} {r['enforce_per_doc_ms']:>11.3f} "
            f"{r['enforce_all_docs_ms']:>13.0f} ms{note} {r['ratio_enforce_all_over_cold_max']:>9.0f}x"
        )
    print(
        "  ms = milliseconds; cold = cache miss, over a sample of users; ratio = enforce over all documents / cold max"
    )
    print(
        f"{'docs':>8} {'enforce/doc ms':>15} {'decide/doc ms':>14} {'ratio':>8} {'grant change: derived ms':>25} {'full ms':>9}"
    )
    for r in rows:  # recall's per-hit re-check and a grant change's recompile, side by side
        print(
            f"{r['documents']:>8} {r['enforce_per_doc_ms']:>15.3f} {r['decide_per_doc_ms']:>14.4f} "
            f"{r['ratio_enforce_over_decide']:>7.0f}x {r['grant_change_derived_engine_ms']:>25.1f} "
            f"{r['grant_change_full_engine_ms']:>9.1f}"
        )
    print("  (at 10k and 100k documents, enforce is timed on a random sample of documents and extrapolated)")
    hot = bench_hot_path(quick)
    print(
        f"recall hot path, seed corpus ({hot['checks']} checks): per-action enforcer {hot['per_action_enforcer_ms']:.3f} ms, "
        f"one enforcer with every line {hot['full_enforcer_ms']:.3f} ms; before this change {hot['before_ms']:.3f} ms "
        f"(x{hot['ratio_before_over_per_action']} slower than now)"
    )
    big = rows[-1]
    ok = (
        big["materialize_cold_max_ms"] <= TARGET_COLD_MS
        and all(r["ratio_enforce_all_over_cold_max"] >= TARGET_RATIO for r in rows if r["documents"] >= 100_000)
        and all(r["fast_path_mismatches"] == 0 for r in rows)
    )
    result = {
        "quick": quick,
        "sizes": rows,
        "hot_path": hot,
        "targets": {"cold_ms_at_100k": TARGET_COLD_MS, "ratio_at_100k": TARGET_RATIO},
        "targets_met": ok,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    write_report("bench_permissions", result)
    print(
        f"targets (100k: cold <= {TARGET_COLD_MS:.0f} ms, >= {TARGET_RATIO:.0f}x enforce): {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
