"""Faults are part of a run's record: ``X-Drivebench-Faults`` on every /api/ response,
``faults`` in ``/_sim/stats``, ``run_info.faults`` in metrics.json and the header of every report, and
``PUT /_sim/faults`` accepting exactly the body its OpenAPI schema documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora.builtin import corpus_version, resolve_corpus
from drivebench.evaluator.evaluate import server_faults
from drivebench.formats.evalset import RunRecord
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet, parse_fault_spec
from drivebench.testing import ServedSimulator
from tests.support.http import bearer

BODY = {"query": "项目X的技术方案审批人", "user_id": "u001", "top_k": 5}


def test_full_spec_names_every_parameter_and_the_seed() -> None:
    fault = parse_fault_spec("leaky-acl:share=0.3")
    assert fault.spec() == "leaky-acl:share=0.3"
    assert fault.full_spec() == "leaky-acl:seed=0:share=0.3"
    assert parse_fault_spec(fault.full_spec()) == fault  # the recorded form replays the same fault


def test_header_and_stats_report_the_active_faults(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    admin, token = bearer(sim.tokens.admin_token), bearer(sim.tokens.eval_token)
    drivebench_faults.clear()
    r = client.post("/api/mcp/recall", json=BODY, headers=token)
    assert r.status_code == 200 and r.headers["x-drivebench-faults"] == "none"
    stats = client.get("/_sim/stats", headers=admin).json()
    assert stats["faults"]["active"] == [] and stats["faults"]["specs"] == []
    drivebench_faults.replace([parse_fault_spec("leaky-acl:share=0.25:seed=7"), parse_fault_spec("citation-drop")])
    expected = "leaky-acl:seed=7:share=0.25,citation-drop:seed=0:share=0.5"
    for path in ("/api/mcp/recall", "/api/mcp/answer"):
        r = client.post(path, json=BODY, headers=token)
        assert r.status_code == 200 and r.headers["x-drivebench-faults"] == expected, path
    stats = client.get("/_sim/stats", headers=admin).json()["faults"]
    assert stats["specs"] == expected.split(",")
    assert stats["active"][0] == {"name": "leaky-acl", "params": {"seed": 7, "share": 0.25}}
    assert stats["generation"] == drivebench_faults.generation
    drivebench_faults.enable("errors", share=1.0)  # an injected error says so too
    r = client.post("/api/mcp/recall", json=BODY, headers=token)
    assert r.status_code == 503 and "errors:seed=0:share=1.0:status=503" in r.headers["x-drivebench-faults"]


def test_server_faults_reads_what_the_records_carry() -> None:
    def rec(value: str | None) -> RunRecord:
        return RunRecord(query_id="q", **({"faults": value} if value is not None else {}))

    assert server_faults([rec(None), rec(None)]) is None  # another endpoint: not reported
    assert server_faults([rec("none"), rec(None)]) == []
    assert server_faults([rec("a:x=1,b"), rec("none"), rec("b,c")]) == ["a:x=1", "b", "c"]


# ---------------------------------------------------------------------- PUT /_sim/faults: documented = accepted

ACCEPTED: list[Any] = [
    {"faults": []},
    {"faults": ""},
    {"faults": "leaky-acl"},
    {"faults": " leaky-acl , errors:share=0.1 "},
    {"faults": "latency:delay_ms=5:jitter_ms=0,throttle:retry_after_s=2"},
    {"faults": ["leaky-acl", "stale-index", "errors:status=502"]},
    {"faults": [{"name": "latency", "params": {"delay_ms": 5, "jitter_ms": 0}}]},
    {"faults": [{"name": "stale-acl", "params": {"delay_s": 3600, "clock": "sim"}}, {"name": "cad-blind"}]},
    {"faults": [{"name": "errors", "params": {"share": 0, "status": 599, "seed": 3}}]},
    {"faults": ["leaky-acl", {"name": "latency", "params": {"delay_ms": 50}}]},  # the documented example
]
REJECTED: list[Any] = [
    {},
    {"fault": []},
    {"faults": [], "extra": 1},
    {"faults": 3},
    {"faults": None},
    {"faults": {"name": "leaky-acl"}},
    {"faults": ["nope"]},
    {"faults": "nope"},
    {"faults": "leaky-acl:"},
    {"faults": "leaky-acl:delay_ms=5"},
    {"faults": [""]},
    {"faults": [3]},
    {"faults": [{"name": "nope"}]},
    {"faults": [{"name": "leaky-acl", "params": {"share": 3}}]},
    {"faults": [{"name": "leaky-acl", "params": {"share": "0.3"}}]},
    {"faults": [{"name": "leaky-acl", "params": {"bogus": 1}}]},
    {"faults": [{"name": "leaky-acl", "params": None}]},
    {"faults": [{"name": "leaky-acl", "extra": 1}]},
    {"faults": [{"params": {}}]},
    {"faults": [{"name": "errors", "params": {"status": 404}}]},
    {"faults": [{"name": "errors", "params": {"seed": 1.5}}]},
    {"faults": [{"name": "latency", "params": {"delay_ms": 1e9}}]},
    {"faults": [{"name": "latency", "params": {"delay_ms": -1}}]},
    {"faults": [{"name": "stale-acl", "params": {"clock": "moon"}}]},
    {"faults": [{"name": "throttle", "params": {"retry_after_s": True}}]},
]


@pytest.fixture(scope="module")
def put_schema(client: TestClient) -> dict[str, Any]:
    op = client.get("/openapi.json").json()["paths"]["/_sim/faults"]["put"]
    content = op["requestBody"]["content"]["application/json"]
    jsonschema.Draft202012Validator.check_schema(content["schema"])
    assert content["example"] in [b for b in ACCEPTED]
    return dict(content["schema"])


@pytest.mark.parametrize("body", ACCEPTED, ids=lambda b: json.dumps(b)[:60])
def test_bodies_the_schema_documents_are_accepted(
    body: Any, put_schema: dict[str, Any], client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    jsonschema.validate(body, put_schema, cls=jsonschema.Draft202012Validator)
    r = client.put("/_sim/faults", json=body, headers=bearer(sim.tokens.admin_token))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("body", REJECTED, ids=lambda b: json.dumps(b)[:60])
def test_bodies_outside_the_schema_are_400(
    body: Any, put_schema: dict[str, Any], client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    drivebench_faults.clear()
    schema_ok = jsonschema.Draft202012Validator(put_schema).is_valid(body)
    r = client.put("/_sim/faults", json=body, headers=bearer(sim.tokens.admin_token))
    assert r.status_code == 400, (body, r.text)
    # a body the schema allows but the server refuses: only a bad value inside a spec string
    assert not schema_ok or isinstance(body.get("faults"), str), body
    assert not drivebench_faults  # a failed request changes no state


# ---------------------------------------------------------------------- eval run records them


@pytest.mark.e2e
def test_eval_run_records_faults_in_metrics_and_every_report(
    drivebench_server: ServedSimulator, drivebench_faults: FaultSet, tmp_path: Path
) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    evalset = tmp_path / "evalset.jsonl"
    lines = (sim.corpus_dir / "evalset.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    evalset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token]
    args += ["--evalset", str(evalset), "--corpus", "seed", "--history", str(tmp_path / "h.sqlite3")]

    drivebench_faults.replace([parse_fault_spec("latency:delay_ms=1:jitter_ms=0")])
    faulted = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "f")], env={"COLUMNS": "250"})
    assert faulted.exit_code in (0, 1), faulted.output
    spec = "latency:delay_ms=1.0:jitter_ms=0.0:seed=0:share=1.0"
    metrics = json.loads((tmp_path / "f" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["faults"] == [spec]
    assert metrics["run_info"]["corpus_version"] == corpus_version(resolve_corpus("seed"))
    banner = f"FAULTS INJECTED: {spec}"
    assert banner in (tmp_path / "f" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "f" / "report.html").read_text(encoding="utf-8")
    assert 'id="run-faults"' in html and banner in html
    assert banner in " ".join(faulted.stdout.split())

    drivebench_faults.clear()
    clean = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "c")], env={"COLUMNS": "250"})
    assert clean.exit_code in (0, 1), clean.output
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["faults"] == []
    assert "Faults: none" in (tmp_path / "c" / "report.md").read_text(encoding="utf-8")
    assert "FAULTS INJECTED" not in (tmp_path / "c" / "report.html").read_text(encoding="utf-8")


@pytest.mark.e2e
def test_eval_run_over_mcp_records_the_servers_faults(
    drivebench_server: ServedSimulator, drivebench_faults: FaultSet, tmp_path: Path
) -> None:
    """`eval run --mcp` against the real uvicorn server: each tool result's ``_meta["drivebench/faults"]`` names the
    active faults, and metrics.json, report.md and report.html record them like the HTTP target's header does."""
    import asyncio

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    url = drivebench_server.url + "/mcp/"

    async def tool_meta() -> tuple[Any, Any]:
        headers = {"Authorization": f"Bearer {sim.tokens.eval_token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as c,
        ):
            ok = await c.call_tool("recall", {"query": BODY["query"], "user_id": "u001", "top_k": 3})
            refused = await c.call_tool("recall", {"query": BODY["query"], "user_id": "nobody-here", "top_k": 3})
            return ok, refused

    evalset = tmp_path / "evalset.jsonl"
    lines = (sim.corpus_dir / "evalset.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    evalset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["eval", "run", "--mcp", "--target", url, "--token", sim.tokens.eval_token, "--evalset", str(evalset)]
    args += ["--corpus", "seed", "--history", "none"]

    drivebench_faults.replace([parse_fault_spec("latency:delay_ms=1:jitter_ms=0"), parse_fault_spec("citation-drop")])
    specs = ["latency:delay_ms=1.0:jitter_ms=0.0:seed=0:share=1.0", "citation-drop:seed=0:share=0.5"]
    ok, refused = asyncio.run(tool_meta())
    assert not ok.is_error and ok.meta["drivebench/faults"] == ",".join(specs)
    assert refused.is_error and refused.meta["drivebench/faults"] == ",".join(specs)  # errors say so too
    faulted = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "f")], env={"COLUMNS": "250"})
    assert faulted.exit_code in (0, 1), faulted.output
    metrics = json.loads((tmp_path / "f" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["target"] == f"mcp:{url}"
    assert metrics["run_info"]["faults"] == specs
    banner = f"FAULTS INJECTED: {', '.join(specs)}"
    assert banner in (tmp_path / "f" / "report.md").read_text(encoding="utf-8")
    assert banner in (tmp_path / "f" / "report.html").read_text(encoding="utf-8")

    drivebench_faults.clear()
    ok, _ = asyncio.run(tool_meta())
    assert ok.meta["drivebench/faults"] == "none"
    clean = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "c")], env={"COLUMNS": "250"})
    assert clean.exit_code in (0, 1), clean.output
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["faults"] == []
    assert "Faults: none" in (tmp_path / "c" / "report.md").read_text(encoding="utf-8")
