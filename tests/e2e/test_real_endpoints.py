"""``drivebench eval run`` against real HTTP servers that are not (only) the simulator.

Two real uvicorn servers: the simulator (``drivebench_server``) and a vendor-style API
(``tests/support/vendor_server.py``: its own ids = drive paths and numeric version strings, errors as HTTP 200
with ``code != 0``, no permission filtering in ``open`` mode). Every failure class must give a
non-zero exit, the error rate in metrics.json and in every report, a preflight diagnosis asserted
by its text, and never a "0 leaked".
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.server.process import free_port
from drivebench.simulator.backend import Simulator
from drivebench.testing import ServedSimulator
from tests.support.vendor_server import FLAKY_USER, vendor_profile

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

N_SMALL = 8
ZERO_LEAKED = re.compile(r"\b0 (of \d+ )?(answered )?quer(y|ies) leaked|\b0 leaked|No leaks", re.IGNORECASE)


@pytest.fixture(scope="module")
def corpus_dir(drivebench_simulator: Simulator) -> Path:
    assert drivebench_simulator.corpus_dir is not None
    return Path(drivebench_simulator.corpus_dir)


@pytest.fixture(scope="module")
def small_evalset(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first queries of the seed eval set, plus one of FLAKY_USER's (for the error-rate test)."""
    lines = (corpus_dir / EVALSET_NAME).read_text(encoding="utf-8").splitlines()
    picked = lines[:N_SMALL]
    if not any(json.loads(x).get("user_id") == FLAKY_USER for x in picked):
        picked[-1] = next(x for x in lines if json.loads(x).get("user_id") == FLAKY_USER)
    path = tmp_path_factory.mktemp("evalset") / "small.jsonl"
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return path


def profile(tmp_path: Path, url: str, mode: str, **kw: Any) -> Path:
    path = tmp_path / f"vendor-{mode.replace('/', '_')}.toml"
    path.write_text(vendor_profile(url, mode, **kw), encoding="utf-8")
    return path


def run_eval(tmp_path: Path, *args: str, name: str = "out") -> tuple[int, str, Path, dict[str, Any]]:
    out = tmp_path / name
    result = CliRunner().invoke(app, ["eval", "run", *args, "--out", str(out), "--history", "none"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    metrics = json.loads((out / "metrics.json").read_text()) if (out / "metrics.json").exists() else {}
    return result.exit_code, result.output, out, metrics


def assert_failed_run(code: int, output: str, out: Path, metrics: dict[str, Any], kind: str, n: int) -> None:
    """Exit 3, the error count and rate first in metrics.json and in every report, no "0 leaked"."""
    assert code == 3, output
    assert list(metrics)[:3] == ["verdict", "status", "errors"], list(metrics)[:4]
    assert metrics["status"]["state"] == "failed"
    errors = metrics["errors"]
    assert errors["failed"] == n and errors["queries"] == n and errors["rate"] == 1.0
    assert errors["by_kind"][kind]["count"] == n and errors["by_kind"][kind]["sample"]
    assert metrics["oracles"]["leak"]["measured"] is False
    assert metrics["metrics"]["leak_rate@10"] is None and metrics["metrics"]["hit_rate@10"] is None
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    line = f"RUN FAILED: {n} of {n} queries failed (error rate 1.000)"
    assert line in md and line in html and line in output
    assert md.index("RUN FAILED") < md.index("## Run") < md.index("## Permission leaks")
    assert f"| {kind} | {n} | 1.000 |" in md
    assert "Permission leaks: not measured: no query was answered" in md
    for text in (md, html, output):
        assert not ZERO_LEAKED.search(text), ZERO_LEAKED.search(text)


# ---------------------------------------------------------------------------- failure classes


def test_dead_port_stops_in_seconds_with_a_diagnosis(tmp_path: Path, small_evalset: Path, corpus_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.perf_counter()
    code, output, out, metrics = run_eval(
        tmp_path, "--target", url, "--token", "t", "--evalset", str(small_evalset), "--corpus", str(corpus_dir)
    )
    assert time.perf_counter() - started < 30
    assert f"cannot connect to {url}/api/mcp/recall: connection error: ConnectError" in output
    assert "(connection refused)" in metrics["preflight"]["diagnosis"]
    assert "(is the server running, and is the host/port right?)" in output
    assert metrics["preflight"]["kind"] == "connection" and metrics["preflight"]["fatal"] is True
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)
    # the same from a real process: exit status 3, and stdout is the JSON summary alone
    cmd = [sys.executable, "-m", "drivebench.cli", "eval", "run", "--target", url, "--token", "t"]
    cmd += ["--evalset", str(small_evalset), "--out", str(tmp_path / "proc"), "--history", "none", "--json", "-"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr[-2000:]
    payload = json.loads(done.stdout)
    assert (
        payload["exit_code"] == 3 and payload["errors"]["rate"] == 1.0 and payload["preflight"]["kind"] == "connection"
    )
    assert "RUN FAILED: 8 of 8 queries failed (error rate 1.000)" in done.stderr


def test_simulator_wrong_token_is_a_401_diagnosis(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, drivebench_server: ServedSimulator
) -> None:
    code, output, out, metrics = run_eval(
        tmp_path, "--target", drivebench_server.url, "--token", "not-a-token", "--evalset", str(small_evalset),
        "--corpus", str(corpus_dir),
    )  # fmt: skip
    want = f"HTTP 401 Unauthorized from {drivebench_server.url}/api/mcp/recall: the token was rejected"
    assert want in output and want in metrics["preflight"]["diagnosis"]
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)


def test_simulator_user_token_for_other_principals_is_a_403_diagnosis(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, drivebench_server: ServedSimulator
) -> None:
    sim = drivebench_server.sim
    first = json.loads(small_evalset.read_text().splitlines()[0])
    other = next(u for u in sorted(sim.drive.users) if u != first.get("user_id"))
    token = sim.tokens.for_subject(other).token
    code, output, out, metrics = run_eval(
        tmp_path, "--target", drivebench_server.url, "--token", token, "--evalset", str(small_evalset),
        "--corpus", str(corpus_dir),
    )  # fmt: skip
    assert f"HTTP 403 Forbidden from {drivebench_server.url}/api/mcp/recall for " in output
    assert "the token may not recall as this principal" in metrics["preflight"]["diagnosis"]
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)


@pytest.mark.parametrize(
    ("mode", "kind", "diagnosis"),
    [
        ("401", "http_401", "HTTP 401 Unauthorized from {url}/v1/401/search: the token was rejected"),
        ("403", "http_403", "HTTP 403 Forbidden from {url}/v1/403/search for user "),
        ("nope/x", "http_404", "HTTP 404 Not Found at {url}/v1/nope/x/search: no recall endpoint there"),
        (
            "shape",
            "bad_shape",
            "results path data.items not found; top-level keys: code, msg, data; data has keys: records, total",
        ),
        (
            "code",
            "app_error",
            "the endpoint answered 2xx but response says it failed: code = 40001 (expected 0); msg: token expired",
        ),
        ("opaque", "unmapped", "ids do not map: none of the 10 results maps to a corpus document by drive path"),
    ],
)
def test_vendor_failure_is_diagnosed_by_the_preflight(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str, mode: str, kind: str, diagnosis: str
) -> None:
    started = time.perf_counter()
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, mode)),
        "--evalset", str(small_evalset), "--corpus", str(corpus_dir),
    )  # fmt: skip
    assert time.perf_counter() - started < 30
    want = diagnosis.format(url=vendor_url)
    assert want in output, output
    assert metrics["preflight"]["kind"] == kind and want in metrics["preflight"]["diagnosis"]
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)


def test_vendor_wrong_key_is_a_401(tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str) -> None:
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, "same", key="wrong")),
        "--evalset", str(small_evalset), "--corpus", str(corpus_dir),
    )  # fmt: skip
    assert "HTTP 401 Unauthorized from" in output and '{"code":401,"msg":"invalid api key"}' in output
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)


def test_answers_without_an_answer_url_name_the_answer_url_tried(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str
) -> None:
    """A profile without ``[request] answer_url`` asks the simulator's answer path on the recall URL's host: a 404
    there names that URL and the key to set, never the recall URL (which answers)."""
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, "same")),
        "--evalset", str(small_evalset), "--corpus", str(corpus_dir), "--answers",
    )  # fmt: skip
    diagnosis = metrics["preflight"]["diagnosis"]
    assert diagnosis.startswith(f"HTTP 404 Not Found at {vendor_url}/api/mcp/answer: no answer endpoint there ")
    assert "set [request] answer_url in the target profile" in diagnosis and diagnosis in output
    assert "/v1/same/search" not in diagnosis
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)


def test_timeout_is_diagnosed_and_counted(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str
) -> None:
    prof = str(profile(tmp_path, vendor_url, "slow", timeout=0.2))  # each attempt waits this long: short
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", prof, "--evalset", str(small_evalset), "--corpus", str(corpus_dir)
    )
    assert f"no answer from {vendor_url}/v1/slow/search: timeout: no answer within 0.2 s" in output
    assert_failed_run(code, output, out, metrics, "preflight", N_SMALL)
    # without the probe every query is sent, retried, and counted as a timeout
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", prof, "--evalset", str(small_evalset), "--corpus", str(corpus_dir),
        "--no-preflight", name="no-preflight",
    )  # fmt: skip
    assert_failed_run(code, output, out, metrics, "timeout", N_SMALL)
    assert "preflight" not in metrics


def test_http_500_for_every_query_is_counted_after_retries(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str
) -> None:
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, "500")),
        "--evalset", str(small_evalset), "--corpus", str(corpus_dir),
    )  # fmt: skip
    assert metrics["preflight"]["kind"] == "http_5xx" and metrics["preflight"]["fatal"] is False
    assert_failed_run(code, output, out, metrics, "http_5xx", N_SMALL)
    assert metrics["errors"]["by_kind"]["http_5xx"]["sample"] == 'HTTP 500: {"code":500,"msg":"vendor says 500"}'
    records = [json.loads(x) for x in (out / "run.jsonl").read_text().splitlines()]
    assert all(r["error_kind"] == "http_5xx" and r["attempts"] == 4 for r in records)


def test_every_answer_empty_fails_the_run(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str
) -> None:
    code, _output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, "empty")),
        "--evalset", str(small_evalset), "--corpus", str(corpus_dir),
    )  # fmt: skip
    assert code == 3
    assert f"every one of the {N_SMALL} answered queries returned an empty result list" in metrics["status"]["reason"]
    assert metrics["oracles"]["leak"]["reason"] == "every answered query returned an empty list: nothing to judge"
    assert metrics["metrics"]["leak_rate@10"] is None
    md = (out / "report.md").read_text()
    assert "RUN FAILED: 0 of 8 queries failed (error rate 0.000); 8 answered" in md and not ZERO_LEAKED.search(md)


def test_error_rate_threshold_and_metrics_over_answered_and_all(
    tmp_path: Path, small_evalset: Path, corpus_dir: Path, vendor_url: str
) -> None:
    n_flaky = sum(json.loads(x).get("user_id") == FLAKY_USER for x in small_evalset.read_text().splitlines())
    assert 0 < n_flaky < N_SMALL
    args = ["--target-profile", str(profile(tmp_path, vendor_url, "flaky")), "--evalset", str(small_evalset)]
    args += ["--corpus", str(corpus_dir)]
    code, output, _, metrics = run_eval(tmp_path, *args)
    assert code == 3, output
    assert metrics["errors"]["failed"] == n_flaky and metrics["errors"]["by_kind"]["http_5xx"]["count"] == n_flaky
    assert f"--max-error-rate 0): http_5xx {n_flaky}" in metrics["status"]["reason"]
    code, output, out, metrics = run_eval(tmp_path, *args, "--max-error-rate", "0.5", name="tolerant")
    assert code == 0, output
    assert metrics["status"]["state"] == "ok"
    answered, every = metrics["metrics_answered"]["hit_rate@10"], metrics["metrics"]["hit_rate@10"]
    assert every == pytest.approx(answered * (N_SMALL - n_flaky) / N_SMALL, abs=1e-9) or metrics["counts"]["no_gold"]
    assert every < answered
    md = (out / "report.md").read_text()
    assert f"Run ok: {n_flaky} of {N_SMALL} queries failed" in md and "| http_5xx |" in md
    assert "Hit Rate@K (answered)" in md and "Hit Rate@K (all queries)" in md


def test_missing_oracle_changes_the_exit_code(
    tmp_path: Path, small_evalset: Path, drivebench_server: ServedSimulator
) -> None:
    bare = tmp_path / "bare.jsonl"
    rows = [json.loads(x) for x in small_evalset.read_text().splitlines()]
    bare.write_text("".join(json.dumps({**r, "forbidden": [], "allowed": None}) + "\n" for r in rows))
    args = ["--target", drivebench_server.url, "--token", drivebench_server.sim.tokens.eval_token]
    code, output, out, metrics = run_eval(tmp_path, *args, "--evalset", str(bare))
    assert code == 1, output
    assert metrics["oracles"]["leak"]["measured"] is False and metrics["metrics"]["leak_rate@10"] is None
    assert "FAILED: leaks were not measured (no leak oracle" in output and metrics["verdict"]["exit_code"] == 1
    md = (out / "report.md").read_text()
    assert "Permission leaks: not measured: no leak oracle" in md and "| leak oracle | not measured" in md
    assert not ZERO_LEAKED.search(md)
    code, output, _, _ = run_eval(tmp_path, *args, "--evalset", str(bare), "--allow-no-oracle", name="allowed")
    assert code == 0, output


# ---------------------------------------------------------------------------- a working vendor


def test_vendor_with_path_ids_scores_the_simulators_hit_rates(
    tmp_path: Path, corpus_dir: Path, vendor_url: str, drivebench_server: ServedSimulator
) -> None:
    evalset = str(corpus_dir / EVALSET_NAME)
    sim_args = ["--target", drivebench_server.url, "--token", drivebench_server.sim.tokens.eval_token]
    code, output, _, sim = run_eval(tmp_path, *sim_args, "--evalset", evalset, "--corpus", str(corpus_dir), name="sim")
    assert code == 0, output
    prof = str(profile(tmp_path, vendor_url, "same"))
    code, output, out, ven = run_eval(
        tmp_path, "--target-profile", prof, "--evalset", evalset, "--corpus", str(corpus_dir), name="vendor"
    )
    assert code == 0, output
    assert ven["errors"]["failed"] == 0 and ven["unmapped"]["results"] == 0
    assert ven["unmapped"]["mapping"]["mapped"] == ven["unmapped"]["mapping"]["results"] > 0
    for k in (1, 3, 5, 10):
        assert ven["metrics"][f"hit_rate@{k}"] == sim["metrics"][f"hit_rate@{k}"]
        assert ven["metrics"][f"recall@{k}"] == sim["metrics"][f"recall@{k}"]
        # numeric version strings map to the corpus's version ids
        assert ven["metrics"][f"version_exact_hit_rate@{k}"] == sim["metrics"][f"version_exact_hit_rate@{k}"]
    assert sim["metrics"]["hit_rate@10"] > 0.5
    first = json.loads((out / "run.jsonl").read_text().splitlines()[0])["results"][0]
    assert first["foreign_id"].startswith("/") and re.fullmatch(r"d\d{4}", first["doc_id"])
    assert re.fullmatch(r"d\d{4}-v\d+", first["version_id"])


@pytest.mark.parametrize("kind", ["simulator --answers", "profile", "mcp"])
def test_the_articles_three_metrics_come_first_for_every_target(
    kind: str,
    tmp_path: Path,
    small_evalset: Path,
    corpus_dir: Path,
    vendor_url: str,
    drivebench_server: ServedSimulator,
) -> None:
    """Hit Rate@K, Source Recall Coverage and Multi-hop Completeness open the metrics of every `eval run`, as in
    the demo: through the simulator's URL, a target profile or MCP; one that was not measured says so."""
    token = drivebench_server.sim.tokens.eval_token
    target = {
        "simulator --answers": ["--target", drivebench_server.url, "--token", token, "--answers"],
        "profile": ["--target-profile", str(profile(tmp_path, vendor_url, "same"))],
        "mcp": ["--mcp", "--target", f"{drivebench_server.url}/mcp/", "--token", token],
    }[kind]
    code, output, _, metrics = run_eval(tmp_path, *target, "--evalset", str(small_evalset), "--corpus", str(corpus_dir))
    assert code == 0, output
    first = output.index("The article's three metrics")
    assert first < output.index("Hit Rate@K") and first < output.index("latency ms")
    headline = output[first : output.index("Hit Rate@K")]
    for k in (1, 3, 5, 10):
        assert re.search(rf"Hit Rate@{k} +│ +{metrics['metrics'][f'hit_rate@{k}']:.3f} ", headline), headline
    coverage = next(line for line in headline.splitlines() if "Source Recall Coverage" in line)
    if kind == "simulator --answers":
        assert f"{metrics['metrics']['source_coverage']:.3f}" in coverage
    else:
        assert "not measured" in coverage and "run with --answers" in coverage
    assert "Multi-hop Completeness" in headline


def test_vendor_without_permission_filtering_leaks_and_gates_fail(
    tmp_path: Path, corpus_dir: Path, vendor_url: str
) -> None:
    junit = tmp_path / "junit.xml"
    code, output, out, metrics = run_eval(
        tmp_path, "--target-profile", str(profile(tmp_path, vendor_url, "open")),
        "--evalset", str(corpus_dir / EVALSET_NAME), "--corpus", str(corpus_dir),
        "--fail-on", "leak_rate@10>0", "--fail-on", "hit_rate@10<0.01", "--junit", str(junit), "--json", "-",
    )  # fmt: skip
    assert code == 1, output
    assert metrics["errors"]["failed"] == 0
    assert metrics["oracles"]["leak"] == {
        "measured": True,
        "source": "the corpus's policies (seed) at each query's time",
    }
    assert metrics["metrics"]["leak_rate@10"] > 0 and metrics["leaks"]["documents"]
    leaked = metrics["counts"]["queries_with_leak"]
    assert (
        f"Permission leaks: {leaked} of {metrics['errors']['answered']} answered queries leaked"
        in (out / "report.md").read_text()
    )
    said = " ".join(output.split())
    assert re.search(r"FAILED: leak_rate@10 = 0\.\d+ is above 0\.00", said), said[-2000:]
    assert re.search(r"passed: hit_rate@10 = [01]\.\d+ is at least 0\.01", said), said[-2000:]
    payload = json.loads(output[output.index("{\n") : output.rindex("}") + 1])
    # the leaks fail the run by themselves (shown first), then the gates given
    assert payload["exit_code"] == 1 and [(g["expr"], g["failed"]) for g in payload["gates"]] == [
        ("no leaks", True),
        ("leak_rate@10>0", True),
        ("hit_rate@10<0.01", False),
    ]
    assert payload["gates"][0]["value"] == leaked
    root = ET.parse(junit).getroot()
    gates = {c.get("name"): c for c in root.iter("testcase") if c.get("classname") == "drivebench.gates"}
    assert gates["leak_rate@10>0"].find("failure") is not None and gates["hit_rate@10<0.01"].find("failure") is None
    assert gates["no leaks"].find("failure") is not None
    queries = [c for c in root.iter("testcase") if c.get("classname") == "drivebench.queries"]
    assert sum(1 for c in queries if "leaked" in (c.find("failure").get("message") or "")) == leaked
