"""TOML target profiles: their keys, body templates, tokens, the --target URL rule."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.evaluator.targets.profile import (
    SIMULATOR_BODY,
    ProfileError,
    TargetProfile,
    load_profile,
    render,
    simulator_url,
    template_values,
    with_target,
)


def test_render_typed_text_and_dropped_values(mkq) -> None:
    q = mkq("q1", [], user_id="u001", user_role=None, query="合同")
    body = render(
        {
            "q": "${query}",
            "k": "${top_k}",
            "who": "user ${user_id}",
            "role": "${user_role}",
            "n": {"r": "${user_role} x"},
            "lit": 3,
        },
        template_values(q, 10),
    )
    assert body == {"q": "合同", "k": 10, "who": "user u001", "n": {}, "lit": 3}
    assert render(SIMULATOR_BODY, template_values(q, 5)) == {"query": "合同", "top_k": 5, "user_id": "u001"}


def test_target_url_rule() -> None:
    assert simulator_url("http://h:8000") == "http://h:8000/api/mcp/recall"
    assert simulator_url("http://h:8000/") == "http://h:8000/api/mcp/recall"
    assert simulator_url("http://h:8000/custom/recall") == "http://h:8000/custom/recall"
    prof = TargetProfile.model_validate({"request": {"url": "http://vendor:9000/open/v2/search"}})
    assert with_target(prof, "http://other:1") == "http://other:1/open/v2/search"
    assert with_target(prof, "http://other:1/x") == "http://other:1/x"
    with pytest.raises(ProfileError, match="is not an http"):
        simulator_url("localhost:8000")


def test_load_profile_errors_are_one_line(tmp_path: Path) -> None:
    p = tmp_path / "p.toml"
    p.write_text("[request\nurl=1", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"p.toml: not valid TOML"):
        load_profile(p)
    p.write_text('[request]\nurl = "http://x"\ntimeout_s = -1\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"\[request.timeout_s\] Input should be greater than 0"):
        load_profile(p)
    p.write_text('[request.body]\nq = "${nope}"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"unknown placeholder \$\{nope\}"):
        load_profile(p)
    p.write_text('[respons]\nresults = "x"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"\[respons\] Extra inputs are not permitted"):
        load_profile(p)


def test_tokens_file_env_and_per_principal_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mkq) -> None:
    (tmp_path / "tokens.json").write_text(json.dumps({"u001": "tok-1", "role:intern": "tok-intern"}), encoding="utf-8")
    p = tmp_path / "p.toml"
    p.write_text(
        '[request]\nurl = "http://vendor.test/search"\nheaders = { "X-Tenant" = "acme" }\n'
        '[request.body]\nkeyword = "${query}"\nsize = "${top_k}"\n'
        '[auth]\ntokens_file = "tokens.json"\n'
        '[response]\nresults = "data.items"\ndoc_id = "fileId"\nok_when = { path = "code", equals = 0 }\ntext = "content"\n',
        encoding="utf-8",
    )
    prof = load_profile(p)
    single, per = prof.tokens()
    assert single is None and per == {"u001": "tok-1", "role:intern": "tok-intern"}
    seen: list[tuple[str | None, str | None, dict]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            (request.headers.get("authorization"), request.headers.get("x-tenant"), json.loads(request.content))
        )
        return httpx.Response(200, json={"code": 0, "data": {"items": [{"fileId": "/a.pdf", "content": "第一段"}]}})

    target = HttpTarget(None, None, profile=prof, tokens=per, transport=httpx.MockTransport(handler))
    qs = [mkq("q1", [], user_id="u001", user_role=None, query="a"), mkq("q2", [], user_role="intern", query="b")]
    assert target.missing_tokens([*qs, mkq("q3", [], user_id="u999", user_role=None)]) == ["u999"]
    import asyncio

    records = asyncio.run(run_queries(target, qs, RunConfig(top_k=3)))
    assert [r.results[0].doc_id for r in records] == ["/a.pdf", "/a.pdf"]
    assert records[0].results[0].model_extra["text"] == "第一段"
    assert sorted(seen, key=lambda s: s[2]["keyword"]) == [
        ("Bearer tok-1", "acme", {"keyword": "a", "size": 3}),
        ("Bearer tok-intern", "acme", {"keyword": "b", "size": 3}),
    ]
    p.write_text('[auth]\ntoken_env = "DRIVEBENCH_TEST_NO_SUCH_VAR"\n', encoding="utf-8")
    monkeypatch.delenv("DRIVEBENCH_TEST_NO_SUCH_VAR", raising=False)
    with pytest.raises(ProfileError, match="DRIVEBENCH_TEST_NO_SUCH_VAR is not set"):
        load_profile(p).tokens()
    monkeypatch.setenv("DRIVEBENCH_TEST_NO_SUCH_VAR", "from-env")
    assert load_profile(p).tokens() == ("from-env", {})


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        (200, {"code": 40001, "msg": "token expired", "data": None}, "app_error",
         "response says it failed: code = 40001 (expected 0); msg: token expired"),
        (200, {"code": 0, "msg": "ok", "data": {"records": []}}, "bad_shape",
         "results path data.items not found; top-level keys: code, msg, data; data has keys: records"),
        (200, {"code": 0, "data": {"items": [{"name": "a"}]}}, "bad_shape", "result 1 has no 'fileId' (its keys: name)"),
        (200, [1, 2], "not_json", "response is not a JSON object but a list"),
        (403, {"error": "nope"}, "http_403", 'HTTP 403: {"error":"nope"}'),
        (404, {}, "http_404", "HTTP 404"),
        (418, {}, "http_4xx", "HTTP 418"),
    ],
)  # fmt: skip
def test_every_failure_has_a_kind(mkq, status: int, body, kind: str, message: str) -> None:
    prof = TargetProfile.model_validate(
        {
            "request": {"url": "http://v.test/s"},
            "response": {"results": "data.items", "doc_id": "fileId", "ok_when": {"path": "code", "equals": 0}},
        }
    )
    target = HttpTarget(
        None, "t", profile=prof, transport=httpx.MockTransport(lambda r: httpx.Response(status, json=body))
    )
    import asyncio

    (rec,) = asyncio.run(run_queries(target, [mkq("q1", ["a"])], RunConfig(top_k=3, attempts=1)))
    assert rec.error_kind == kind and message in (rec.error or "")


def test_an_http_targets_name_is_its_url() -> None:
    """Reports, history and the console name the target: the URL alone ("http:http://..." said the scheme twice)."""
    target = HttpTarget("http://127.0.0.1:8000", "token")
    assert target.name == target.url and target.name.startswith("http://") and "http:http" not in target.name
