"""End to end over a real uvicorn server: the vendor's documented curl, verbatim, then the evaluator."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from drivebench.formats.corpus import EVALSET_NAME
from drivebench.testing import ServedSimulator
from tests.support.vendor_server import VENDOR_BODY

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _engineer_token(served: ServedSimulator) -> str:
    uid = next(
        u.user_id for u in sorted(served.sim.drive.users.values(), key=lambda u: u.user_id) if "engineer" in u.roles
    )
    return served.sim.tokens.for_subject(uid).token


def _curl(*args: str) -> tuple[int, dict]:
    curl = shutil.which("curl")
    assert curl, "curl must be installed"
    out = subprocess.run([curl, "-sS", "-w", "\n%{http_code}", *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    body, _, code = out.stdout.rpartition("\n")
    return int(code), json.loads(body)


def test_vendor_curl_verbatim_without_content_type(drivebench_server: ServedSimulator) -> None:
    token = _engineer_token(drivebench_server)
    url = f"{drivebench_server.url}/api/mcp/recall"
    # exactly the vendor's documented call: no Content-Type header, so curl sends form-urlencoded
    status, body = _curl("-X", "POST", url, "-H", f"Authorization: Bearer {token}", "-d", VENDOR_BODY)
    assert status == 200, body
    assert body["query"] == "项目X的技术方案审批人" and body["top_k"] == 10
    assert 1 <= len(body["results"]) <= 10
    first = body["results"][0]
    assert set(first) >= {"rank", "doc_id", "version_id", "name", "path", "file_type", "score", "chunk_id", "snippet"}
    assert "项目X" in " ".join(r["name"] for r in body["results"][:3])


def test_vendor_curl_with_json_content_type(drivebench_server: ServedSimulator) -> None:
    token = _engineer_token(drivebench_server)
    url = f"{drivebench_server.url}/api/mcp/recall"
    status, body = _curl(
        "-X",
        "POST",
        url,
        "-H",
        f"Authorization: Bearer {token}",
        "-H",
        "Content-Type: application/json",
        "-d",
        VENDOR_BODY,
    )
    assert status == 200 and body["results"]
    status, body = _curl("-X", "POST", url, "-d", VENDOR_BODY)
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_openapi_documents_the_recall_shape(drivebench_server: ServedSimulator) -> None:
    status, spec = _curl(f"{drivebench_server.url}/openapi.json")
    assert status == 200
    op = spec["paths"]["/api/mcp/recall"]["post"]
    ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/RecallRequest")
    assert "query" in spec["components"]["schemas"]["RecallRequest"]["properties"]
    assert "results" in spec["components"]["schemas"]["RecallResponse"]["properties"]


def test_evaluator_cli_scores_the_server(drivebench_server: ServedSimulator, tmp_path: Path) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    out = tmp_path / "report"
    cmd = [
        sys.executable, "-m", "drivebench.cli", "eval", "run",
        "--target", drivebench_server.url,
        "--token", sim.tokens.eval_token,
        "--evalset", str(sim.corpus_dir / EVALSET_NAME),
        "--k", "1,3,5,10",
        "--corpus", str(sim.corpus_dir),
        "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Hit Rate@K" in done.stdout
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    for k in (1, 3, 5, 10):
        assert 0.0 <= metrics[f"hit_rate@{k}"] <= 1.0
    assert metrics["hit_rate@1"] <= metrics["hit_rate@3"] <= metrics["hit_rate@5"] <= metrics["hit_rate@10"]
    assert metrics["hit_rate@10"] >= 0.5, metrics  # a working retriever on the seed corpus
    assert metrics["leak_rate@10"] == 0.0
    run_lines = (out / "run.jsonl").read_text().splitlines()
    assert len(run_lines) == sum(1 for _ in (sim.corpus_dir / EVALSET_NAME).open())
    assert all(not json.loads(line).get("error") for line in run_lines)
