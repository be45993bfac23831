"""The acme corpus generator: determinism, the corpus's thresholds, eval-set soundness.

Each default corpus is built once per module (into tmp_path_factory); thresholds that do not depend on
scale are checked on small builds.
"""

from __future__ import annotations

import itertools
import re
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.common.access import AccessModel
from drivebench.corpora.generator import build_acme
from drivebench.corpora.generator.build import doc_count, plan
from drivebench.corpora.validate import validate_corpus
from drivebench.formats.corpus import (
    EVALSET_NAME,
    MANIFEST_NAME,
    SECRET_LEVELS,
    Manifest,
    level_rank,
    load_manifest,
    manifest_problems,
)
from drivebench.formats.evalset import EvalQuery, load_evalset

ROLES = {"engineer", "manager", "finance", "hr", "legal", "designer", "intern", "contractor", "admin", "auditor"}
TYPES = ("pdf", "docx", "xlsx", "pptx", "dxf", "zip")


@dataclass
class Built:
    path: Path
    manifest: Manifest
    queries: list[EvalQuery]


def _load(path: Path) -> Built:
    return Built(path, load_manifest(path), load_evalset(path / EVALSET_NAME))


@pytest.fixture(scope="module", params=["zh", "en"])
def default(request: pytest.FixtureRequest) -> Built:
    # the cached acme@1 build (the generator at its default seed and scale), shared with every other test
    return _load(resolve_corpus(f"acme-{request.param}@1"))


@pytest.fixture(scope="module")
def small_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Built]:
    """One small build per language for the module, made on first use (the languages test reads both)."""
    built: dict[str, Built] = {}

    def get(language: str) -> Built:
        if language not in built:
            out = tmp_path_factory.mktemp(f"acme-{language}-small")
            build_acme(out, language=language, scale="small")  # type: ignore[arg-type]
            built[language] = _load(out)
        return built[language]

    return get


@pytest.fixture(scope="module", params=["zh", "en"])
def small(request: pytest.FixtureRequest, small_build: Callable[[str], Built]) -> Built:
    return small_build(request.param)


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _at(q: EvalQuery, m: Manifest) -> datetime:
    return q.as_of if q.as_of is not None else m.clock.now


# ---------------------------------------------------------------- determinism


def test_same_seed_same_bytes(small: Built, tmp_path: Path) -> None:
    """Manifest, eval set and every file (all formats are pinned by the renderers) are byte-identical."""
    again = tmp_path / "again"
    build_acme(again, language=small.manifest.language, scale="small")  # type: ignore[arg-type]
    first, second = _tree(small.path), _tree(again)
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_other_seed_other_corpus(small: Built, tmp_path: Path) -> None:
    other = build_acme(tmp_path, language=small.manifest.language, seed=8, scale="small")  # type: ignore[arg-type]
    assert other.model_dump() != small.manifest.model_dump()
    assert (tmp_path / EVALSET_NAME).read_bytes() != (small.path / EVALSET_NAME).read_bytes()


def test_languages_share_one_scenario(small_build: Callable[[str], Built]) -> None:
    zh, en = small_build("zh").manifest, small_build("en").manifest
    assert [(d.doc_id, d.file_type, len(d.versions), d.secret_level) for d in zh.documents] == [
        (d.doc_id, d.file_type, len(d.versions), d.secret_level) for d in en.documents
    ]
    assert zh.access == en.access


# ---------------------------------------------------------------- format and validity


def test_manifest_and_files_valid(default: Built) -> None:
    m = default.manifest
    assert manifest_problems(m) == []
    assert m.name == f"acme-{m.language}"
    for d in m.documents:
        for v in d.versions:
            assert v.file == f"files/{d.doc_id}/v{v.version}.{d.file_type}"
            assert (default.path / v.file).stat().st_size > 0
    assert (default.path / MANIFEST_NAME).read_text(encoding="utf-8").endswith("\n")


def test_repository_validator_passes(default: Built) -> None:
    assert [str(p) for p in validate_corpus(default.path, min_gold_per_type=15)] == []


def test_exact_document_counts() -> None:
    for n in (1, 5, 37, 123):
        _, docs, _ = plan("en", 7, n)
        assert len(docs) == n
    assert doc_count("small") == 80 and doc_count("default") == 300 and doc_count("large") == 3000
    assert doc_count("120") == doc_count(120) == 120
    with pytest.raises(ValueError):
        doc_count("huge")


# ---------------------------------------------------------------- the corpus's thresholds


def test_organisation(default: Built) -> None:
    m = default.manifest
    root = [d.id for d in m.departments if d.parent is None]
    assert len(root) == 1
    parents = Counter(d.parent for d in m.departments if d.parent not in (None, root[0]))
    top = [d.id for d in m.departments if d.parent == root[0]]
    assert len(top) >= 6 and len([t for t in top if parents[t]]) >= 6
    assert {"rd-platform", "rd-product"} <= {d.id for d in m.departments if d.parent == "rd"}
    assert len(m.users) >= 40
    assert {r for u in m.users for r in u.roles} >= ROLES
    assert set(SECRET_LEVELS) == {u.clearance for u in m.users}
    now = m.clock.now
    members = [mem for p in m.projects for mem in p.members]
    assert {"leader", "assistant", "member", "external"} == {mem.role for mem in members}
    assert any(mem.valid_until is not None and mem.valid_until <= now for mem in members)
    assert any(mem.valid_from is not None and mem.valid_from > now for mem in members)


def test_folders(default: Built) -> None:
    m = default.manifest
    kinds = Counter(f.kind for f in m.folders)
    assert {"department", "project", "archive", "personal", "shared"} <= set(kinds)
    breaking = {f.path for f in m.folders if f.break_inheritance}
    assert breaking and breaking & {g.path for g in m.grants if g.path}


def test_documents(default: Built) -> None:
    m = default.manifest
    assert len(m.documents) >= 300
    types = Counter(d.file_type for d in m.documents)
    assert all(types[t] >= 20 for t in TYPES), types
    assert types["md"] >= 1 and types["txt"] >= 1 and types["md"] + types["txt"] >= 20
    assert set(SECRET_LEVELS) == {d.secret_level for d in m.documents}
    versioned = [d for d in m.documents if len(d.versions) > 1]
    assert len(versioned) >= 0.2 * len(m.documents)
    assert max(len(d.versions) for d in m.documents) <= 5
    assert any(d.trashed_at for d in m.documents) and any(d.moves for d in m.documents)


def test_timeline(default: Built) -> None:
    m = default.manifest
    start, now = m.clock.start, m.clock.now
    for d in m.documents:
        times = [v.created_at for v in d.versions]
        assert times == sorted(times) and len(set(times)) == len(times)
        assert start <= d.created_at == times[0] and times[-1] < now
        assert d.trashed_at is None or times[-1] < d.trashed_at < now
        for mv in d.moves:
            assert d.created_at < mv.at < now
        if d.moves:
            assert d.moves[-1].to_folder == d.folder


def test_versions_change_facts(default: Built) -> None:
    """Consecutive versions of a document differ in their text (a fact changed)."""
    from drivebench.extract import extract

    m = default.manifest
    for d in [d for d in m.documents if len(d.versions) > 1][:40]:
        texts = [extract((default.path / v.file).read_bytes(), d.name).text for v in d.versions]
        assert all(a != b for a, b in itertools.pairwise(texts)), d.doc_id


def test_grants(default: Built) -> None:
    m = default.manifest
    now = m.clock.now
    kinds = Counter(g.subject.kind for g in m.grants)
    assert {"user", "role", "department", "project", "everyone"} == set(kinds)
    assert any(g.effect == "deny" and g.doc_id for g in m.grants)
    assert any(g.effect == "deny" and g.path for g in m.grants)
    assert any(g.valid_until is not None and g.valid_until <= now for g in m.grants)
    assert any(g.valid_until is not None and g.valid_until > now for g in m.grants)
    assert any(g.valid_from is not None and g.valid_from > now for g in m.grants)
    assert any(g.doc_id and g.effect == "allow" for g in m.grants)


def test_admin_and_auditor_views(default: Built) -> None:
    m = default.manifest
    access = m.access or {}
    docs = {d.doc_id: d for d in m.documents}
    personal = {f.path for f in m.folders if f.kind == "personal"}
    for u in m.users:
        seen = [docs[i] for i in access[u.user_id]]
        if "admin" in u.roles:
            assert seen and all(level_rank(d.secret_level) <= level_rank("internal") for d in seen)
            assert not any(d.folder.startswith(tuple(p + "/" for p in personal)) or d.folder in personal for d in seen)
        if "auditor" in u.roles:
            assert len(seen) > len(m.documents) / 2
            assert not any(d.secret_level == "secret" or d.folder in personal for d in seen)


def test_evalset_shape(default: Built) -> None:
    qs = default.queries
    n = len(qs)
    assert n >= 200
    kinds = Counter(q.tags["kind"] for q in qs)
    hops = Counter(q.tags["hops"] for q in qs if q.tags["kind"] == "multi_hop")
    assert hops["2"] >= 30 and hops["3"] >= 30 and hops["2"] + hops["3"] >= 0.3 * n
    assert kinds["permission"] >= 0.2 * n and kinds["version"] >= 0.1 * n and kinds["single"] > 0
    assert {"short", "medium", "long"} == {q.tags["length"] for q in qs}
    types = {d.doc_id: d.file_type for d in default.manifest.documents}
    gold_types = Counter(t for q in qs for t in {types[g.doc_id] for g in q.gold})
    assert all(gold_types[t] >= 15 for t in (*TYPES, "md", "txt")), gold_types
    assert {q.tags["role"] for q in qs} >= ROLES
    assert any(q.as_of is not None for q in qs)
    for q in qs:
        assert {"kind", "department", "file_type", "role", "secret_level", "length"} <= set(q.tags)
        assert q.user_id is not None
    assert len({q.query_id for q in qs}) == n
    assert len({(q.user_id, q.query) for q in qs}) == n


def test_every_kind_at_small_scale(small: Built) -> None:
    qs = small.queries
    assert {"single", "multi_hop", "permission", "version"} == {q.tags["kind"] for q in qs}
    assert {"2", "3"} <= {q.tags["hops"] for q in qs}
    assert {*TYPES, "md", "txt"} == {d.file_type for d in small.manifest.documents}
    assert any(len(d.versions) > 1 for d in small.manifest.documents)


# ---------------------------------------------------------------- eval-set soundness


def test_gold_visible_existing_untrashed(default: Built) -> None:
    m = default.manifest
    model = AccessModel.from_manifest(m)
    docs = {d.doc_id: d for d in m.documents}
    for q in default.queries:
        at = _at(q, m)
        assert q.user_id is not None
        for g in q.gold:
            d = docs[g.doc_id]
            assert g.doc_id not in q.forbidden
            assert d.created_at <= at and (d.trashed_at is None or d.trashed_at > at), q.query_id
            assert model.may_preview(q.user_id, g.doc_id, at), q.query_id
            current = max((v for v in d.versions if v.created_at <= at), key=lambda v: v.version)
            assert g.version_id == current.version_id, q.query_id
        for f in q.forbidden:
            assert not model.may_preview(q.user_id, f, at), q.query_id
        if q.hops is not None:
            assert q.hops == q.gold_ids and len(q.hops) == int(q.tags["hops"]) >= 2


def test_permission_pairs(default: Built) -> None:
    pairs: dict[str, list[EvalQuery]] = {}
    for q in default.queries:
        if q.tags["kind"] == "permission":
            pairs.setdefault(q.tags["pair"], []).append(q)
    assert pairs
    reasons = Counter()
    for pair in pairs.values():
        allowed, forbidden = sorted(pair, key=lambda q: q.tags["principal"])
        assert (allowed.tags["principal"], forbidden.tags["principal"]) == ("allowed", "forbidden")
        assert allowed.query == forbidden.query and allowed.user_id != forbidden.user_id
        assert forbidden.gold == [] and forbidden.forbidden == allowed.gold_ids
        assert forbidden.tags["withheld_fact"] == allowed.answer_facts[0]
        reasons[forbidden.tags["reason"]] += 1
    assert {"clearance", "deny", "grant_window", "break_inheritance"} <= set(reasons), reasons


def test_version_queries_pinned(default: Built) -> None:
    docs = {d.doc_id: d for d in default.manifest.documents}
    modes = Counter()
    for q in default.queries:
        if q.tags["kind"] != "version":
            continue
        (g,) = q.gold
        d = docs[g.doc_id]
        modes[q.tags["version"]] += 1
        if q.tags["version"] == "latest":
            assert g.version_id == d.versions[-1].version_id and q.as_of is None
        else:
            assert q.as_of is not None and g.version_id != d.versions[-1].version_id
    assert modes["as_of"] > 0 and modes["latest"] > 0


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_answer_facts_in_gold_text(default: Built) -> None:
    """Every answer fact appears in the extracted text of the gold version that answers it (the last hop)."""
    from drivebench.extract import extract

    docs = {d.doc_id: d for d in default.manifest.documents}
    texts: dict[str, str] = {}
    for q in default.queries:
        if not q.gold:
            assert q.answer_facts == [] and q.forbidden
            continue
        assert q.answer_facts
        g = q.gold[-1]
        d = docs[g.doc_id]
        if g.version_id not in texts:
            v = next(v for v in d.versions if v.version_id == g.version_id)
            texts[g.version_id] = _norm(extract((default.path / v.file).read_bytes(), d.name).text)
        for fact in q.answer_facts:
            assert _norm(fact) in texts[g.version_id], (q.query_id, fact)


# words that name the kind of document, not the drawing (the file name of a part drawing ends in 零件图)
GENERIC_WORDS = {"drawing", "assembly", "图纸", "零件", "零件图", "装配图"}


def _words(text: str) -> set[str]:
    """The simulator's lexical tokens (jieba for Chinese) and finer ones: every ASCII letter or digit
    run, so ``DWG-GW-111-02`` also yields ``gw`` and ``111``."""
    from drivebench.search.index.tokenize import tokenize

    return set(tokenize(text)) | {w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)}


def test_drawing_questions_avoid_the_file_name(default: Built) -> None:
    """Questions about drawings (a dxf document among the gold, forbidden or hop documents) ask about
    what the drawing says (part number, overall dimensions, title-block fields, notes): no word of the
    drawing's file name stem occurs in them but generic ones, so a retriever that reads drawings as
    their file name only (the cad-blind fault) cannot find them."""
    docs = {d.doc_id: d for d in default.manifest.documents}
    asked = Counter()
    for q in default.queries:
        for doc_id in dict.fromkeys([*q.gold_ids, *q.forbidden]):
            d = docs[doc_id]
            if d.file_type != "dxf":
                continue
            asked[q.tags["kind"]] += 1
            stem = Path(d.name).stem
            shared = (_words(q.query) & _words(stem)) - GENERIC_WORDS
            assert not shared, (q.query_id, q.query, stem, shared)
            # and no Chinese word of it as a substring either (jieba may cut a phrase differently)
            cjk = {w for w in _words(stem) if len(w) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", w)}
            assert not [w for w in cjk - GENERIC_WORDS if w in q.query], (q.query_id, q.query, stem)
    assert asked["single"] + asked["version"] + asked["permission"] >= 15 and asked["multi_hop"] >= 5, asked


def test_zip_and_dxf_content(default: Built) -> None:
    import ezdxf

    m = default.manifest
    zips = [d for d in m.documents if d.file_type == "zip"][:10]
    for d in zips:
        with zipfile.ZipFile(default.path / d.versions[-1].file) as zf:
            names = zf.namelist()
        assert len(names) >= 3 and {n.rsplit(".", 1)[-1] for n in names} >= {"md", "docx", "txt"}
    for d in [d for d in m.documents if d.file_type == "dxf"][:5]:
        doc = ezdxf.readfile(default.path / d.versions[-1].file)
        assert len(doc.layers) >= 6
        assert doc.blocks.get("TITLE_BLOCK") is not None


def test_access_ground_truth_round_trips(default: Built) -> None:
    """``manifest.access`` equals the generator's rules re-applied to the manifest as loaded from disk."""
    m = default.manifest
    assert m.access == AccessModel.from_manifest(m).access_map(m.clock.now)
    assert sorted(m.access) == sorted(u.user_id for u in m.users)
    assert all(ids == sorted(ids) for ids in m.access.values())


def test_parallel_rendering_same_bytes(small: Built, tmp_path: Path) -> None:
    """Rendering in worker processes (used for big corpora) writes the same bytes as rendering in-process."""
    from drivebench.corpora.common.assemble import write_files

    _, docs, _ = plan(small.manifest.language, 7, 80)
    write_files(tmp_path, docs, workers=2)
    files = {k: v for k, v in _tree(small.path).items() if k.startswith("files")}
    assert _tree(tmp_path) == files


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_thresholds_hold_for_other_seeds(seed: int) -> None:
    """Scenario-level thresholds do not depend on seed 7 (plans only, nothing rendered)."""
    _, docs, chains = plan("zh", seed, 300)
    assert sum(1 for d in docs if len(d.versions) > 1) >= 0.2 * len(docs)
    assert all(len(d.versions) <= 5 for d in docs)
    assert any(d.trashed_at for d in docs) and any(d.moves for d in docs)
    hops = Counter(len(c.hops) for c in chains)
    assert hops[2] >= 30 and hops[3] >= 30


def test_paraphrased_questions_avoid_the_documents_wording(default: Built) -> None:
    """Paraphrased questions exist for single-hop and permission kinds, and each uses the paraphrased
    attribute or subject of its document's hook."""
    from drivebench.corpora.generator.build import plan as make_plan

    m = default.manifest
    _, docs, _ = make_plan(m.language, 7, len(m.documents))
    hooks = {d.doc_id: d.hooks for d in docs}
    para = [q for q in default.queries if q.tags.get("phrasing") == "paraphrase"]
    assert len(para) >= 0.15 * len(default.queries)
    assert {q.tags["kind"] for q in para} == {"single", "permission"}
    for q in para:
        doc_id = (q.gold or [])[0].doc_id if q.gold else q.forbidden[0]
        used = [alias for h in hooks[doc_id] for alias in (h.alias_attr, h.alias_subject) if alias and alias in q.query]
        assert used, q.query_id
