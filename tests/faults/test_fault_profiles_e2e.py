"""Every fault profile, end to end: the evaluator, over real HTTP, flags exactly the damage it does.

The seed corpus carries the permission, version and citation cases; the built-in ``acme-en`` corpus
carries the dxf drawings (its drawing questions name what a drawing says, never its file name).
Profiles that need the drive to change while they are on (``stale-acl``: a revocation;
``stale-index``: new versions) run on their own simulator through ``fault_comparison`` (the code
behind ``drivebench demo --fault``): faulted first, then the same server with the faults off.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from drivebench.api import load_simulator
from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.evaluate import Evaluation, evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.experiments.fault_comparison import (
    FaultComparison,
    comparison_table,
    corpus_catalog,
    fault_comparison,
    retries_of,
)
from drivebench.experiments.fault_scenarios import revoke_gold_access
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.faults import FaultSet, parse_fault_specs
from drivebench.testing import ServedSimulator

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
K = 10
FAST_RETRIES = RunConfig(top_k=10, concurrency=4, mode="answer", attempts=4, backoff_base=0.01, backoff_max=0.05)


def run_eval(
    url: str, sim: Simulator, queries: list[EvalQuery], cfg: RunConfig = FAST_RETRIES, **kw: Any
) -> Evaluation:
    assert sim.corpus_dir is not None
    kw.setdefault("oracle", corpus_oracle(sim.corpus_dir))
    kw.setdefault("catalog", corpus_catalog(sim.corpus_dir))
    return evaluate(HttpTarget(url, sim.tokens.eval_token), queries, ks=(1, 3, K), run_config=cfg, **kw)


def ranked(ev: Evaluation) -> dict[str, list[tuple[str, str | None]]]:
    return {r.query_id: [(h.doc_id, h.version_id) for h in r.results] for r in ev.records if r.error is None}


def m(ev: Evaluation, name: str) -> Any:
    return ev.result["metrics"][name]


@pytest.fixture(scope="module")
def catalog(drivebench_simulator: Simulator) -> Catalog:
    assert drivebench_simulator.corpus_dir is not None
    return corpus_catalog(drivebench_simulator.corpus_dir)


@pytest.fixture(scope="module")
def baseline(drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery]) -> Evaluation:
    """The clean server, answer mode (recall results plus answers)."""
    assert not drivebench_server.sim.faults
    return run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)


def test_clean_server_leaks_nothing_and_cites_its_sources(baseline: Evaluation) -> None:
    assert m(baseline, f"leak_rate@{K}") == 0.0
    assert m(baseline, f"stale_version_hit_rate@{K}") == 0.0
    assert m(baseline, f"hit_rate@{K}") >= 0.95
    assert m(baseline, "source_coverage") >= 0.6 and m(baseline, "citation_precision") >= 0.5
    assert baseline.result["counts"]["errors"] == 0 and retries_of(baseline.records) == 0
    assert baseline.result["counts"]["citations_unresolvable"] == 0


def test_leaky_acl_is_caught_as_leaks(
    drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery], drivebench_faults: FaultSet, baseline: Evaluation
) -> None:
    before = drivebench_faults.injected["leaky-acl"]  # counts of earlier tests on the session's fault set
    drivebench_faults.enable("leaky-acl")
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert m(ev, f"leak_rate@{K}") > 0.1
    assert ev.result["leaks"]["documents"] and drivebench_faults.injected["leaky-acl"] > before
    assert m(ev, f"stale_version_hit_rate@{K}") == 0.0
    # reproducible: the same faults again give the same leaks
    drivebench_faults.replace(parse_fault_specs("leaky-acl"))
    again = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert ranked(again) == ranked(ev)


def test_citation_drop_lowers_source_coverage_only(
    drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery], drivebench_faults: FaultSet, baseline: Evaluation
) -> None:
    drivebench_faults.enable("citation-drop")
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert m(ev, "source_coverage") < m(baseline, "source_coverage") - 0.15
    assert ranked(ev) == ranked(baseline)  # retrieval untouched
    assert m(ev, f"leak_rate@{K}") == 0.0


def test_wrong_citation_lowers_citation_precision_without_leaking(
    drivebench_server: ServedSimulator,
    seed_evalset: list[EvalQuery],
    drivebench_faults: FaultSet,
    baseline: Evaluation,
    catalog: Catalog,
) -> None:
    drivebench_faults.enable("wrong-citation")
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert m(ev, "citation_precision") < m(baseline, "citation_precision") - 0.15
    assert ranked(ev) == ranked(baseline)
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    oracle = corpus_oracle(sim.corpus_dir)
    by_id = {q.query_id: q for q in seed_evalset}
    for row in ev.result["per_query"]:  # a wrong citation still names a document the user may preview
        for doc_id in (row.get("citations") or {}).get("cited", []):
            assert oracle(by_id[row["query_id"]], doc_id), (row["query_id"], doc_id)


def test_latency_is_measured_and_changes_nothing_else(
    drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery], drivebench_faults: FaultSet, baseline: Evaluation
) -> None:
    drivebench_faults.enable("latency", delay_ms=150, jitter_ms=50)
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert m(ev, "latency_ms_p50") >= m(baseline, "latency_ms_p50") + 100
    assert min(r.latency_ms or 0.0 for r in ev.records) >= 150.0  # every request waited at least delay_ms
    assert ranked(ev) == ranked(baseline) and ev.result["counts"]["errors"] == 0


@pytest.mark.parametrize("spec", ["errors:share=0.5", "throttle:share=0.5:retry_after_s=0.05"])
def test_errors_and_throttling_are_retried_and_counted(
    drivebench_server: ServedSimulator,
    seed_evalset: list[EvalQuery],
    drivebench_faults: FaultSet,
    baseline: Evaluation,
    spec: str,
) -> None:
    (fault,) = parse_fault_specs(spec)
    drivebench_faults.enable(fault)
    before = drivebench_faults.injected[fault.name]
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    injected = drivebench_faults.injected[fault.name] - before
    errors = ev.result["counts"]["errors"]
    retries = retries_of(ev.records)
    assert retries > 0
    # every injected failure is either a retry or (on the last attempt) a recorded error
    assert retries + errors == injected
    assert errors == sum(1 for r in ev.records if r.error is not None) < len(seed_evalset) // 4
    assert all(r.attempts == FAST_RETRIES.attempts for r in ev.records if r.error is not None)
    clean = ranked(baseline)
    assert all(clean[qid] == hits for qid, hits in ranked(ev).items())  # what got through is right
    assert m(ev, f"leak_rate@{K}") == 0.0


def test_a_clean_server_again_gives_the_baseline(
    drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery], baseline: Evaluation
) -> None:
    """After every fault above was switched on and off, the results are the clean ones, exactly."""
    assert not drivebench_server.sim.faults
    ev = run_eval(drivebench_server.url, drivebench_server.sim, seed_evalset)
    assert ranked(ev) == ranked(baseline)
    assert [r.answer for r in ev.records] == [r.answer for r in baseline.records]


# ---------------------------------------------------------------------- profiles that change the drive


@pytest.fixture
def fresh_seed(drivebench_simulator: Simulator) -> Iterator[tuple[Simulator, str]]:
    """A simulator of its own (these tests change grants and versions), served on a free port."""
    sim = load_simulator(drivebench_simulator.corpus_dir or "seed", config=drivebench_simulator.config)
    with start_in_thread(sim) as server:
        yield sim, server.url


def _compare(sim: Simulator, url: str, spec: str, queries: list[EvalQuery] | None = None) -> FaultComparison:
    assert sim.corpus_dir is not None
    qs = queries if queries is not None else load_evalset(sim.corpus_dir / "evalset.jsonl")
    cmp = fault_comparison(
        sim,
        url,
        qs,
        parse_fault_specs(spec),
        ks=(1, 3, K),
        oracle=corpus_oracle(sim.corpus_dir),
        catalog=corpus_catalog(sim.corpus_dir),
    )
    assert comparison_table(cmp, K).row_count >= 8  # the demo's table renders
    assert not sim.faults
    return cmp


def test_stale_acl_serves_revoked_documents(fresh_seed: tuple[Simulator, str]) -> None:
    sim, url = fresh_seed
    cmp = _compare(sim, url, "stale-acl:delay_s=3600")
    assert len(cmp.scenario["revoked"]) >= 10
    assert m(cmp.faulted, f"leak_rate@{K}") > 0.2
    assert m(cmp.clean, f"leak_rate@{K}") == 0.0
    leaked = {d["doc_id"] for d in cmp.faulted.result["leaks"]["documents"]}
    assert leaked <= set(cmp.scenario["revoked"])
    assert m(cmp.faulted, f"stale_version_hit_rate@{K}") == 0.0


def test_stale_acl_catches_up_after_the_delay(fresh_seed: tuple[Simulator, str]) -> None:
    sim, _ = fresh_seed
    q = EvalQuery(
        query_id="x", query="What is the maximum size of a pull request?", user_id="u010", gold=[{"doc_id": "d0007"}]
    )

    def top() -> list[str]:
        return [h.doc_id for h in sim.recall(sim.engine.user_principal("u010"), q.query, 3).hits]

    assert "d0007" in top()
    sim.faults.enable("stale-acl", delay_s=0.5)
    revoke_gold_access(sim, [q])
    assert "d0007" in top()  # still the old policy
    time.sleep(0.6)
    assert "d0007" not in top()  # caught up
    sim.faults.enable("stale-acl", delay_s=3600, clock="sim")  # simulated time: only the sim clock counts
    q2 = EvalQuery(
        query_id="y", query="Which Kubernetes cluster runs GPU inference?", user_id="u010", gold=[{"doc_id": "d0010"}]
    )
    assert "d0010" in [h.doc_id for h in sim.recall(sim.engine.user_principal("u010"), q2.query, 3).hits]
    revoke_gold_access(sim, [q2])
    from datetime import timedelta

    assert "d0010" in [h.doc_id for h in sim.recall(sim.engine.user_principal("u010"), q2.query, 3).hits]
    sim.drive.clock.advance(timedelta(hours=2))
    assert "d0010" not in [h.doc_id for h in sim.recall(sim.engine.user_principal("u010"), q2.query, 3).hits]
    sim.faults.clear()


def test_stale_index_serves_old_versions(fresh_seed: tuple[Simulator, str]) -> None:
    sim, url = fresh_seed
    cmp = _compare(sim, url, "stale-index")
    assert cmp.scenario["new_versions"]
    assert m(cmp.faulted, f"stale_version_hit_rate@{K}") > 0.3
    assert m(cmp.clean, f"stale_version_hit_rate@{K}") == 0.0
    assert m(cmp.faulted, f"leak_rate@{K}") == 0.0 == m(cmp.clean, f"leak_rate@{K}")


@pytest.fixture(scope="module")
def acme_en() -> Iterator[tuple[Simulator, str]]:
    """The built-in acme-en corpus at default scale (27 drawings; 27 questions in the dxf stratum, 225 in
    the others), served with BM25, the default pipeline. BM25 reads no vectors, so the hash embedder
    spares embedding the corpus with MiniLM."""
    sim = load_simulator("acme-en@1", config=SimConfig(pipeline="bm25", embedder="hash"))
    with start_in_thread(sim) as server:
        yield sim, server.url


def test_cad_blind_hits_the_dxf_stratum_only(acme_en: tuple[Simulator, str]) -> None:
    """Measured (bm25, hit_rate@10): dxf 1.000 clean -> 0.000 cad-blind, every other type unchanged."""
    sim, url = acme_en
    cmp = _compare(sim, url, "cad-blind")

    def strata(ev: Evaluation) -> dict[str, float]:
        return {ft: float(v[f"hit_rate@{K}"]) for ft, v in ev.result["strata"]["file_type"].items()}

    clean, blind = strata(cmp.clean), strata(cmp.faulted)
    assert set(clean) == set(blind) >= {"dxf", "pdf", "docx", "xlsx", "pptx", "zip", "md", "txt"}
    assert clean["dxf"] >= 0.9
    assert blind["dxf"] <= clean["dxf"] - 0.5, (clean, blind)
    others = {ft: (clean[ft], blind[ft]) for ft in clean if ft != "dxf"}
    assert all(abs(b - c) <= 0.05 for c, b in others.values()), others
    assert all(c >= 0.9 for c, _ in others.values()), others
    assert m(cmp.faulted, f"leak_rate@{K}") == 0.0 == m(cmp.clean, f"leak_rate@{K}")
    # switched back: the drawings are read again (title block, notes and layers, not just the file name)
    dxf = [v.version_id for d in sim.drive.documents.values() if d.file_type == "dxf" for v in d.versions]
    assert dxf and all(len(sim.store.by_version[v]) > 1 for v in dxf)
