"""A built-in corpus name works wherever a corpus directory does, in every command that takes a corpus: each
resolves it with ``cli.common.resolve_corpus_option`` and reads the corpus's files from the directory it returns,
never from the name. ``probe --corpus seed`` (the README's tour) writes its report; ``probe`` refuses a server of
another corpus before it sends anything, as ``eval run`` does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.common import resolve_corpus_option
from drivebench.cli.main import app
from drivebench.corpora.builtin import resolve_corpus
from drivebench.errors import DrivebenchError
from drivebench.testing import ServedSimulator

pytestmark = [pytest.mark.slow]


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250", "DRIVEBENCH_HISTORY": "none"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


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


def test_the_resolver_takes_names_versions_and_directories_and_names_the_builtins_otherwise(tmp_path: Path) -> None:
    seed = resolve_corpus("seed")
    assert resolve_corpus_option("seed") == seed
    assert resolve_corpus_option("seed@1") == seed
    assert resolve_corpus_option(str(seed)) == seed
    with pytest.raises(DrivebenchError) as unknown:
        resolve_corpus_option("no-such-corpus")
    assert str(unknown.value) == "unknown corpus 'no-such-corpus'"
    assert "seed, acme-zh, acme-en" in (unknown.value.hint or "")
    with pytest.raises(DrivebenchError) as not_a_corpus:
        resolve_corpus_option(str(tmp_path))
    assert str(not_a_corpus.value) == f"{tmp_path} is not a corpus directory: it has no corpus.json"


def test_probe_with_a_builtin_name_writes_its_report(
    drivebench_server: ServedSimulator, asked: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The README's tour, verbatim but for the port and a smaller sample: it used to send every probe, then stop
    with an internal error (exit 70) reading ``seed/corpus.json``, so the work was lost."""
    sim, out = drivebench_server.sim, tmp_path / "tour-probe"
    res = invoke(
        "probe", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--corpus", "seed",
        "--out", str(out), "--pairs", "6", "--queries-per-pair", "1", "--class-trials", "3",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert report["run_info"]["corpus"] == "seed" and report["run_info"]["corpus_version"] == "seed@1"
    assert report["counts"]["requests"] == 6 and report["counts"]["leaks"] == 0
    beyond = {n: c for n, c in report["classes"].items() if n != "results"}
    assert beyond["shared-cache"]["state"] == "measured", beyond  # the eval token alone cannot act as each user
    assert beyond["body-identity"]["state"] == "not measured" and "own token" in beyond["body-identity"]["reason"]
    class_requests = sum(c["requests"] for c in beyond.values())
    assert len(asked) == 1 + 6 + class_requests  # the preflight, the six probes, then each class's trials
    assert (out / "probe.html").is_file()


@pytest.mark.parametrize("named", ["acme-zh", "seed@2"])
def test_probe_refuses_a_server_of_another_corpus_before_sending_anything(
    named: str, drivebench_server: ServedSimulator, asked: list[dict[str, Any]], tmp_path: Path
) -> None:
    sim, out = drivebench_server.sim, tmp_path / "probe"
    res = invoke(
        "probe", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--corpus", named,
        "--out", str(out),
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    if named == "seed@2":  # seed has one version: the name is refused before the server is asked
        assert "error: unknown version '2' of corpus 'seed'; versions: 1\n" in res.stderr
    else:
        assert "error: the target serves corpus seed@1, but --corpus names acme-zh@3" in res.stderr
        assert "hint: give --corpus seed@1 " in res.stderr
    assert asked == [] and not out.exists()  # no probe, not even the preflight; nothing written


def test_every_command_with_a_corpus_takes_a_builtin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands that read the corpus's files take ``seed`` (the ones that load a simulator are stopped at the
    load, which must be given the built directory)."""
    seed = resolve_corpus("seed")
    tokens = invoke("tokens", "--corpus", "seed", "--json")
    assert tokens.exit_code == 0, tokens.output
    assert "svc:evaluator" in {row["user_id"] for row in json.loads(tokens.stdout)}

    audit = invoke("audit", "oversharing", "seed", "--json")
    assert audit.exit_code in (0, 1), audit.output
    assert json.loads(audit.stdout)["corpus"] == "seed"

    evalset = seed / "evalset.jsonl"
    first = json.loads(evalset.read_text(encoding="utf-8").splitlines()[0])
    run = tmp_path / "run.jsonl"
    gold = [{"doc_id": g["doc_id"], "rank": i + 1, "score": 1.0} for i, g in enumerate(first["gold"])]
    run.write_text(json.dumps({"query_id": first["query_id"], "results": gold}) + "\n", encoding="utf-8")
    score = invoke("eval", "score", "--evalset", str(evalset), "--run", str(run), "--corpus", "seed", "--json", "-")
    assert score.exit_code in (1, 3), score.output  # the other queries are missing from the run: it failed
    scored = json.loads(score.stdout)
    assert scored["oracles"]["leak"] == {
        "measured": True,
        "source": "the corpus's policies (seed) at each query's time",
    }

    loaded: list[Path] = []

    def stop_at_load(corpus_dir: Any, **_: Any) -> Any:
        loaded.append(Path(corpus_dir))
        raise DrivebenchError("stopped by the test at the load")

    monkeypatch.setattr("drivebench.api.load_simulator", stop_at_load)
    for command in (["demo"], ["mcp"], ["serve", "--port", "0"]):
        res = invoke(*command, "--corpus", "seed", "--embedder", "hash")
        assert res.exit_code == 2 and "stopped by the test at the load" in res.stderr, (command, res.output)
    assert loaded == [seed, seed, seed]
