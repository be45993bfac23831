"""The leak table groups leaks by cause (deny, clearance, expired grant, inheritance broken, ...) with counts, and
each leaked document says why it must not be seen: the causes are the leak oracle's own decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.evaluate import evaluate, write_outputs
from drivebench.evaluator.leak_causes import CLEARANCE, DENY, EXPIRED, INHERITANCE_BROKEN, label, leaked_causes
from drivebench.evaluator.oracle import DriveOracle, corpus_oracle
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.targets.function import FunctionTarget
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import EvalQuery

WANTED = (DENY, CLEARANCE, EXPIRED, INHERITANCE_BROKEN)


@pytest.fixture(scope="module")
def oracle() -> DriveOracle:
    return corpus_oracle(resolve_corpus("seed"))


def _pairs(oracle: DriveOracle) -> dict[str, tuple[EvalQuery, str]]:
    """For each wanted cause, a (query, document) the oracle refuses with that cause among its causes."""
    found: dict[str, tuple[EvalQuery, str]] = {}
    for user in sorted(oracle.drive.users):
        q = EvalQuery(query_id=f"q-{user}", query=user, user_id=user, gold=[])
        for doc_id in sorted(oracle.drive.documents):
            for cause in leaked_causes(oracle.reasons(q, doc_id)) if not oracle(q, doc_id) else []:
                if cause in WANTED and cause not in found:
                    found[cause] = (q.model_copy(update={"query_id": f"{cause}-{user}", "query": cause}), doc_id)
        if len(found) == len(WANTED):
            break
    return found


def test_leaks_are_grouped_by_the_oracles_causes_in_metrics_and_reports(oracle: DriveOracle, tmp_path: Path) -> None:
    pairs = _pairs(oracle)
    assert set(pairs) == set(WANTED)  # the seed corpus has every one of them
    returns = {q.query: [doc_id] for q, doc_id in pairs.values()}

    def leaky(query: str, principal: dict[str, Any], top_k: int, as_of: Any) -> list[str]:
        return returns[query]

    catalog = Catalog.from_manifest(load_manifest(resolve_corpus("seed")))
    queries = [q for q, _ in pairs.values()]
    evaluation = evaluate(FunctionTarget(leaky), queries, oracle=oracle, catalog=catalog)
    leaks = evaluation.result["leaks"]
    expected: dict[str, int] = {}
    for q, doc_id in pairs.values():
        for cause in leaked_causes(oracle.reasons(q, doc_id)):
            expected[cause] = expected.get(cause, 0) + 1
    assert {g["cause"]: g["leaks"] for g in leaks["by_cause"]} == expected
    for q, doc_id in pairs.values():
        (doc,) = [d for d in leaks["documents"] if d["doc_id"] == doc_id]
        assert set(leaked_causes(oracle.reasons(q, doc_id))) <= set(doc["causes"])
        assert oracle.explain(q, doc_id)[0] in doc["why"]
    md, html = write_reports(evaluation.result, write_outputs(evaluation, tmp_path / "run"))
    text = md.read_text(encoding="utf-8")
    assert "### Leaks by cause" in text and "Why it must not be seen" in text
    for cause, n in expected.items():
        assert f"| {label(cause)} | {n} |" in text
    page = html.read_text(encoding="utf-8")
    assert 'id="table-leak-causes"' in page and label(EXPIRED) in page
