"""``drivebench probe`` against a real uvicorn server: the simulator on acme-zh (small scale: 80
documents, 48 users, 2,479 forbidden pairs with every reason), BM25 with the documented hash embedder
(BM25 reads no vectors). Clean: 0 leaks over >= 1,000 pairs. ``leaky-acl`` (switched over HTTP with
``PUT /_sim/faults``) and ``stale-acl`` (after a revocation): leaks found and the documents named.
A dead target is exit 3, never "0 leaks"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from drivebench.api import load_simulator
from drivebench.cli.main import app
from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.model import GrantRec
from drivebench.drive.tokens import ADMIN_SERVICE, make_token
from drivebench.evaluator.probe.groundtruth import GroundTruth
from drivebench.evaluator.probe.pairs import sample_pairs
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.evaluator.probe.run import ProbeConfig, run_probe
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.corpus import load_manifest
from drivebench.server.process import free_port, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.vendor_server import vendor_app, vendor_profile

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
ALL_REASONS = {
    "deny",
    "clearance",
    "trashed",
    "moved-away",
    "expired-membership",
    "expired-grant",
    "broken-inheritance",
    "no-grant",
}


@pytest.fixture(scope="module")
def corpus() -> Path:
    return Path(resolve_corpus("acme-zh@1", scale="small"))


@pytest.fixture(scope="module")
def served(corpus: Path) -> Iterator[tuple[Simulator, str]]:
    sim = load_simulator(str(corpus), config=SimConfig(pipeline="bm25", embedder="hash"))
    with start_in_thread(sim) as server:
        yield sim, server.url


@pytest.fixture(scope="module")
def vendor(served: tuple[Simulator, str]) -> Iterator[str]:
    """A vendor-shaped API (its own ids: drive paths; errors as HTTP 200 + code) on a real uvicorn."""
    import threading
    import time

    port = free_port()
    config = uvicorn.Config(vendor_app(served[0]), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "vendor server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def probe_cli(tmp_path: Path, url: str, sim: Simulator, corpus: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "probe"
    cli = ["probe", "--target", url, "--token", sim.tokens.eval_token, "--corpus", str(corpus), "--out", str(out)]
    res = CliRunner().invoke(app, [*cli, *args])
    report = out / "probe.json"
    assert report.is_file(), res.output
    return res.exit_code, json.loads(report.read_text(encoding="utf-8"))


def set_faults(url: str, sim: Simulator, faults: list[str]) -> None:
    token = make_token(sim.drive.name, ADMIN_SERVICE)
    r = httpx.put(f"{url}/_sim/faults", json={"faults": faults}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    assert [f["name"] for f in r.json()["active"]] == [f.split(":")[0] for f in faults]


def test_clean_simulator_no_leak_over_1000_pairs(tmp_path: Path, served: tuple[Simulator, str], corpus: Path) -> None:
    sim, url = served
    code, r = probe_cli(tmp_path, url, sim, corpus, "--pairs", "1100", "--queries-per-pair", "1", "--seed", "7")
    assert r["status"]["state"] == "ok", r["status"]
    assert r["errors"]["failed"] == 0
    assert r["counts"]["pairs_measured"] == 1100 and r["counts"]["requests"] == 1100
    assert r["counts"]["results"] > 1100  # answers came back (a target returning nothing would fail, exit 3)
    assert r["counts"]["leaks"] == 0 and r["leaks"] == []
    assert code == 0
    assert set(r["strata"]["reason"]) == ALL_REASONS  # every reason a document can be forbidden for was asked
    assert set(r["strata"]["secret_level"]) >= {"internal", "confidential", "secret"}
    assert len(r["strata"]["department"]) >= 8
    html = (tmp_path / "probe" / "probe.html").read_text(encoding="utf-8")
    head = html.split("<table")[0]  # no URL before the first table (the CSP meta's http-equiv is not one)
    assert "no leak in 1100 pairs" in html and "<script" not in html and "://" not in head
    # the built-in corpus by its label, not the cache folder it was built into
    assert f"corpus {r['run_info']['corpus_version']}" in head and str(corpus) not in head
    assert r["run_info"]["corpus_version"].startswith("acme-")


def test_leaky_acl_is_found_and_named(tmp_path: Path, served: tuple[Simulator, str], corpus: Path) -> None:
    sim, url = served
    set_faults(url, sim, ["leaky-acl"])
    try:
        code, r = probe_cli(tmp_path, url, sim, corpus, "--pairs", "150", "--queries-per-pair", "2")
    finally:
        set_faults(url, sim, [])
    assert code == 1
    assert r["status"]["state"] == "ok" and r["errors"]["failed"] == 0
    assert r["counts"]["target_leaks"] >= 5 and r["counts"]["pairs_leaked"] >= 5
    gt = GroundTruth(sim.drive, load_manifest(corpus))
    named = {d["doc_id"] for d in r["leaked_documents"]}
    assert named == {x["doc_id"] for x in r["leaks"]}
    for leak in r["leaks"]:
        assert gt.forbidden(leak["user_id"], leak["doc_id"])  # every reported leak is one
        assert leak["query"] and leak["result"]["rank"] >= 1
        assert leak["why_forbidden"]["reason"] in ALL_REASONS and leak["why_forbidden"]["path"]
    target = next(x for x in r["leaks"] if x["kind"] == "target")
    pair = next(p for p in r["pairs"] if p["pair_id"] == target["pair_id"])
    assert (pair["user_id"], pair["doc_id"]) == (target["user_id"], target["doc_id"])
    html = (tmp_path / "probe" / "probe.html").read_text(encoding="utf-8")
    assert f"{r['counts']['leaks']} leak(s)" in html and target["doc_id"] in html


def test_leaks_on_the_answer_and_mcp_surfaces(tmp_path: Path, served: tuple[Simulator, str], corpus: Path) -> None:
    sim, url = served
    set_faults(url, sim, ["leaky-acl:share=0.5"])
    try:
        code, r = probe_cli(tmp_path, url, sim, corpus, "--pairs", "30", "--queries-per-pair", "1", "--answers")
        code_mcp, r_mcp = probe_cli(
            tmp_path / "mcp", f"{url}/mcp/", sim, corpus, "--pairs", "30", "--queries-per-pair", "1", "--mcp"
        )
    finally:
        set_faults(url, sim, [])
    assert code == 1 and r["counts"]["requests"] == 60 and r["errors"]["failed"] == 0
    assert {x["surface"] for x in r["leaks"]} == {"recall", "answer"}
    assert code_mcp == 1 and r_mcp["errors"]["failed"] == 0
    assert {x["surface"] for x in r_mcp["leaks"]} == {"mcp-recall"}


def test_stale_acl_after_revocation_is_found(served: tuple[Simulator, str], corpus: Path) -> None:
    sim, url = served
    manifest = load_manifest(corpus)
    before = GroundTruth(sim.drive, manifest)
    sim.faults.enable("stale-acl", delay_s=3600)
    revoked: set[tuple[str, str]] = set()
    try:
        sim.engine  # noqa: B018 - the engine the server serves with, built before the change
        for user in before.users()[::4]:
            mask = before.mask(user)
            doc = next(d for i, d in enumerate(before.engine.doc_ids) if mask[i] and not before.trashed(d))
            grant = GrantRec(sim.drive.next_grant_id(), f"user:{user}", ["preview"], "deny", doc_id=doc)
            sim.drive.add_grant(grant, actor="test")
            revoked.add((user, doc))
        gt = GroundTruth(sim.drive, manifest)  # the drive's policy now: the revocations are in it
        pairs, _ = sample_pairs(gt, 120, seed=0)
        asked = {(p.user_id, p.doc_id) for p in pairs}
        assert len(asked & revoked) >= 6
        target = HttpTarget(url, sim.tokens.eval_token)
        outcome = run_probe(
            target, gt, pairs, QueryBuilder(gt.drive, [p.doc_id for p in pairs]), ProbeConfig(per_pair=2)
        )
    finally:
        sim.faults.clear()
        sim.reset()
    r = outcome.result
    assert r["status"]["state"] == "ok"
    leaked = {(x["user_id"], x["doc_id"]) for x in r["leaks"]}
    assert leaked and leaked <= revoked  # only the revoked documents leak, and they do
    assert all(x["why_forbidden"]["reason"] == "deny" for x in r["leaks"])
    assert all(x["why_forbidden"]["path"][0]["subject"] == f"user:{x['user_id']}" for x in r["leaks"])


@pytest.mark.parametrize(
    ("mode", "exit_code", "state"),
    [("same", 0, "ok"), ("open", 1, "ok"), ("opaque", 3, "failed"), ("empty", 3, "failed"), ("500", 3, "failed")],
)
def test_any_target_through_a_profile(
    tmp_path: Path, vendor: str, corpus: Path, mode: str, exit_code: int, state: str
) -> None:
    """A vendor API through ``--target-profile`` (ids are drive paths, ``match = "path"``): its own
    permission filter passes, a service-account search leaks, and failures are exit 3, not 0 leaks."""
    profile = tmp_path / "vendor.toml"
    profile.write_text(vendor_profile(vendor, mode), encoding="utf-8")
    out = tmp_path / "probe"
    args = ["probe", "--target-profile", str(profile), "--corpus", str(corpus), "--out", str(out), "--pairs", "40"]
    # every query in flight at once: a failing target's retries (and their backoff) are waited on once, not in turns
    res = CliRunner().invoke(app, [*args, "--queries-per-pair", "1", "--no-preflight", "--concurrency", "40"])
    r = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert res.exit_code == exit_code, res.output
    assert r["status"]["state"] == state
    if mode == "same":
        assert r["counts"]["results"] > 40 and r["counts"]["unmapped_results"] == 0 and r["counts"]["leaks"] == 0
    if mode == "open":
        assert r["counts"]["target_leaks"] > 0
        assert all(x["result"]["foreign_id"] == x["doc_path"] for x in r["leaks"])  # the id the vendor gave
    if state == "failed":
        assert r["counts"]["leaks"] == 0 and "no leak" not in (out / "probe.html").read_text(encoding="utf-8")


def test_a_dead_target_is_exit_3_never_zero_leaks(tmp_path: Path, served: tuple[Simulator, str], corpus: Path) -> None:
    sim, _ = served
    dead = f"http://127.0.0.1:{free_port()}"
    english = str(resolve_corpus("acme-en@1", scale="small"))  # the same enterprise in English, same doc ids
    code, r = probe_cli(tmp_path, dead, sim, corpus, "--pairs", "5", "--queries-per-pair", "6", "--english", english)
    assert code == 3
    kinds = r["counts"]["requests_by_query_kind"]
    assert kinds["title"] == kinds["english"] == 5 and sum(kinds.values()) == r["errors"]["requests"]
    assert r["status"]["state"] == "failed" and "preflight" in r["status"]["reason"]
    assert r["errors"]["failed"] == r["errors"]["requests"] >= 20 and r["counts"]["pairs_measured"] == 0
    html = (tmp_path / "probe" / "probe.html").read_text(encoding="utf-8")
    assert "probe FAILED, leaks not measured" in html and "no leak" not in html


def test_budget_and_usage_errors(tmp_path: Path, served: tuple[Simulator, str], corpus: Path) -> None:
    sim, url = served
    code, r = probe_cli(tmp_path, url, sim, corpus, "--pairs", "20", "--queries-per-pair", "2", "--budget", "11")
    assert code == 0 and r["counts"]["requests"] == 10  # whole pairs only
    assert r["counts"]["pairs_probed"] == 5 and r["counts"]["pairs_over_budget"] == 15
    res = CliRunner().invoke(app, ["probe", "--target", url, "--corpus", str(corpus)], env={"DRIVEBENCH_TOKEN": ""})
    assert res.exit_code == 2 and "no token" in res.output
    res = CliRunner().invoke(app, ["probe", "--target", url, "--token", "x", "--corpus", str(tmp_path / "nope")])
    assert res.exit_code == 2
