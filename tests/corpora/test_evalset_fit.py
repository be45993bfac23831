"""The checks before a run, in process: does an eval set fit a corpus (every id it names, every gold version),
which built-in it fits instead, and the preflight's second asker that tells a user's token from the evaluation
token before anything else is sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from drivebench.api import evaluate
from drivebench.corpora.builtin import DEFAULT_CORPUS, resolve_corpus
from drivebench.corpora.evalset_fit import (
    SHOWN,
    CorpusIds,
    EvalsetMismatchError,
    cached_builtin_dir,
    evalset_misfit,
)
from drivebench.errors import DrivebenchError
from drivebench.evaluator.options import EvalOptions
from drivebench.evaluator.preflight import other_asker, preflight
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import EvalQuery, RunHit, load_evalset
from drivebench.formats.target import TargetError, TargetResponse


def q(qid: str, user: str | None = "u001", role: str | None = None, **kw: Any) -> EvalQuery:
    return EvalQuery(query_id=qid, query=f"question {qid}", user_id=user, user_role=role, **kw)


def test_the_cached_build_found_without_building_is_the_one_resolve_corpus_returns() -> None:
    # the check reads cached builds only: its key must be resolve_corpus's, or it would never find one
    assert cached_builtin_dir("seed@1") == resolve_corpus("seed")
    assert cached_builtin_dir(DEFAULT_CORPUS) == resolve_corpus(DEFAULT_CORPUS)


@pytest.mark.parametrize("corpus", ["seed", DEFAULT_CORPUS])
def test_a_corpus_own_eval_set_fits_it(corpus: str) -> None:
    corpus_dir = resolve_corpus(corpus)
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    assert any(g.version_id for x in queries for g in x.gold)  # versions are checked, not only documents
    assert evalset_misfit(queries, corpus_dir, corpus) is None


def test_unknown_ids_of_every_list_in_file_order_each_once() -> None:
    ids = CorpusIds({"d1": frozenset({"d1-v1", "d1-v2"}), "d2": frozenset({"d2-v1"})})
    queries = [
        q("a", gold=[{"doc_id": "d1", "version_id": "d1-v2"}, {"doc_id": "g9"}], hops=["d2", "h9"]),
        q("b", gold=[{"doc_id": "d2", "version_id": "d2-v7"}, {"doc_id": "g9"}], forbidden=["f9"], allowed=["a9"]),
    ]
    assert ids.unknown(queries) == ["g9", "h9", "d2-v7 (a version of d2)", "f9", "a9"]  # gold, hops, forbidden, allowed
    assert ids.unknown([q("c", gold=[{"doc_id": "d1", "version_id": "d1-v1"}], forbidden=["d2"])]) == []


def _seed_subset(tmp_path: Path) -> Path:
    """A corpus of three of seed's documents (in ``tmp_path``): most of seed's gold is unknown to it."""
    seed = resolve_corpus("seed")
    manifest = json.loads((seed / "corpus.json").read_text(encoding="utf-8"))
    manifest["documents"] = manifest["documents"][:3]
    kept = {d["doc_id"] for d in manifest["documents"]}
    manifest["grants"] = [g for g in manifest["grants"] if g.get("doc_id") in (None, *kept)]
    manifest["access"], manifest["name"] = None, "seed-subset"
    (tmp_path / "corpus.json").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path


def test_a_misfit_names_the_first_ids_counts_the_rest_and_the_builtin_the_eval_set_fits(tmp_path: Path) -> None:
    queries = load_evalset(resolve_corpus("seed") / EVALSET_NAME)
    _seed_subset(tmp_path)
    unknown = CorpusIds.read(tmp_path).unknown(queries)
    assert len(unknown) > SHOWN + 1
    misfit = evalset_misfit(queries, tmp_path, "my-corpus")
    assert misfit is not None
    message, hint = misfit
    shown = ", ".join(unknown[:SHOWN])
    assert f"the eval set names {len(unknown)} ids that corpus my-corpus does not have: {shown} and " in message
    assert message.endswith(f"and {len(unknown) - SHOWN} more; this eval set fits seed")
    assert hint == "give --corpus seed (the corpus the eval set was written for), or an eval set of my-corpus"


def test_the_python_api_refuses_an_eval_set_of_another_corpus_before_sending_anything(tmp_path: Path) -> None:
    evalset = resolve_corpus("seed") / EVALSET_NAME
    corpus = _seed_subset(tmp_path)
    unknown = CorpusIds.read(corpus).unknown(load_evalset(evalset))
    asked: list[str] = []

    def retriever(query: str, principal: Any, top_k: int, as_of: Any) -> list[Any]:
        asked.append(query)
        return []

    with pytest.raises(EvalsetMismatchError) as caught:
        evaluate(retriever, evalset, EvalOptions(corpus=corpus))
    assert asked == []  # not the preflight's query, not one query of the run
    err = caught.value
    assert isinstance(err, ValueError) and isinstance(err, DrivebenchError)  # documented: a ValueError
    assert err.unknown == unknown and err.fits == ["seed"]
    assert f"does not have: {', '.join(unknown[:SHOWN])} and {len(unknown) - SHOWN} more" in str(err)
    assert "this eval set fits seed" in str(err) and "--corpus seed" in str(err)
    # the same eval set against its own corpus is sent
    evaluation = evaluate(retriever, evalset, EvalOptions(corpus="seed", preflight=False))
    assert len(asked) == len(load_evalset(evalset)) and evaluation.result["run_info"]["corpus"] == "seed"


def test_the_second_asker_is_another_user_when_there_is_one() -> None:
    assert other_asker([q("a"), q("b"), q("c", user="u002")]) == q("c", user="u002")
    # a role asker first: another user is still preferred, as a user's token may hold the role
    assert other_asker([q("a", None, "engineer"), q("b", None, "hr"), q("c")]) == q("c")
    assert other_asker([q("a", None, "engineer"), q("b", None, "hr")]) == q("b", None, "hr")
    assert other_asker([q("a"), q("b")]) is None


class UserToken:
    """A target holding one user's token: that user's questions are answered, anyone else's refused (403)."""

    name = "user-token"
    url = "http://recall.example/api/mcp/recall"

    def __init__(self, user: str) -> None:
        self.user = user
        self.asked: list[str] = []

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        self.asked.append(query.query_id)
        if query.user_id != self.user:
            raise TargetError(f"HTTP 403: this token acts as {self.user}", retryable=False, kind="http_403")
        return TargetResponse(hits=[RunHit(doc_id="d0001", rank=1)])

    async def aclose(self) -> None:
        return None


def test_a_user_token_is_refused_at_preflight_and_nothing_else_is_sent() -> None:
    queries = [q("q1"), q("q2"), q("q3", user="u002"), q("q4", user="u003")]
    target = UserToken("u001")  # the first asker's own token: the first probe alone would pass
    pre = asyncio.run(preflight(target, queries, 10))
    assert target.asked == ["q1", "q3"]
    assert not pre.ok and pre.fatal and pre.kind == "http_403" and pre.query_id == "q3"
    assert "this token cannot evaluate as other users" in pre.diagnosis
    assert "scope evaluate-as (`drivebench tokens --corpus NAME` prints it)" in pre.diagnosis
    assert pre.diagnosis.endswith("(user u001 was answered, user u002 was not)")

    target = UserToken("u001")
    evaluation = evaluate(target, queries)
    assert target.asked == ["q1", "q3"]  # the run sent nothing after the probes
    assert evaluation.result["status"]["state"] == "failed"
    assert {(r.error_kind, r.attempts) for r in evaluation.records} == {("preflight", 0)}

    # the evaluation token's answer to both askers passes, naming both
    both = asyncio.run(preflight(UserToken("u001"), [q("q1"), q("q2", user="u001")], 10))
    assert both.ok and both.diagnosis == "ok: 1 result(s) for q1 as user u001" and len(both.hits) == 1
