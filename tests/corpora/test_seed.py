"""The hand-written seed corpus: valid, complete, self-consistent and deterministic."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from drivebench.corpora.seed import build_seed, compute_access
from drivebench.corpora.seed.content import DOCS_BY_ID
from drivebench.formats.corpus import (
    EVALSET_NAME,
    FILE_TYPES,
    MANIFEST_NAME,
    SECRET_LEVELS,
    Manifest,
    load_manifest,
    manifest_problems,
)
from drivebench.formats.evalset import EvalQuery, load_evalset
from tests.support.decisions import previewable_docs

# Hand-checked from the scenario in corpora/seed/org.py (who is in which department/project, which
# grants exist, clearances). Kept independent of build.py's access logic on purpose.
_COMPANY_ALL = ["d0001", "d0002", "d0003", "d0004"]
_RD_INTERNAL = ["d0005", "d0006", "d0007", "d0009", "d0010", "d0011", "d0012"]
_PX = ["d0013", "d0014", "d0015", "d0016", "d0029"]
EXPECTED_ACCESS: dict[str, list[str]] = {
    # 张伟 engineer, internal, 项目X member: no secret patent d0008, no finance
    "u001": _COMPANY_ALL + _RD_INTERNAL + _PX,
    # 李强 manager, confidential: + Q3 report through the manager document grant; still no d0008 (secret)
    "u002": _COMPANY_ALL + _RD_INTERNAL + _PX + ["d0017"],
    # 王芳 manager, secret: everything in R&D incl. the patent
    "u003": [*_COMPANY_ALL, "d0005", "d0006", "d0007", "d0008", "d0009", "d0010", "d0011", "d0012", *_PX, "d0017"],
    # 陈静 finance manager, secret: /finance, /finance/confidential (d0020), /finance-secret (d0021)
    "u004": [*_COMPANY_ALL, "d0017", "d0018", "d0019", "d0020", "d0021", "d0028"],
    # 刘洋 finance, confidential, 项目X member: not d0020 (break_inheritance) nor d0021 (/finance-secret)
    "u005": _COMPANY_ALL + _PX + ["d0017", "d0018", "d0019", "d0028"],
    # 赵敏 hr manager, secret: /hr incl. d0023, + Q3 report
    "u006": [*_COMPANY_ALL, "d0017", "d0022", "d0023", "d0024"],
    # 孙磊 intern in rd-platform, internal: R&D via the rd grant, 项目X membership expired
    "u007": _COMPANY_ALL + _RD_INTERNAL,
    # 周杰 legal manager, confidential: /legal, the Q3 report, the contract via the still-valid grant
    "u008": [*_COMPANY_ALL, "d0017", "d0019", "d0025", "d0026"],
    # 吴昊 admin: lists everything but previews only the company policies and /it
    "u009": [*_COMPANY_ALL, "d0027"],
    # Emily Carter, internal: R&D minus the denied d0009, 项目X; /finance/budget grant expired
    "u010": [*_COMPANY_ALL, "d0005", "d0006", "d0007", "d0010", "d0011", "d0012", *_PX],
    # 钱丽 hr, internal: /hr without the secret d0023
    "u011": [*_COMPANY_ALL, "d0022", "d0024"],
    # 林晓 hr intern, public clearance: public documents only
    "u012": ["d0001", "d0004"],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest, list[EvalQuery]]:
    out = tmp_path_factory.mktemp("seed")
    manifest = build_seed(out)
    return out, manifest, load_evalset(out / EVALSET_NAME)


def _t(q: EvalQuery, m: Manifest) -> datetime:
    return q.as_of or m.clock.now


def _spec_text(doc_id: str, version_id: str | None, at: datetime) -> str:
    """The DocSpec text of the given version, or of the version current at ``at``."""
    doc = DOCS_BY_ID[doc_id]
    if version_id is not None:
        n = int(version_id.rsplit("-v", 1)[1])
        return doc.versions[n - 1].spec.plain_text()
    current = [v for v in doc.versions if datetime.fromisoformat(v.created_at) <= at]
    return current[-1].spec.plain_text()


def test_manifest_validates_and_round_trips(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    out, m, _ = built
    loaded = load_manifest(out)
    assert loaded == m
    assert manifest_problems(loaded) == []
    assert loaded.name == "seed"
    assert loaded.clock.now == datetime.fromisoformat("2026-11-01T00:00:00+00:00")


def test_scenario_coverage(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, _ = built
    assert len(m.documents) >= 16
    types = Counter(d.file_type for d in m.documents)
    assert {"md", "docx", "pdf", "xlsx", "pptx"} <= set(types)
    assert set(types) <= set(FILE_TYPES)
    langs = Counter(d.tags["language"] for d in m.documents)
    assert langs["zh"] > langs["en"] >= len(m.documents) // 4
    depts_with_docs = {d.tags["department"] for d in m.documents}
    assert {"rd", "rd-platform", "finance", "hr", "legal"} <= depts_with_docs
    roles = {r for u in m.users for r in u.roles}
    assert {"engineer", "manager", "finance", "hr", "intern", "admin"} <= roles
    assert len(m.users) >= 8
    assert {u.clearance for u in m.users} == set(SECRET_LEVELS)
    assert any(len(d.versions) >= 2 for d in m.documents)
    folders = {f.path: f for f in m.folders}
    assert folders["/finance/confidential"].break_inheritance
    assert "/finance-secret" in folders
    now = m.clock.now
    assert any(g.effect == "deny" and g.doc_id for g in m.grants)
    assert any(g.valid_until is not None and g.valid_until <= now for g in m.grants)
    assert any(g.valid_until is not None and g.valid_until > now for g in m.grants)
    members = [mem for p in m.projects for mem in p.members]
    assert any(mem.valid_until is not None and mem.valid_until <= now for mem in members)


def test_every_file_exists_and_is_non_empty(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    out, m, _ = built
    for d in m.documents:
        for v in d.versions:
            assert v.file == f"files/{d.doc_id}/v{v.version}.{d.file_type}"
            assert v.version_id == f"{d.doc_id}-v{v.version}"
            path = out / v.file
            assert path.is_file(), path
            assert path.stat().st_size > 0, path
            assert v.created_at <= m.clock.now
            assert v.author in {u.user_id for u in m.users}


def test_access_ground_truth(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, _ = built
    assert m.access == {u: sorted(ids) for u, ids in EXPECTED_ACCESS.items()}
    assert compute_access(m) == m.access


def test_eval_references_exist(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, queries = built
    users = {u.user_id for u in m.users}
    docs = {d.doc_id: d for d in m.documents}
    for q in queries:
        assert q.user_id in users, q.query_id
        for g in q.gold:
            assert g.doc_id in docs, q.query_id
            if g.version_id is not None:
                assert g.version_id in {v.version_id for v in docs[g.doc_id].versions}, q.query_id
        for doc_id in [*(q.hops or []), *q.forbidden]:
            assert doc_id in docs, q.query_id
        if q.hops:
            assert set(q.hops) <= set(q.gold_ids), q.query_id


def test_gold_and_forbidden_respect_access(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, queries = built
    assert m.access is not None
    for q in queries:
        assert q.user_id is not None
        at_now = set(m.access[q.user_id])
        at_t = set(compute_access(m, _t(q, m))[q.user_id])
        for doc_id in q.gold_ids:
            if doc_id not in q.forbidden:
                assert doc_id in at_now and doc_id in at_t, (q.query_id, doc_id)
        for doc_id in q.forbidden:
            assert doc_id not in at_now and doc_id not in at_t, (q.query_id, doc_id)
            assert doc_id not in q.gold_ids, q.query_id


def test_gold_versions_are_current_at_query_time(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, queries = built
    docs = {d.doc_id: d for d in m.documents}
    for q in queries:
        t = _t(q, m)
        for g in q.gold:
            versions = [v for v in docs[g.doc_id].versions if v.created_at <= t]
            assert versions, (q.query_id, g.doc_id)
            if g.version_id is not None:
                assert versions[-1].version_id == g.version_id, q.query_id
            elif len(docs[g.doc_id].versions) > 1:
                pytest.fail(f"{q.query_id}: gold {g.doc_id} has several versions but no version_id")


def test_answer_facts_appear_in_gold_text(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, queries = built
    for q in queries:
        text = "\n".join(_spec_text(g.doc_id, g.version_id, _t(q, m)) for g in q.gold)
        if not q.gold:
            assert not q.answer_facts, q.query_id
        for fact in q.answer_facts:
            assert fact in text, (q.query_id, fact)


def test_evalset_composition(built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    _, m, queries = built
    assert len(queries) >= 32
    kinds = Counter(q.tags["kind"] for q in queries)
    assert kinds["multi_hop"] >= 6
    assert kinds["version"] >= 3
    for q in queries:
        assert {"kind", "department", "file_type", "length", "role"} <= set(q.tags), q.query_id
        assert q.tags["length"] in {"short", "medium", "long"}
        if q.tags["kind"] == "multi_hop":
            assert q.hops and len(q.hops) >= 2, q.query_id
    assert {q.tags["lang"] for q in queries} == {"zh", "en"}
    # one version question pinned before a change
    assert any(
        q.as_of is not None and any(g.version_id and g.version_id.endswith("-v1") for g in q.gold)
        for q in queries
        if q.tags["kind"] == "version"
    )
    # permission pairs: same question, one allowed (doc is gold), one denied (doc is forbidden)
    pairs: dict[str, list[EvalQuery]] = defaultdict(list)
    for q in queries:
        if "pair" in q.tags:
            pairs[q.tags["pair"]].append(q)
    assert len(pairs) >= 6
    for pair, qs in pairs.items():
        assert len(qs) == 2, pair
        allowed = next(q for q in qs if q.tags["access"] == "allowed")
        denied = next(q for q in qs if q.tags["access"] == "denied")
        assert allowed.query == denied.query, pair
        assert allowed.user_id != denied.user_id, pair
        assert denied.forbidden and set(denied.forbidden) <= set(allowed.gold_ids), pair
        assert not denied.gold, pair
    # the vendor's documented example is answerable by an engineer, the approval record on top
    example = [q for q in queries if q.query == "项目X的技术方案审批人" and q.as_of is None]
    assert example and example[0].gold_ids[0] == "d0015"
    users = {u.user_id: u for u in m.users}
    assert "engineer" in users[example[0].user_id or ""].roles


def test_build_is_deterministic(tmp_path: Path, built: tuple[Path, Manifest, list[EvalQuery]]) -> None:
    first, _, _ = built
    second = tmp_path / "again"
    build_seed(second)
    for name in (MANIFEST_NAME, EVALSET_NAME):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    first_files = sorted(p.relative_to(first) for p in (first / "files").rglob("*") if p.is_file())
    second_files = sorted(p.relative_to(second) for p in (second / "files").rglob("*") if p.is_file())
    assert first_files == second_files
    for rel in first_files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


@pytest.mark.parametrize(
    "at",
    [
        "2026-03-01T00:00:00+00:00",
        "2026-08-01T00:00:00+00:00",
        "2026-09-15T00:00:00+00:00",
        "2026-11-01T00:00:00+00:00",
    ],
)
def test_access_agrees_with_the_simulator(built: tuple[Path, Manifest, list[EvalQuery]], at: str) -> None:
    """The seed's own access logic and the simulator's permission engine must agree (both directions)."""
    import drivebench.drive.permissions.engine as engine_mod

    out, m, _ = built
    engine = engine_mod.PermissionEngine.from_manifest(m, out)
    t = datetime.fromisoformat(at)
    expected = compute_access(m, t)
    for u in m.users:
        existing = {d.doc_id for d in m.documents if d.created_at <= t}
        assert sorted(previewable_docs(engine, u.user_id, t) & existing) == expected[u.user_id], u.user_id
