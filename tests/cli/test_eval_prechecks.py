"""`drivebench eval run` checks what it was given before it sends a query, against the real simulator server:
an eval set of another corpus, a target serving another corpus than --corpus names, a user's token where the
evaluation token belongs, a mistyped URL scheme. Each is caught with its fix named, and the server is shown to
have been asked nothing (every recall, refused or not, passes ``Simulator.principal_for``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.testing import ServedSimulator

pytestmark = [pytest.mark.slow]


def error_lines(stderr: str) -> tuple[str, str]:
    """The CLI's one error line and its hint line, once each; no traceback."""
    errors = [x for x in stderr.splitlines() if x.startswith("error: ")]
    hints = [x for x in stderr.splitlines() if x.startswith("hint: ")]
    assert len(errors) == len(hints) == 1 and "Traceback" not in stderr, stderr
    return errors[0], hints[0]


def eval_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["eval", "run", *args, "--history", "none"], env={"COLUMNS": "250"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stderr


@pytest.fixture
def asked(drivebench_server: ServedSimulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """The principals the server was asked to act as, one per recall request that reached it."""
    sim = drivebench_server.sim
    seen: list[dict[str, Any]] = []
    real = sim.principal_for

    def spy(token: Any, **who: Any) -> Any:
        seen.append(who)
        return real(token, **who)

    monkeypatch.setattr(sim, "principal_for", spy)
    yield seen


def seed_evalset(server: ServedSimulator, tmp_path: Path, n: int = 8) -> Path:
    assert server.sim.corpus_dir is not None
    lines = (server.sim.corpus_dir / EVALSET_NAME).read_text(encoding="utf-8").splitlines()[:n]
    path = tmp_path / "evalset.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_seed_eval_set_with_corpus_acme_zh_exits_2_before_any_query(
    drivebench_server: ServedSimulator, asked: list[dict[str, Any]], tmp_path: Path
) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None and sim.drive.name == "seed"
    out = tmp_path / "out"
    code, err = eval_run(
        "--target", drivebench_server.url, "--token", sim.tokens.eval_token,
        "--evalset", str(sim.corpus_dir / EVALSET_NAME), "--corpus", "acme-zh", "--out", str(out),
    )  # fmt: skip
    assert code == 2, err
    first, hint = error_lines(err)
    # acme-zh@3 has seed's document ids but not the later versions seed's gold names
    assert first.startswith("error: the eval set names 2 ids that corpus acme-zh@3 does not have: d0014-v2 (a version")
    assert first.endswith("; this eval set fits seed"), first
    assert hint.startswith("hint: give --corpus seed "), hint
    assert asked == [] and not out.exists()  # not even the preflight probe was sent; nothing written


def test_a_target_serving_another_corpus_than_corpus_names_exits_2_naming_both(
    drivebench_server: ServedSimulator, asked: list[dict[str, Any]], tmp_path: Path
) -> None:
    sim = drivebench_server.sim
    evalset = tmp_path / "fits-both.jsonl"  # d0001 is a document of seed and of acme-zh: the ids check passes
    line = {"query_id": "q1", "query": "年假怎么规定的", "user_id": "u001", "gold": [{"doc_id": "d0001"}]}
    evalset.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    # the evaluation token (the one an evaluation uses) is told which corpus, with its version, is served
    args = ["--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--evalset", str(evalset)]
    code, err = eval_run(*args, "--corpus", "acme-zh", "--out", str(tmp_path / "mismatch"))
    assert code == 2, err
    first, hint = error_lines(err)
    assert first == "error: the target serves corpus seed@1, but --corpus names acme-zh@3"
    assert hint.startswith("hint: give --corpus seed@1 ")
    assert asked == []
    # the corpus it serves passes the check: the run goes on to the probe and the query
    code, err = eval_run(*args, "--corpus", "seed", "--out", str(tmp_path / "match"), "--allow-leaks")
    assert code == 0, err
    assert len(asked) == 2  # the preflight probe and the query (one asker: no second probe)


def test_a_user_token_is_diagnosed_at_preflight_and_no_query_is_run(
    drivebench_server: ServedSimulator, asked: list[dict[str, Any]], tmp_path: Path
) -> None:
    sim = drivebench_server.sim
    evalset = seed_evalset(drivebench_server, tmp_path)
    queries = [json.loads(x) for x in evalset.read_text(encoding="utf-8").splitlines()]
    own = queries[0]["user_id"]
    other = next(q["user_id"] for q in queries if q["user_id"] != own)
    out = tmp_path / "out"
    # the first asker's own token: it answers the first query, so one probe of the first query passes
    code, err = eval_run(
        "--target", drivebench_server.url, "--token", sim.tokens.for_subject(own).token,
        "--evalset", str(evalset), "--corpus", "seed", "--out", str(out),
    )  # fmt: skip
    assert code == 3, err  # docs/evaluating.md: a failed preflight fails the run (exit 3)
    text = " ".join(err.split())
    assert f"HTTP 403 Forbidden from {drivebench_server.url}/api/mcp/recall for user {other}" in text
    assert "this token cannot evaluate as other users" in text
    assert "the evaluation token, the one with scope evaluate-as (`drivebench tokens --corpus NAME` prints it)" in text
    assert [a["user_id"] for a in asked] == [own, other]  # the two probes, then nothing
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["preflight"]["kind"] == "http_403" and metrics["status"]["state"] == "failed"
    records = [json.loads(x) for x in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(queries)
    assert {(r["error_kind"], r["attempts"]) for r in records} == {("preflight", 0)}


@pytest.mark.parametrize(
    ("target", "error", "hint"),
    [
        (
            "htp://localhost:8000",
            "error: --target 'htp://localhost:8000': unsupported URL scheme 'htp://' (accepted: http, https)",
            "hint: did you mean http://localhost:8000?",
        ),
        (
            "localhost:8000",
            "error: --target 'localhost:8000' is not a URL: it has no scheme (accepted: http, https)",
            "hint: write the scheme, e.g. http://localhost:8000",
        ),
        (
            "ftp://127.0.0.1:8000",
            "error: --target 'ftp://127.0.0.1:8000': unsupported URL scheme 'ftp://' (accepted: http, https)",
            "hint: use http, https, e.g. http://127.0.0.1:8000",
        ),
        ("http:///api", "error: --target 'http:///api' names no host", "hint: e.g. http://127.0.0.1:8000"),
    ],
)
def test_a_bad_url_scheme_is_a_usage_error(target: str, error: str, hint: str, tmp_path: Path) -> None:
    evalset = tmp_path / "e.jsonl"
    evalset.write_text('{"query_id": "q1", "query": "x", "user_id": "u001"}\n', encoding="utf-8")
    for mcp in ([], ["--mcp"]):
        code, err = eval_run(*mcp, "--target", target, "--token", "t", "--evalset", str(evalset))
        assert code == 2, err
        assert error_lines(err) == (error, hint)
        assert "server running" not in err
