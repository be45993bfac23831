"""The leak oracle judges a past ``as_of`` on the drive as it stood then: a document moved since is judged in the
folder it was in. The expected verdicts come from the generator's own rules (``corpora.generator.access``), on
every (user, moved document) pair of acme-en@1 where the old and the final folder disagree; judged in today's
folder (what the oracle did), the cad-blind comparison counted documents an asker could see then as leaks."""

from __future__ import annotations

from datetime import timedelta

from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.common.access import AccessModel
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import EvalQuery


def test_the_oracle_judges_a_moved_document_where_it_was_then() -> None:
    corpus = resolve_corpus("acme-en@1")
    manifest = load_manifest(corpus)
    model = AccessModel.from_manifest(manifest)
    oracle = corpus_oracle(corpus)
    checked = {True: 0, False: 0}
    for doc in (d for d in manifest.documents if d.moves):
        before = min(m.at for m in doc.moves) - timedelta(hours=1)
        if doc.versions[0].created_at > before:
            continue
        for user in manifest.users:
            then = model.decide(user.user_id, doc.doc_id, before)
            if then == model.decide(user.user_id, doc.doc_id, before, folder=doc.folder):
                continue
            q = EvalQuery(query_id="q", query="x", user_id=user.user_id, as_of=before)
            assert oracle(q, doc.doc_id) == then, (user.user_id, doc.doc_id, before)
            checked[then] += 1
    assert checked[True] >= 3 and checked[False] >= 1, checked  # both directions: a false leak and a missed one
