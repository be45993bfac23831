"""TREC export: trec_eval (pytrec_eval) reading run.trec/qrels.txt reproduces our numbers."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
import pytrec_eval
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.report.sample import sample_inputs
from drivebench.evaluator.scoring import score
from drivebench.evaluator.trec import export_trec, qrels_lines, run_lines, trec_id
from drivebench.formats.evalset import EvalQuery, RunRecord, write_jsonl

KS = (1, 3, 5, 10)
MEASURES = {"success.1,3,5,10", "recall.1,3,5,10", "ndcg_cut.1,3,5,10", "recip_rank"}


def _case(seed: int, n: int = 300) -> tuple[list[EvalQuery], list[RunRecord]]:
    """Graded gold, duplicated documents (chunks), errored, missing and gold-less queries, ids with
    spaces, system scores that are NOT sorted (rank = order returned)."""
    rng = random.Random(seed)
    queries, run = [], []
    for i in range(n):
        qid = f"q {i}" if i % 17 == 0 else f"q{i}"
        pool = [f"doc {j}" if j % 11 == 0 else f"d{j}" for j in range(rng.randint(4, 25))]
        gold = [] if i % 13 == 0 else rng.sample(pool, rng.randint(1, min(5, len(pool))))
        queries.append(
            EvalQuery(
                query_id=qid,
                query="q",
                user_role="r",
                gold=[{"doc_id": d, "grade": rng.randint(1, 3)} for d in gold],
            )
        )
        if i % 19 == 5:
            continue  # missing from the run
        ranked = rng.sample(pool, rng.randint(0, min(10, len(pool))))
        for _ in range(rng.randint(0, 2)):  # repeated documents, as several chunks of a file
            if ranked:
                ranked.insert(rng.randint(0, len(ranked)), rng.choice(ranked))
        ranked = ranked[:10]
        results = [{"doc_id": d, "score": rng.random()} for d in ranked]
        error = "HTTP 500" if i % 23 == 7 else None
        run.append(RunRecord(query_id=qid, results=results, error=error))
    return queries, run


@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_reproduces_our_metrics(tmp_path: Path, seed: int) -> None:
    queries, run = _case(seed)
    ours = score(queries, run, KS, bootstrap=False)
    run_path, qrels_path = export_trec(queries, run, tmp_path)
    with qrels_path.open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with run_path.open() as fh:
        trec_run = pytrec_eval.parse_run(fh)  # asserts: no docid twice per query
    theirs = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(trec_run)
    rows = {trec_id(r["query_id"]): r for r in ours["per_query"]}
    judged = [trec_id(q.query_id) for q in queries if q.gold]
    assert set(qrels) == set(judged)
    assert theirs, "nothing evaluated"
    for qid in judged:
        ref = theirs.get(qid)  # absent: no results (errored/missing/empty) -> every measure 0 (trec_eval -c)
        row = rows[qid]
        for k in KS:
            assert row[f"hit_rate@{k}"] == pytest.approx(ref[f"success_{k}"] if ref else 0.0, abs=1e-9), (qid, k)
            assert row[f"recall@{k}"] == pytest.approx(ref[f"recall_{k}"] if ref else 0.0, abs=1e-9), (qid, k)
            assert row[f"ndcg@{k}"] == pytest.approx(ref[f"ndcg_cut_{k}"] if ref else 0.0, abs=1e-9), (qid, k)
        assert row["mrr@10"] == pytest.approx(ref["recip_rank"] if ref else 0.0, abs=1e-9), qid
    for k in KS:  # means, as trec_eval -c computes them: over every judged query
        for name, measure in (("hit_rate", "success"), ("recall", "recall"), ("ndcg", "ndcg_cut")):
            mean = sum(theirs[q][f"{measure}_{k}"] for q in judged if q in theirs) / len(judged)
            assert ours["metrics"][f"{name}@{k}"] == pytest.approx(mean, abs=1e-9)


def test_run_file_format_and_order() -> None:
    queries, run = _case(3, 60)
    lines = run_lines(queries, run, tag="sys-A")
    by_query: dict[str, list[tuple[int, float, str]]] = {}
    for line in lines:
        parts = line.split()
        assert len(parts) == 6 and parts[1] == "Q0" and parts[5] == "sys-A", line
        by_query.setdefault(parts[0], []).append((int(parts[3]), float(parts[4]), parts[2]))
    ok = {r.query_id: r for r in run if r.error is None}
    for qid, entries in by_query.items():
        ranks = [r for r, _, _ in entries]
        scores = [s for _, s, _ in entries]
        assert ranks == list(range(1, len(ranks) + 1))
        assert all(a > b for a, b in itertools.pairwise(scores)), "scores must strictly decrease"
        rec = next(r for q, r in ok.items() if trec_id(q) == qid)
        docs = [trec_id(h.doc_id) for h in rec.results]
        exported = [d for _, _, d in entries]
        assert len(exported) == len(set(exported))
        for i, (want, got) in enumerate(zip(docs, exported, strict=True)):
            assert got == (want if want not in docs[:i] else f"{want}#dup{i + 1}")
    errored = {trec_id(r.query_id) for r in run if r.error is not None}
    assert errored and not errored & set(by_query)
    with pytest.raises(ValueError):
        run_lines(queries, run, tag="two words")


def test_qrels_and_ids() -> None:
    q = EvalQuery(
        query_id="q 1%",
        query="x",
        user_role="r",
        gold=[{"doc_id": "a b", "grade": 2}, {"doc_id": "c"}, {"doc_id": "a b", "grade": 3}],
    )
    assert qrels_lines([q]) == ["q%201%25 0 a%20b 2", "q%201%25 0 c 1"]
    assert trec_id("项目X 方案.pdf") == "项目X%20方案.pdf"


def test_cli_export_trec(tmp_path: Path) -> None:
    queries, run, _ = sample_inputs(seed=0, n_queries=20)
    write_jsonl(tmp_path / "evalset.jsonl", queries)
    write_jsonl(tmp_path / "rundir" / "run.jsonl", run)
    done = CliRunner().invoke(
        app,
        ["eval", "export-trec", "--evalset", str(tmp_path / "evalset.jsonl"), "--run", str(tmp_path / "rundir"),
         "--out", str(tmp_path / "trec"), "--tag", "mine"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "trec_eval -c" in done.stdout
    run_text = (tmp_path / "trec" / "run.trec").read_text()
    assert run_text.splitlines() == run_lines(queries, run, tag="mine")
    assert (tmp_path / "trec" / "qrels.txt").read_text().splitlines() == qrels_lines(queries)
