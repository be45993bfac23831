"""The evaluator against the project's seed corpus: real names, paths, titles and eval set."""

from __future__ import annotations

import pytest

from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.citations import extract_citations
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import RunRecord, load_evalset


@pytest.fixture(scope="module")
def seed():
    import drivebench.corpora.builtin as builtin
    from drivebench.formats.corpus import EVALSET_NAME, load_manifest

    corpus = builtin.resolve_corpus("seed")
    return load_manifest(corpus), load_evalset(corpus / EVALSET_NAME)


def test_every_document_resolves_by_name_path_and_title(seed) -> None:
    manifest, _ = seed
    cat = Catalog.from_manifest(manifest)
    assert len(cat) == len(manifest.documents)
    for doc in cat:
        for key in (doc.doc_id, doc.name, doc.path, doc.title):
            if key:
                assert doc.doc_id in cat.lookup(key), key
        found = extract_citations(f"见[{doc.name}]与【{doc.path}】", cat, prefer={doc.doc_id})
        assert found.cited == [doc.doc_id] and not found.unresolvable


def test_perfect_permission_respecting_run(seed) -> None:
    manifest, queries = seed
    cat = Catalog.from_manifest(manifest)
    run = [
        RunRecord(
            query_id=q.query_id,
            results=[{"doc_id": g.doc_id, "version_id": g.version_id} for g in q.gold],
            answer=" ".join(f"[[{d}]]" for d in q.gold_ids),
        )
        for q in queries
    ]
    out = score(queries, run, oracle="evalset", catalog=cat, bootstrap=False)
    m = out["metrics"]
    assert m["hit_rate@10"] == 1.0 and m["recall@10"] == 1.0 and m["ndcg@10"] == pytest.approx(1.0)
    assert m["leak_rate@10"] == 0.0 and m["hit_rate_permitted@10"] == 1.0
    assert m["source_coverage"] == 1.0 and m["citation_precision"] == 1.0
    assert out["counts"]["no_gold"] == sum(1 for q in queries if not q.gold)
    if out["counts"]["version_pinned"]:
        assert m["version_exact_hit_rate@10"] == 1.0
