"""``drivebench probe --fail-safe``: the simulator fails closed in every case (in-process over ASGI, and through
the CLI against a real uvicorn); deliberately broken servers are caught (a missing Authorization header trusted:
``no-identity`` OPEN; unknown user ids answered: ``unknown-user`` OPEN) and exit 1; a target that answers nothing
is not testable (exit 3), never a pass; the permission-outage case leaves the fault set as it found it, also when
the request under the fault fails."""

from __future__ import annotations

import asyncio
import base64
import json
import shlex
import string
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.probe.failsafe import (
    CLOSED,
    ERROR,
    NOT_APPLICABLE,
    OPEN,
    FailSafeReport,
    judge,
    run_failsafe,
)
from drivebench.evaluator.probe.failsafe_cases import (
    DEFAULT_QUERIES,
    FailSafeTarget,
    Request,
    expired_jwt,
    forged,
    plan,
    tampered,
)
from drivebench.evaluator.targets.profile import OkWhen, ResponseSpec
from drivebench.server.api import create_app
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator
from tests.support.docs import code_blocks
from tests.support.failopen import TOKEN, failopen_app, serve_app
from tests.support.http import bearer

ALL_CASES = {
    "no-identity",
    "malformed-token",
    "expired-token",
    "unknown-user",
    "unknown-role",
    "unknown-department",
    "malformed-filter",
    "future-as-of",
    "permission-outage",
    "body-identity",
}


def sim_target(sim: Simulator, token: str | None = None) -> FailSafeTarget:
    return FailSafeTarget(url="http://sim.test/api/mcp/recall", token=token or sim.tokens.eval_token)


def run_in_process(asgi: Any, target: FailSafeTarget, user: str = "u001", **kw: Any) -> FailSafeReport:
    transport = kw.pop("transport", None) or httpx.ASGITransport(app=asgi, raise_app_exceptions=False)
    return asyncio.run(run_failsafe(target, user, transport=transport, **kw))


def by_case(report: FailSafeReport) -> dict[str, Any]:
    return {c.case: c for c in report.cases}


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["probe", "--fail-safe", *args])


@pytest.fixture(scope="module")
def served_sim(module_sim: Simulator) -> Iterator[str]:
    with start_in_thread(module_sim) as server:
        yield server.url


@pytest.fixture(scope="module")
def broken() -> Iterator[str]:
    with serve_app(failopen_app()) as url:
        yield url


# ---------------------------------------------------------------------------------------------- the simulator


def test_the_simulator_fails_closed_in_every_case(module_sim: Simulator) -> None:
    report = run_in_process(create_app(module_sim), sim_target(module_sim), drive_token=module_sim.tokens.admin_token)
    assert report.baseline.ok and report.baseline.results >= 1 and report.baseline.simulator
    cases = by_case(report)
    assert set(cases) == ALL_CASES
    others = [c for c in report.cases if c.case != "body-identity"]
    assert {c.verdict for c in others} == {CLOSED}, [(c.case, c.verdict, c.detail) for c in report.cases]
    # the evaluation token names its principal in the body by right: claiming another is no leak
    assert cases["body-identity"].verdict == NOT_APPLICABLE and "evaluation token" in cases["body-identity"].detail
    assert report.exit_code == 0 and report.verdict == "closed" and report.open_cases == []
    statuses = {name: {a.status for a in c.attempts} for name, c in cases.items()}
    assert statuses["no-identity"] == statuses["malformed-token"] == statuses["expired-token"] == {401}
    assert statuses["unknown-user"] == statuses["unknown-role"] == statuses["unknown-department"] == {400}
    assert statuses["malformed-filter"] <= {400, 422} and statuses["future-as-of"] == {400}
    assert statuses["permission-outage"] == {503}
    sent = {name: len(c.attempts) for name, c in cases.items()}
    assert sent["malformed-token"] == 2 and sent["expired-token"] == 3 and sent["malformed-filter"] == 3
    # a genuinely expired token the simulator issued (its live twin returned documents) is among them
    minted = cases["expired-token"].attempts[-1]
    assert minted.variant == "a token the drive issued to u001, expired" and minted.status == 401
    assert "a live one returns documents" in cases["expired-token"].detail
    assert sent["unknown-role"] == sent["unknown-department"] == 2
    assert not module_sim.faults  # the outage case switched its fault off again


def test_cli_against_the_served_simulator_exits_0(tmp_path: Path, module_sim: Simulator, served_sim: str) -> None:
    out, junit = tmp_path / "fs.json", tmp_path / "fs.xml"
    res = cli(
        "--target",
        served_sim,
        "--token",
        module_sim.tokens.eval_token,
        "--drive-token",
        module_sim.tokens.admin_token,
        "--json",
        str(out),
        "--junit",
        str(junit),
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"] == "closed" and data["exit_code"] == 0 and data["baseline"]["user"] == "u001"
    verdicts = {**dict.fromkeys(ALL_CASES, "closed"), "body-identity": "not applicable"}
    assert {c["case"]: c["verdict"] for c in data["cases"]} == verdicts
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "11" and suite.get("failures") == "0"
    assert {c.get("name") for c in suite.iter("testcase")} == ALL_CASES | {"baseline"}
    for name in ALL_CASES:
        assert name in res.stdout
    assert "fails closed: 9 case(s) closed, 1 not applicable" in res.stdout
    got = httpx.get(f"{served_sim}/_sim/faults", headers=bearer(module_sim.tokens.admin_token)).json()
    assert got["active"] == [] and not module_sim.faults


def test_the_documented_command_runs_as_written_against_the_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_sim: Simulator, served_sim: str
) -> None:
    (block,) = code_blocks("security-review.md", "Fail-safe probe", "bash")
    line = block.splitlines()[0]
    words = shlex.split(line.replace("http://127.0.0.1:8000", served_sim))
    assert words[:3] == ["drivebench", "probe", "--fail-safe"]
    tokens = {"$DRIVEBENCH_TOKEN": module_sim.tokens.eval_token, "$ADMIN_TOKEN": module_sim.tokens.admin_token}
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, [tokens.get(w, w) for w in words[1:]])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "reports/fail-safe.json").read_text())["verdict"] == "closed"
    assert (tmp_path / "reports/fail-safe.xml").is_file()
    assert not module_sim.faults


def test_without_the_drive_token_the_outage_case_is_not_applicable_and_still_exits_0(
    module_sim: Simulator, served_sim: str
) -> None:
    res = cli("--target", served_sim, "--token", module_sim.tokens.for_subject("u002").token, "--user", "u002")
    assert res.exit_code == 0, res.output
    assert "not applicable" in res.stdout and "--drive-token" in res.stdout


# ---------------------------------------------------------------------------------------------- broken servers


def test_the_sound_test_server_is_closed_so_the_flaws_below_are_what_the_probe_sees() -> None:
    report = run_in_process(failopen_app(), FailSafeTarget(url="http://t/sound/api/mcp/recall", token=TOKEN))
    assert report.exit_code == 0, [(c.case, c.verdict, c.detail) for c in report.cases]
    assert by_case(report)["permission-outage"].verdict == NOT_APPLICABLE


def test_a_server_that_trusts_a_missing_authorization_header_fails_open(tmp_path: Path, broken: str) -> None:
    out, junit = tmp_path / "fs.json", tmp_path / "fs.xml"
    target = f"{broken}/missing-auth/api/mcp/recall"
    res = cli("--target", target, "--token", TOKEN, "--json", str(out), "--junit", str(junit))
    assert res.exit_code == 1, res.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"] == "open" and data["open_cases"] == ["no-identity"]
    first = data["cases"][0]  # OPEN cases first
    assert first["case"] == "no-identity" and first["verdict"] == "OPEN"
    assert first["status"] == 200 and first["results"] == 2 and first["doc_ids"] == ["doc-a", "doc-b"]
    assert all(c["verdict"] in ("closed", "not applicable") for c in data["cases"][1:])
    assert "FAIL OPEN no-identity" in res.stdout and "doc-a, doc-b" in res.stdout
    assert res.stdout.index("no-identity") < res.stdout.index("malformed-token")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["no-identity"]


def test_a_server_that_answers_unknown_user_ids_fails_open(tmp_path: Path, broken: str) -> None:
    out = tmp_path / "fs.json"
    res = cli("--target", f"{broken}/unknown-user/api/mcp/recall", "--token", TOKEN, "--json", str(out))
    assert res.exit_code == 1, res.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["open_cases"] == ["unknown-user"]
    assert "doc-secret" in data["cases"][0]["doc_ids"]
    assert "FAIL OPEN unknown-user" in res.stdout


def test_a_target_that_answers_nothing_is_not_testable_never_a_pass(tmp_path: Path, broken: str) -> None:
    out, junit = tmp_path / "fs.json", tmp_path / "fs.xml"
    res = cli("--target", f"{broken}/empty/api/mcp/recall", "--token", TOKEN, "--json", str(out), "--junit", str(junit))
    assert res.exit_code == 3, res.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"] == "not testable" and data["cases"] == []
    assert data["baseline"]["ok"] is False and data["baseline"]["tried"] == list(DEFAULT_QUERIES)
    assert "not testable" in res.stdout and "no document to the real user u001" in res.stdout
    baseline = ET.parse(junit).getroot().find("testsuite/testcase[@name='baseline']")
    assert baseline is not None and baseline.find("error") is not None
    res = cli("--target", f"{broken}/empty/api/mcp/recall", "--token", TOKEN, "--query", "anything")
    assert res.exit_code == 3 and "'anything'" in res.stdout


def test_a_rejected_baseline_token_is_not_testable(module_sim: Simulator, served_sim: str) -> None:
    res = cli("--target", served_sim, "--token", "dbs_" + "0" * 40, "--json", "-")
    assert res.exit_code == 3, res.output
    data = json.loads(res.stdout)
    assert data["verdict"] == "not testable" and data["baseline"]["status"] == 401


def test_a_profile_target_uses_its_tokens_file_principal(tmp_path: Path, broken: str) -> None:
    (tmp_path / "tokens.json").write_text(json.dumps({"role:engineer": "x", "u002": TOKEN}), encoding="utf-8")
    profile = tmp_path / "target.toml"
    profile.write_text(
        f'[request]\nurl = "{broken}/sound/api/mcp/recall"\n[auth]\ntokens_file = "tokens.json"\n', encoding="utf-8"
    )
    res = cli("--target-profile", str(profile), "--json", "-")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["baseline"]["user"] == "u002" and data["baseline"]["doc_ids"] == ["doc-c"]


# ---------------------------------------------------------------------------------------------- the outage case


def test_the_outage_case_restores_the_faults_it_found(module_sim: Simulator) -> None:
    module_sim.faults.enable("citation-drop")  # harmless to recall; must be back afterwards
    try:
        report = run_in_process(
            create_app(module_sim), sim_target(module_sim), drive_token=module_sim.tokens.admin_token
        )
        outage = by_case(report)["permission-outage"]
        assert outage.verdict == CLOSED and outage.status == 503
        assert [f.name for f in module_sim.faults.active] == ["citation-drop"]
        assert "restored to citation-drop" in outage.detail
    finally:
        module_sim.faults.clear()


class FailUnderOutage(httpx.AsyncBaseTransport):
    """The simulator's app, except that a recall sent while permission-outage is on never gets an answer."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.inner = httpx.ASGITransport(app=create_app(sim), raise_app_exceptions=False)
        self.dropped = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/recall") and "permission-outage" in self.sim.faults:
            self.dropped += 1
            raise httpx.ConnectError("connection reset", request=request)
        return await self.inner.handle_async_request(request)


def test_the_outage_case_switches_the_fault_off_when_the_request_under_it_fails(module_sim: Simulator) -> None:
    transport = FailUnderOutage(module_sim)
    report = run_in_process(
        None, sim_target(module_sim), drive_token=module_sim.tokens.admin_token, transport=transport
    )
    assert transport.dropped == 1
    outage = by_case(report)["permission-outage"]
    assert outage.verdict == ERROR and "connection error" in outage.detail
    assert report.exit_code == 3 and report.verdict == "incomplete"
    assert not module_sim.faults


def test_a_wrong_drive_token_is_an_error_and_switches_nothing(module_sim: Simulator) -> None:
    report = run_in_process(create_app(module_sim), sim_target(module_sim), drive_token=module_sim.tokens.eval_token)
    outage = by_case(report)["permission-outage"]
    assert outage.verdict == ERROR and "403" in outage.detail and report.exit_code == 3
    assert not module_sim.faults


# ---------------------------------------------------------------------------------------------- the requests


def test_tampered_and_forged_tokens_keep_the_shape_and_change_the_value() -> None:
    token = "dbu_" + "0123456789abcdef" * 2 + "01234567"
    t = tampered(token)
    assert (
        len(t) == len(token) and t[:-4] == token[:-4] and all(a != b for a, b in zip(t[-4:], token[-4:], strict=True))
    )
    assert all(c in string.hexdigits for c in t[4:])
    f = forged(token)
    assert f != token and f.startswith("dbu_") and len(f) == len(token) and all(c in string.hexdigits for c in f[4:])


def _b64(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def test_a_jwt_gets_an_expired_copy_with_its_own_signature() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    jwt = f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': 'u001', 'exp': 2_000_000_000})}.c2lnbmF0dXJl"
    expired = expired_jwt(jwt, now)
    assert expired is not None and expired != jwt
    head, body, signature = expired.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert payload["sub"] == "u001" and payload["exp"] < now.timestamp()
    assert head == jwt.split(".")[0] and signature == "c2lnbmF0dXJl"
    assert expired_jwt("dbu_0123") is None and expired_jwt("a.b.c") is None
    variants = [r.variant for c in plan(FailSafeTarget(url="http://t/", token=jwt), "u001", "q") for r in c.requests]
    assert "the baseline JWT with exp in the past" in variants


def test_cases_the_request_shape_cannot_carry_are_not_applicable() -> None:
    target = FailSafeTarget(
        url="http://t/search", body_template={"q": "${query}", "k": "${top_k}"}, simulator_shape=False, token=None
    )
    cases = {c.name: c for c in plan(target, "u001", "q")}
    for name in (
        "unknown-user",
        "unknown-role",
        "unknown-department",
        "malformed-filter",
        "future-as-of",
        "body-identity",
    ):
        assert cases[name].not_applicable and not cases[name].requests, name
    assert cases["expired-token"].not_applicable == "the baseline sends no token to tamper with"
    assert cases["no-identity"].requests[0].headers == {}
    assert cases["malformed-token"].requests[0].headers == {"Authorization": "Bearer not-a-token"}


def test_a_2xx_whose_body_says_it_failed_is_closed_and_a_2xx_with_documents_is_open() -> None:
    target = FailSafeTarget(
        url="http://t/",
        mapping=ResponseSpec(results="data.items", doc_id="fileId", ok_when=OkWhen(path="code", equals=0)),
    )
    req = Request("x", {}, {})
    failed = httpx.Response(200, json={"code": 40001, "msg": "token expired", "data": None})
    assert judge(req, failed, None, target).verdict == CLOSED
    leaked = httpx.Response(200, json={"code": 0, "data": {"items": [{"fileId": "/a"}, {"fileId": "/b"}]}})
    attempt = judge(req, leaked, None, target)
    assert attempt.verdict == OPEN and attempt.doc_ids == ["/a", "/b"] and attempt.results == 2
    assert judge(req, httpx.Response(200, json={"code": 0, "data": {"items": []}}), None, target).verdict == CLOSED
    assert judge(req, None, "connection error: refused", target).verdict == ERROR


# ---------------------------------------------------------------------------------------------- usage


def test_options_of_the_other_mode_are_usage_errors() -> None:
    res = cli("--target", "http://127.0.0.1:9", "--token", "t", "--corpus", "seed")
    assert res.exit_code == 2 and "--corpus: not with --fail-safe" in res.output
    res = CliRunner().invoke(app, ["probe", "--target", "http://127.0.0.1:9", "--token", "t", "--user", "u001"])
    assert res.exit_code == 2 and "--user: only with --fail-safe" in res.output
    res = CliRunner().invoke(app, ["probe", "--target", "http://127.0.0.1:9", "--token", "t"])
    assert res.exit_code == 2 and "Missing option '--corpus'" in res.output


def test_a_target_that_honours_expired_tokens_fails_open_on_the_drives_own_expired_token(fresh_sim: Simulator) -> None:
    """A simulator whose token check forgets the expiry (the bug): the tampered and forged tokens are still
    refused, but the expired token the drive itself issued returns documents, and the probe names it."""
    import jwt

    from drivebench.drive.tokens import MINTED_SCOPES, TokenInfo

    registry = fresh_sim.tokens

    def ignore_expiry(token: str) -> TokenInfo | None:
        try:
            claims = jwt.decode(token, registry._jwt_key, algorithms=["HS256"], audience=fresh_sim.drive.name)
        except jwt.PyJWTError as exc:
            if not isinstance(exc, jwt.ExpiredSignatureError):
                return None
            claims = jwt.decode(
                token, registry._jwt_key, algorithms=["HS256"], audience=fresh_sim.drive.name,
                options={"verify_exp": False},
            )  # fmt: skip
        return TokenInfo(token, claims["sub"], MINTED_SCOPES)

    registry._resolve_minted = ignore_expiry  # type: ignore[method-assign]
    report = run_in_process(create_app(fresh_sim), sim_target(fresh_sim), drive_token=fresh_sim.tokens.admin_token)
    assert report.verdict == "open" and report.open_cases == ["expired-token"], report.open_cases
    case = by_case(report)["expired-token"]
    opened = [a for a in case.attempts if a.verdict == OPEN]
    assert [a.variant for a in opened] == ["a token the drive issued to u001, expired"]
    assert opened[0].doc_ids and report.exit_code == 1


def test_without_the_drive_token_no_expired_token_is_minted(module_sim: Simulator) -> None:
    report = run_in_process(create_app(module_sim), sim_target(module_sim))
    case = by_case(report)["expired-token"]
    assert len(case.attempts) == 2 and case.verdict == CLOSED
    assert not any("the drive issued" in a.variant for a in case.attempts)


def test_a_user_token_claiming_another_principal_in_the_body_is_closed_and_open_under_role_from_body(
    module_sim: Simulator,
) -> None:
    """The intern's own token, the body claiming the seed's finance manager (role, department, user): the clean
    simulator refuses each claim (403); under ``role-from-body`` the claims return the manager's documents."""
    target = sim_target(module_sim, module_sim.tokens.for_subject("u012").token)
    clean = by_case(run_in_process(create_app(module_sim), target, user="u012"))["body-identity"]
    assert clean.verdict == CLOSED and [a.status for a in clean.attempts] == [403, 403, 403]
    module_sim.faults.enable("role-from-body")
    try:
        report = run_in_process(create_app(module_sim), target, user="u012")
    finally:
        module_sim.faults.clear()
    opened = by_case(report)["body-identity"]
    assert report.open_cases == ["body-identity"] and report.exit_code == 1
    assert opened.doc_ids and not set(opened.doc_ids) & set(report.baseline.doc_ids)
    # the intern's role in finance sees nothing new (no intern there): only the role and the user claims open
    assert {a.variant.split(" = ")[0] for a in opened.attempts if a.verdict == OPEN} == {"user_role", "user_id"}
