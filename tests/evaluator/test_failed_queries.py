"""report.md lists every missed query of a run with names: the question, who asked it, the gold documents and
the top results by name, the leaked documents of a leaking query; the HTML escapes them, JUnit carries them."""

from __future__ import annotations

import json
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.evaluate import evaluate, write_outputs
from drivebench.evaluator.failed_queries import FAILED_QUERIES_JSONL
from drivebench.evaluator.gates import write_junit
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.report.outputs import load_metrics, write_reports
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.function import FunctionTarget
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import EvalQuery, GoldDoc, write_jsonl
from drivebench.simulator.backend import Simulator
from drivebench.simulator.target import InProcessTarget
from drivebench.testing import ServedSimulator

HOSTILE = '<img src=x onerror="alert(1)">报价单.pdf'


def _catalog(sim: Simulator) -> Catalog:
    assert sim.corpus_dir is not None
    return Catalog.from_manifest(load_manifest(sim.corpus_dir))


def _section(md: str) -> str:
    return md.split("## Queries that missed or leaked", 1)[1].split("\n## ", 1)[0]


def _run_with_misses(sim: Simulator, seed_evalset: list[EvalQuery], tmp_path: Path) -> tuple[Any, Catalog, Path]:
    """The seed eval set on the simulator in process, plus two queries whose gold the pipeline does not rank
    (the question of one query, the gold of a document its results do not hold)."""
    catalog = _catalog(sim)
    cfg = RunConfig(top_k=10, concurrency=2)
    probe = seed_evalset[0]
    first = evaluate(InProcessTarget(sim), [probe], run_config=cfg)
    returned = set(first.records[0].ranked_doc_ids)
    unranked = [d.doc_id for d in catalog if d.doc_id not in returned and d.name]
    assert len(unranked) >= 2
    misses = [
        probe.model_copy(update={"query_id": f"miss-{i}", "query": f"{probe.query} ({i})", "gold": [GoldDoc(doc_id=d)]})
        for i, d in enumerate(unranked[:2])
    ]
    queries = [*seed_evalset, *misses]
    evaluation = evaluate(InProcessTarget(sim), queries, run_config=cfg, catalog=catalog)
    out = write_outputs(evaluation, tmp_path / "run")
    write_reports(evaluation.result, out)
    return evaluation, catalog, out


def test_report_md_lists_every_missed_query_with_names(
    sim: Simulator, seed_evalset: list[EvalQuery], tmp_path: Path
) -> None:
    evaluation, catalog, out = _run_with_misses(sim, seed_evalset, tmp_path)
    by_id = {q.query_id: q for q in [*seed_evalset]}
    missed = [r["query_id"] for r in evaluation.result["per_query"] if r.get("hit_rate@10") == 0.0]
    assert {"miss-0", "miss-1"} <= set(missed)
    section = _section((out / "report.md").read_text(encoding="utf-8"))
    assert f"{len(missed)} answered quer" in section
    rows = {json.loads(line)["query_id"]: json.loads(line) for line in (out / FAILED_QUERIES_JSONL).open()}
    assert set(missed) <= set(rows)
    for qid in missed:
        row = rows[qid]
        assert f"| {qid} |" in section
        assert row["question"] in section
        for gold in row["gold"]:
            doc = catalog.get(gold["doc_id"])
            assert doc is not None and doc.name and gold["name"] == doc.name
            assert doc.name in section and doc.path in section
        assert 1 <= len(row["top"]) <= 3 and [t["rank"] for t in row["top"]] == list(range(1, len(row["top"]) + 1))
        for top in row["top"]:
            assert f"{top['rank']}. {top['name']}" in section
        if qid in by_id:
            q = by_id[qid]
            assert row["asker"] == (q.user_id or f"role:{q.user_role}")
    # a report re-rendered from metrics.json alone has the same section
    again = tmp_path / "again"
    write_reports(load_metrics(out), again)
    assert _section((again / "report.md").read_text(encoding="utf-8")) == section


def test_more_rows_than_the_cap_point_to_the_jsonl(tmp_path: Path, sim: Simulator) -> None:
    catalog = _catalog(sim)
    docs = [d for d in catalog if d.name][:2]
    queries = [
        EvalQuery(query_id=f"q{i}", query=f"question {i}", user_role="employee", gold=[GoldDoc(doc_id=docs[0].doc_id)])
        for i in range(60)
    ]
    evaluation = evaluate(FunctionTarget(lambda *_: [docs[1].doc_id]), queries, catalog=catalog)
    out = write_outputs(evaluation, tmp_path / "run")
    write_reports(evaluation.result, out)
    section = _section((out / "report.md").read_text(encoding="utf-8"))
    assert "60 answered queries" in section and "10 more are in failed_queries.jsonl" in section
    assert "| q49 |" in section and "| q50 |" not in section
    assert len((out / FAILED_QUERIES_JSONL).read_text(encoding="utf-8").splitlines()) == 60
    assert len(load_metrics(out)["failed_queries"]["rows"]) == 50


def test_without_a_catalog_rows_show_ids_and_say_so(tmp_path: Path) -> None:
    q = EvalQuery(query_id="q1", query="where is the budget", user_id="alice", gold=[GoldDoc(doc_id="gold-1")])
    evaluation = evaluate(FunctionTarget(lambda *_: ["other-7"]), [q])
    write_reports(evaluation.result, tmp_path)
    section = _section((tmp_path / "report.md").read_text(encoding="utf-8"))
    assert "give --corpus" in section
    assert "| q1 | alice | no gold in top 10 | where is the budget | gold-1 | 1. other-7" in section


def test_leaking_target_has_the_leak_row_by_name_and_html_escapes_names(
    sim: Simulator, seed_evalset: list[EvalQuery], tmp_path: Path
) -> None:
    assert sim.corpus_dir is not None
    catalog = _catalog(sim)
    oracle = corpus_oracle(sim.corpus_dir)
    probe, secret = next((q, d) for q in seed_evalset for d in catalog if d.name and not oracle(q, d.doc_id))
    hostile = replace(secret, name=HOSTILE)
    catalog.add(hostile)
    gold = probe.gold_ids
    target = FunctionTarget(lambda *_: [secret.doc_id, *gold])
    q = probe.model_copy(update={"query": "<b>who</b> & what?"})
    evaluation = evaluate(target, [q], oracle=oracle, catalog=catalog)
    assert evaluation.result["per_query"][0]["leaked"] == [secret.doc_id]
    out = write_outputs(evaluation, tmp_path / "run")
    md, html = write_reports(evaluation.result, out)
    section = _section(md.read_text(encoding="utf-8"))
    assert "| leak |" in section and HOSTILE in section.split("| leak |", 1)[1]
    page = html.read_text(encoding="utf-8")
    assert HOSTILE not in page and "<b>who</b>" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;报价单.pdf" in page
    assert "&lt;b&gt;who&lt;/b&gt; &amp; what?" in page
    # JUnit: the question, the leaked document by name
    junit = write_junit(tmp_path / "junit.xml", evaluation.result, [])
    cases = ET.parse(junit).getroot().findall(".//testsuite[@name='drivebench.queries']/testcase")
    assert [c.get("name") for c in cases] == [q.query_id]
    message = cases[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "leaked" in message and "<b>who</b> & what?" in message and HOSTILE in message


def test_junit_carries_the_question_and_names_of_a_miss(
    sim: Simulator, seed_evalset: list[EvalQuery], tmp_path: Path
) -> None:
    evaluation, catalog, _ = _run_with_misses(sim, seed_evalset, tmp_path)
    junit = write_junit(tmp_path / "junit.xml", evaluation.result, [], misses=True)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    row = next(r for r in evaluation.result["failed_queries"]["rows"] if r["query_id"] == "miss-0")
    message = cases["miss-0"].find("failure").get("message")  # type: ignore[union-attr]
    gold = catalog.get(row["gold"][0]["doc_id"])
    assert gold is not None
    assert row["question"] in message and gold.name in message and row["top"][0]["name"] in message


def test_eval_run_cli_writes_the_section_the_jsonl_and_named_junit(
    drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery], tmp_path: Path
) -> None:
    """A served ``eval run --corpus --junit``: the missed query is in report.md, report.html, failed_queries.jsonl
    and the JUnit file, by question and gold name."""
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    catalog = _catalog(sim)
    probe = seed_evalset[0]
    returned = set(evaluate(InProcessTarget(sim), [probe]).records[0].ranked_doc_ids)
    gold = next(d for d in catalog if d.doc_id not in returned and d.name)
    miss = probe.model_copy(update={"query_id": "miss-cli", "gold": [GoldDoc(doc_id=gold.doc_id)]})
    evalset = write_jsonl(tmp_path / "evalset.jsonl", [*seed_evalset, miss])
    out, junit = tmp_path / "run", tmp_path / "junit.xml"
    args = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--evalset"]
    args += [str(evalset), "--corpus", str(sim.corpus_dir), "--out", str(out), "--junit", str(junit), "--junit-misses"]
    done = CliRunner().invoke(app, [*args, "--history", "none"])
    assert done.exit_code in (0, 1), done.output  # 1 when a gate fails; the run itself must not fail
    section = _section((out / "report.md").read_text(encoding="utf-8"))
    assert (
        f"| miss-cli | {miss.user_id or 'role:' + str(miss.user_role)} | no gold in top 10 | {miss.query} |" in section
    )
    assert gold.name in section and "give --corpus" not in section
    assert escape(gold.name) in (out / "report.html").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in (out / FAILED_QUERIES_JSONL).open(encoding="utf-8")]
    assert [r["gold"][0]["name"] for r in rows if r["query_id"] == "miss-cli"] == [gold.name]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    message = cases["miss-cli"].find("failure").get("message")  # type: ignore[union-attr]
    assert miss.query in message and gold.name in message
