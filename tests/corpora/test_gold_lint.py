"""The gold linter and the composition counts, on hand-made inputs (pure functions: no simulator, no corpus),
then once end to end through ``audit_corpus`` on the seed corpus.

The readable documents stand for what the audit hands the linter: the passages of every document the asker
may preview at the query's time, in the version current then (``Simulator.visible_chunks``); a document the
asker may not preview, or trashed then, is absent from them, so it is never read (the end-to-end test checks
that wiring with a document hidden from one asker and not yet written at another time).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from drivebench.corpora.builtin import resolve_corpus
from drivebench.experiments.corpus_audit import acceptance, audit_corpus, composition
from drivebench.experiments.gold_lint import LintInput, fact_roles, lint_gold, lint_query
from drivebench.formats.corpus import EVALSET_NAME, Document, Version
from drivebench.formats.evalset import EvalQuery, GoldDoc, write_jsonl

GOLD_TEXT = "项目立项审批单 PRJ-2026-003 · 项目立项审批单.docx\n项目编号：PRJ-2026-003\n审批人：林晓峰\n预算：120 万元"


def _q(**kw: object) -> EvalQuery:
    base: dict[str, object] = {
        "query_id": "q1",
        "query": "智能仓储项目是谁批的？",
        "user_id": "u1",
        "gold": [{"doc_id": "gold", "version_id": "gold-v1"}],
        "answer_facts": ["林晓峰"],
        "anchors": ["PRJ-2026-003"],
    }
    base.update(kw)
    return EvalQuery.model_validate(base)


def _lint(q: EvalQuery, readable: dict[str, list[str]]) -> tuple[str, list[dict], list[dict]]:  # type: ignore[type-arg]
    return lint_query(LintInput(q, GOLD_TEXT, {"gold": [GOLD_TEXT], **readable}))


def test_roles_carry_their_separator() -> None:
    assert fact_roles(GOLD_TEXT, "林晓峰") == {("审批人", "colon")}
    assert fact_roles("The approver is Tom Lee, for the board.", "Tom Lee") == {("heapproveris", "space")}
    assert fact_roles("*林晓峰*", "林晓峰") == set()  # a byline has no role


def test_a_look_alike_that_contradicts_the_gold_is_found() -> None:
    look_alike = "项目立项审批单 PRJ-2026-003（副本） · 副本.docx\n项目编号：PRJ-2026-003\n审批人：韩梅\n预算：120 万元"
    status, contradictions, missing = _lint(_q(), {"copy": [look_alike]})
    assert status == "linted" and missing == []
    assert contradictions == [
        {"query_id": "q1", "doc_id": "copy", "role": "审批人", "value": "韩梅", "answer": "林晓峰"}
    ]


def test_the_anchor_is_matched_across_whitespace_and_latin_case() -> None:
    other = "周报 · 周报.md\n本周 prj - 2026 - 003 进展\n审批人：韩梅"
    assert _lint(_q(), {"weekly": [other]})[1][0]["doc_id"] == "weekly"


def test_another_entity_with_another_value_is_not_flagged() -> None:
    other = "项目立项审批单 PRJ-2026-004 · 项目立项审批单.docx\n项目编号：PRJ-2026-004\n审批人：韩梅"
    assert _lint(_q(), {"other": [other]}) == ("linted", [], [])
    longer_code = "PRJ-2026-0031 · a.docx\n审批人：韩梅"  # the anchor inside a longer code names another entity
    assert _lint(_q(), {"other": [longer_code]}) == ("linted", [], [])


def test_every_anchor_must_be_in_one_passage() -> None:
    q = _q(anchors=["PRJ-2026-003", "智能仓储"])
    split = ["名单 · a.md\n项目：PRJ-2026-003", "名单 · a.md\n仓库：智能仓储\n审批人：韩梅"]
    assert _lint(q, {"list": split}) == ("linted", [], [])
    together = ["名单 · a.md\n项目：PRJ-2026-003 智能仓储\n审批人：韩梅"]
    assert len(_lint(q, {"list": together})[1]) == 1


def test_roles_are_read_in_the_passages_naming_the_anchor() -> None:
    """A part drawing that names its assembly (the anchor) under related documents gives its own approver in
    its title block, another passage: not a contradiction. A document titled with the anchor names it from
    every passage (each chunk starts with the title), so its approver in a later passage is read."""
    part = ["零件图 DWG-9 · DWG-9.dxf\n审批人：韩梅", "零件图 DWG-9 · DWG-9.dxf\n所属项目：PRJ-2026-003"]
    assert _lint(_q(), {"part": part}) == ("linted", [], [])
    titled = ["PRJ-2026-003 周报 · 周报.md\n本周进展", "PRJ-2026-003 周报 · 周报.md\n审批人：韩梅"]
    assert [c["value"] for c in _lint(_q(), {"weekly": titled})[1]] == ["韩梅"]


def test_same_anchor_same_value_outside_gold_is_missing_gold() -> None:
    draft = "项目立项审批单 PRJ-2026-003（草稿） · 草稿.docx\n审批人：林晓峰"
    status, contradictions, missing = _lint(_q(), {"draft": [draft]})
    assert status == "linted" and contradictions == []
    assert missing == [{"query_id": "q1", "doc_id": "draft", "facts": ["林晓峰"]}]
    # the same document as grade-1 co-gold is gold: not flagged
    co_gold = _q(gold=[GoldDoc(doc_id="gold", version_id="gold-v1"), GoldDoc(doc_id="draft", grade=1)])
    assert _lint(co_gold, {"draft": [draft]}) == ("linted", [], [])


def test_the_answer_in_another_role_or_as_a_byline_is_neither() -> None:
    other = "PRJ-2026-003 会议纪要 · 纪要.md\n*林晓峰*\n记录人：林晓峰\n审批人签字：（空）"
    assert _lint(_q(), {"minutes": [other]}) == ("linted", [], [])


def test_two_answers_in_one_role_and_facts_with_spaces() -> None:
    gold_text = "PRJ-2026-003 · g.docx\n审批人：林晓峰\n审批人：韩梅\n材料：SPCC 冷轧钢板"
    q = _q(answer_facts=["林晓峰", "韩梅", "SPCC 冷轧钢板"])
    other = "PRJ-2026-003 · o.docx\n审批人：韩梅\n审批人：林晓峰\n材料：SPCC冷轧钢板"
    assert lint_query(LintInput(q, gold_text, {"o": [other]})) == (
        "linted",
        [],
        [{"query_id": "q1", "doc_id": "o", "facts": ["SPCC 冷轧钢板", "林晓峰", "韩梅"]}],
    )
    swapped = "PRJ-2026-003 · s.docx\n材料：6061-T6 铝合金"
    found = lint_query(LintInput(q, gold_text, {"s": [swapped]}))[1]
    assert [(c["role"], c["value"]) for c in found] == [("材料", "6061-T6 铝合金")]


def test_table_rows_give_no_role_and_headers_no_value() -> None:
    gold_text = "记录 PRJ-2026-003 · r.pdf\n审批人  林晓峰\n版本  审批人  日期\nv2.0  林晓峰  2026-09-12"
    assert fact_roles(gold_text, "林晓峰") == {("审批人", "space")}  # not "v2.0" from the data row
    other = "PRJ-2026-003 · o.pdf\n版本  审批人  日期\nv2.0  韩梅  2026-09-12\n审批人  韩梅  有条件同意"
    found = lint_query(LintInput(_q(), gold_text, {"o": [other]}))[1]
    assert [(c["role"], c["value"]) for c in found] == [("审批人", "韩梅")]


def test_latin_values_and_numbers() -> None:
    gold_text = "Contract CT-7 · ct7.pdf\nThe total contract value is $12,000, tax included."
    q = _q(answer_facts=["$12,000"], anchors=["ct-7"], gold=[{"doc_id": "g"}])
    same = "Contract CT-7 (copy) · copy.pdf\nthe total contract value is $12,000."
    other = "Contract CT-7 (draft) · draft.pdf\nThe total contract value is $12,500, tax included."
    status, contradictions, missing = lint_query(LintInput(q, gold_text, {"g": [gold_text], "s": [same], "o": [other]}))
    assert status == "linted" and [m["doc_id"] for m in missing] == ["s"]
    assert [(c["doc_id"], c["value"]) for c in contradictions] == [("o", "$12,500")]
    q2 = _q(answer_facts=["Tom Lee"], anchors=["CT-7"], gold=[{"doc_id": "g"}])
    gold2 = "CT-7 · a.md\nApprover: Tom Lee\n"
    longer = "CT-7 · b.md\napprover: Tom Leeson"
    assert [c["value"] for c in lint_query(LintInput(q2, gold2, {"b": [longer]}))[1]] == ["Tom Leeson"]


def test_only_what_the_asker_reads_is_linted() -> None:
    """The audit hands the linter only documents live and previewable at the query's time: a contradicting
    copy the asker cannot preview, or one trashed then, is absent from ``readable`` and never flagged; the
    same copy once readable is."""
    look_alike = "PRJ-2026-003 · copy.docx\n审批人：韩梅"
    assert _lint(_q(), {}) == ("linted", [], [])
    assert len(_lint(_q(), {"copy": [look_alike]})[1]) == 1


def test_unlinted_queries_are_counted_and_all_unlinted_is_not_measured() -> None:
    permission = _q(query_id="p", gold=[], forbidden=["secret"], answer_facts=[])
    no_anchor = _q(query_id="n", anchors=[])
    no_facts = _q(query_id="f", answer_facts=[])
    result = lint_gold([LintInput(q, GOLD_TEXT, {}) for q in (permission, no_anchor, no_facts)])
    assert result["linted"] == 0 and result["not_linted"] == 2 and result["permission_only"] == 1
    assert result["not_linted_by_reason"] == {"no_answer_facts": 1, "no_anchors": 1}
    assert result["contradictions"] is None and result["missing_gold"] is None
    look_alike = "PRJ-2026-003 · copy.docx\n审批人：韩梅"
    mixed = lint_gold([LintInput(no_anchor, GOLD_TEXT, {}), LintInput(_q(), GOLD_TEXT, {"copy": [look_alike]})])
    assert mixed["linted"] == 1 and mixed["not_linted"] == 1
    assert mixed["contradictions"] == 1 and mixed["missing_gold"] == 0


def _doc(
    doc_id: str, file_type: str, versions: int = 1, folder: str = "/rd", name: str | None = None, **kw: object
) -> Document:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    return Document(
        doc_id=doc_id,
        name=name or f"{doc_id}.{file_type}",
        folder=folder,
        file_type=file_type,
        created_at=t,
        versions=[
            Version(version_id=f"{doc_id}-v{i}", version=i, file="f", created_at=t) for i in range(1, versions + 1)
        ],
        **kw,  # type: ignore[arg-type]
    )


def test_composition_counts() -> None:
    t = datetime(2026, 2, 1, tzinfo=UTC)
    docs = [
        _doc("a", "pdf", versions=2),
        _doc("b", "docx"),
        _doc("c", "docx", name="same.docx"),
        _doc("d", "docx", name="same.docx"),
        _doc("e", "docx", name="same.docx", trashed_at=t),  # trashed: not a live path
        _doc("f", "xlsx", folder="/hr", name="same.docx"),  # another folder
    ]
    queries = [
        _q(query_id="m2", hops=["a", "b"], gold=[{"doc_id": "a"}, {"doc_id": "b"}]),
        _q(query_id="m3", hops=["a", "b", "c"], gold=[{"doc_id": "c"}]),
        _q(query_id="p1", gold=[], forbidden=["d"]),
        _q(query_id="p2", gold=[], forbidden=["c"]),
        _q(query_id="v1", tags={"kind": "version"}, gold=[{"doc_id": "a", "version_id": "a-v2"}]),
        _q(query_id="v2", as_of=t, gold=[{"doc_id": "a", "version_id": "a-v1"}]),  # an older version
        _q(query_id="v3", as_of=t, gold=[{"doc_id": "a", "version_id": "a-v2"}]),  # as_of, head version: not
    ]
    c = composition(queries, docs, {"p1": True, "p2": False})
    assert c["questions"] == 7
    assert c["multi_hop"] == 2 and c["by_hops"] == {"2": 1, "3": 1, "4": 0}
    assert c["permission"] == 2 and c["permission_strong_match"] == 1 and c["permission_strong_match_share"] == 0.5
    assert c["live_documents"] == 5 and c["versioned_documents"] == 1 and c["versioned_share"] == 0.2
    assert c["version_questions"] == 2
    assert c["gold_documents_by_file_type"] == {"docx": 2, "pdf": 1, "xlsx": 0}
    assert c["gold_documents_min_per_type"] == 0
    assert c["duplicate_live_paths"] == 1 and c["duplicate_path_examples"] == [
        {"path": "/rd/same.docx", "doc_ids": ["c", "d"]}
    ]
    unmeasured = composition(queries, docs, None)
    assert unmeasured["permission_strong_match_share"] is None


def passing_report() -> dict:  # type: ignore[type-arg]
    """The figures ``acceptance`` reads, each on the passing side of its bar."""
    return {
        "title_only": {"hit@10": 0.3},
        "pipelines": {
            "bm25": {"all": {"hit@1": 0.6, "hit@10": 0.9, "mrr@10": 0.7}},
            "dense": {"all": {"hit@1": 0.4, "hit@10": 0.8, "mrr@10": 0.5}},
        },
        "chains": {"shortcut_rate": 0.0},
        "generation": {"contradictions": 0},
        "answer_facts_missing": {"count": 0},
        "composition": {
            "questions": 300,
            "multi_hop": 75,
            "by_hops": {"2": 25, "3": 25, "4": 25},
            "permission": 60,
            "permission_strong_match_share": 0.8,
            "versioned_share": 0.2,
            "version_questions": 40,
            "gold_documents_min_per_type": 20,
            "duplicate_live_paths": 0,
        },
        "gold_lint": {"contradictions": 0, "missing_gold": 0},
        "chain_shortcuts_whole_corpus": {"bm25": {"shortcut_rate": 0.1}, "dense": {"shortcut_rate": 0.1}},
    }


def test_new_acceptance_checks_fail_when_unmeasured_or_crossed() -> None:
    """Composition, gold lint and whole-corpus shortcut checks: a report meeting every bar passes them; one
    under a bar, or with a value not measured, fails that check alone."""
    report = passing_report()
    checks = {c["check"]: c["ok"] for c in acceptance(report)}
    assert all(checks.values()), checks
    for path, value in [
        (("composition", "questions"), 299),
        (("composition", "by_hops", "4"), 24),
        (("composition", "permission_strong_match_share"), None),
        (("composition", "duplicate_live_paths"), 1),
        (("gold_lint", "contradictions"), 1),
        (("gold_lint", "missing_gold"), None),
        (("chain_shortcuts_whole_corpus", "dense", "shortcut_rate"), 0.11),
    ]:
        fake = passing_report()
        target = fake
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        failed = [c["check"] for c in acceptance(fake) if not c["ok"]]
        assert len(failed) == 1, (path, failed)


def test_the_audit_lints_what_the_asker_reads_then(tmp_path: Path) -> None:
    """End to end on the seed corpus: 项目X技术方案 (d0014) named 李强 as approver in v1 (June) and 王芳 in v2
    (September); its approval record d0015 (September, 审批人 王芳) is readable by u001, not by u007 (q037
    forbids both). A question pinned to v1 (answer 李强) asked today by u001 is contradicted by d0015; asked by
    u007, or as of August (d0015 not written yet), it is not. A question pinned to d0015 (王芳) finds d0014's
    current version saying the same: missing gold."""
    seed = resolve_corpus("seed")
    corpus = tmp_path / "c"
    shutil.copytree(seed, corpus)
    common = {"query": "项目X技术方案谁审批的？", "anchors": ["项目X技术方案"], "tags": {"kind": "single"}}
    v1 = {"gold": [{"doc_id": "d0014", "version_id": "d0014-v1"}], "answer_facts": ["李强"]}
    queries = [
        EvalQuery.model_validate({**common, **v1, "query_id": "today", "user_id": "u001"}),
        EvalQuery.model_validate({**common, **v1, "query_id": "hidden", "user_id": "u007"}),
        EvalQuery.model_validate(
            {**common, **v1, "query_id": "august", "user_id": "u001", "as_of": "2026-08-01T00:00:00Z"}
        ),
        EvalQuery.model_validate(
            {
                **common,
                "query_id": "record",
                "user_id": "u001",
                "gold": [{"doc_id": "d0015", "version_id": "d0015-v1"}],
                "answer_facts": ["王芳"],
            }
        ),
        EvalQuery.model_validate({**common, "query_id": "bare", "user_id": "u001", "anchors": [], **v1}),
    ]
    write_jsonl(corpus / EVALSET_NAME, queries)
    lint = audit_corpus(corpus, embedder="hash", pipelines=("bm25",))["gold_lint"]
    assert lint["linted"] == 4 and lint["not_linted_by_reason"] == {"no_anchors": 1}
    flagged = {(c["query_id"], c["doc_id"], c["value"]) for c in lint["contradiction_examples"]}
    # d0015's table header row "方案版本  审批人  日期  结论" is not read as 审批人 = 日期
    assert flagged == {("today", "d0015", "王芳（技术总监）")}
    assert [(m["query_id"], m["doc_id"]) for m in lint["missing_gold_examples"]] == [("record", "d0014")]
