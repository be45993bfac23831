"""Over-restriction: documents the asker may see that the target withheld are counted and listed like leaks;
a miss in a full list (possibly ranking) is not judged; a gate can fail on it, none does by default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drivebench.api import evaluate
from drivebench.evaluator.evaluate import write_outputs
from drivebench.evaluator.options import EvalOptions
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.scoring import score
from tests.support.evalrecords import make_query, make_record

FILLER = [f"f{i}" for i in range(10)]
QUERIES = [
    make_query("withheld", ["d1"], query="withheld", forbidden=["d9"]),
    make_query("outranked", ["d2"], query="outranked", forbidden=["d9"]),
    make_query("found", ["d3"], query="found", forbidden=["d9"]),
]
NARROW = {"withheld": ["d5"], "outranked": FILLER, "found": ["d3", *FILLER]}  # a short list that lacks d1


def narrow_acl(query: str, principal: dict[str, Any], top_k: int, as_of: Any) -> list[str]:
    return NARROW[query][:top_k]


def test_a_permitted_document_missing_from_a_short_list_is_withheld(tmp_path: Path) -> None:
    evaluation = evaluate(narrow_acl, QUERIES, EvalOptions(preflight=False))
    section = evaluation.result["over_restriction"]
    assert section["measured"] is True and section["top_k"] == 10
    assert (section["queries_judged"], section["queries_not_judged"], section["queries_over_restricted"]) == (2, 1, 1)
    assert section["documents"] == [{"doc_id": "d1", "queries": 1}]
    assert evaluation.result["counts"]["queries_over_restricted"] == 1
    assert [row["withheld"] for row in evaluation.result["per_query"]] == [["d1"], [], []]
    assert evaluation.passed  # not a gate by default
    gated = evaluate(narrow_acl, QUERIES, EvalOptions(preflight=False, fail_on=["queries_over_restricted>0"]))
    assert gated.verdict["reasons"] == ["FAILED: queries_over_restricted = 1 is above 0"]  # type: ignore[index]
    md, html = write_reports(evaluation.result, write_outputs(evaluation, tmp_path / "run"))
    text = md.read_text(encoding="utf-8")
    assert "## Over-restriction" in text and "1 of 2 judged queries withheld" in text and "| d1 |" in text
    assert 'id="table-withheld-documents"' in html.read_text(encoding="utf-8")


def test_a_target_that_caps_its_lists_or_an_offline_run_is_not_measured() -> None:
    capped = evaluate(lambda *_: ["d5"], QUERIES, EvalOptions(preflight=False, fail_on=["queries_over_restricted>0"]))
    section = capped.result["over_restriction"]
    assert section["measured"] is False and "never returned more than 1 of the 10" in section["reason"]
    assert "queries_over_restricted" not in capped.result["counts"]  # never a 0 for a figure not measured
    assert capped.verdict["reasons"][0].startswith("FAILED: queries_over_restricted was not measured")  # type: ignore[index]
    offline = score(QUERIES, [make_record(q.query_id, NARROW[q.query]) for q in QUERIES], oracle="evalset")
    assert offline["over_restriction"]["measured"] is False and "top_k" in offline["over_restriction"]["reason"]
