"""Multi-hop completeness by hop count, and strata."""

from __future__ import annotations

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.metrics.multi_hop import full_chain, multi_hop_completeness
from drivebench.evaluator.scoring import score
from drivebench.evaluator.strata import query_strata
from drivebench.formats.query_length import length_bucket

KS = (1, 3)


def test_completeness_and_full_chain_by_hop_count(mkq, mkr) -> None:
    qs = [
        mkq("h1", ["a"], hops=["a"]),
        mkq("h2a", ["c"], hops=["b", "c"]),
        mkq("h2b", ["c"], hops=["b", "c"]),
        mkq("h3", ["f"], hops=["d", "e", "f", "d"]),  # duplicate hop: 3 distinct
        mkq("plain", ["a"]),
    ]
    run = [
        mkr("h1", ["a"]),
        mkr("h2a", ["b", "c"]),
        mkr("h2b", ["x", "x", "x", "c"]),  # c beyond K=3
        mkr("h3", ["f", "d"]),
        mkr("plain", ["a"]),
    ]
    out = score(qs, run, KS, bootstrap=False)
    m = out["metrics"]
    assert out["config"]["multi_hop_k"] == 3
    assert m["multi_hop_completeness"] == {"1": 1.0, "2": 0.5, "3": 2 / 3}
    assert m["full_chain_rate"] == {"1": 1.0, "2": 0.5, "3": 0.0}
    assert m["hop_position_hit_rate"]["2"] == {"1": 0.5, "2": 0.5}
    assert m["hop_position_hit_rate"]["3"] == {"1": 1.0, "2": 0.0, "3": 1.0}
    assert out["counts"]["multi_hop"] == 4


def test_multi_hop_errored_counts_as_zero(mkq, mkr) -> None:
    qs = [mkq("a", ["y"], hops=["x", "y"]), mkq("b", ["y"], hops=["x", "y"])]
    out = score(qs, [mkr("a", ["x", "y"]), mkr("b", ["x", "y"], error="timeout")], KS, bootstrap=False)
    assert out["metrics"]["multi_hop_completeness"] == {"2": 0.5}


def test_multi_hop_scalars() -> None:
    assert multi_hop_completeness(["a", "b"], ["a", "c"], 2) == 0.5
    assert full_chain(["a", "c"], ["a", "c"], 2) == 1.0
    assert multi_hop_completeness(["a"], None, 2) is None


def test_length_buckets_chinese_and_english() -> None:
    assert length_bucket("审批人是谁") == "short"  # 5 chars
    assert length_bucket("项目X的技术方案审批人是谁?") == "medium"  # 12 chars + 1 word = 7 (schema example)
    assert length_bucket("请问二零二四年第二季度华东区域销售合同的审批流程是什么") == "medium"
    assert length_bucket("who approved the design") == "short"
    assert length_bucket("who approved the technical design document for project x last spring") == "medium"
    assert length_bucket(" ".join(["word"] * 16)) == "long"
    assert length_bucket("字" * 31) == "long"


def test_strata_values_from_tags_catalog_and_query(mkq) -> None:
    cat = Catalog(
        [
            CatalogDoc("a", "a.pdf", file_type="pdf", department="rd", secret_level="internal"),
            CatalogDoc("b", "b.xlsx", file_type="xlsx", department="rd", secret_level="secret"),
        ]
    )
    s = query_strata(mkq("q", ["a", "b"], hops=["a", "b"]), cat)
    assert s == {
        "department": "rd",
        "file_type": "mixed",
        "length": s["length"],
        "hops": "2",
        "role": "engineer",
        "kind": "unknown",
        "secret_level": "secret",
        "visible_share": "unknown",  # only a corpus oracle knows what the asker may see
    }
    tagged = mkq("t", ["a"], tags={"department": "fin", "file_type": "dxf", "length": "long", "kind": "lookup"})
    s = query_strata(tagged, cat)
    assert (s["department"], s["file_type"], s["length"], s["kind"]) == ("fin", "dxf", "long", "lookup")
    assert query_strata(mkq("n", [], user_role=None, user_id="u1"))["secret_level"] == "none"
    assert query_strata(mkq("n", [], user_role=None, user_id="u1"))["role"] == "unknown"


def test_strata_in_score_partition_the_queries(mkq, mkr) -> None:
    qs = [
        mkq("q1", ["a"], tags={"kind": "lookup"}),
        mkq("q2", ["b"], tags={"kind": "lookup"}),
        mkq("q3", ["c"], tags={"kind": "multi_hop"}),
    ]
    out = score(qs, [mkr("q1", ["a"]), mkr("q2", ["x"]), mkr("q3", ["c"])], KS, bootstrap=False)
    kind = out["strata"]["kind"]
    assert kind["lookup"]["n"] == 2 and kind["lookup"]["hit_rate@1"] == 0.5
    assert kind["multi_hop"]["hit_rate@1"] == 1.0
    for name, values in out["strata"].items():
        assert sum(v["n"] for v in values.values()) == 3, name


def test_refusal_secret_level_comes_from_forbidden_docs(mkq) -> None:
    cat = Catalog([CatalogDoc("s", secret_level="secret")])
    assert query_strata(mkq("r", [], forbidden=["s"]), cat)["secret_level"] == "secret"
    assert query_strata(mkq("r", [], forbidden=["s"]))["secret_level"] == "unknown"
