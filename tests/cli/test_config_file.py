"""drivebench.toml / [tool.drivebench]: precedence command line > environment > file > defaults, tables per
command, shared keys, relative paths, and errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer

from drivebench.cli.config import ConfigFile, build_default_map, load_config
from drivebench.cli.main import app
from drivebench.corpora.builtin import DEFAULT_CORPUS
from tests.support.clirun import invoke, run


@pytest.fixture
def info_cmd(monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Any]]:
    def call(cwd: Path, argv: list[str], **env: str) -> dict[str, Any]:
        code, out, err = invoke(argv, cwd, monkeypatch, **env)  # no DRIVEBENCH_CONFIG: found from cwd
        assert code == 0, err
        return json.loads(out)

    return call


def test_precedence_cli_over_environment_over_file_over_default(
    tmp_path: Path, info_cmd: Callable[..., dict[str, Any]]
) -> None:
    (tmp_path / "drivebench.toml").write_text('corpus = "seed"\n[info]\npipeline = "dense"\n', encoding="utf-8")
    nested = tmp_path / "sub" / "dir"
    nested.mkdir(parents=True)
    plain = tmp_path.parent / f"{tmp_path.name}-plain"
    plain.mkdir()

    default = info_cmd(plain, ["info", "--json"])
    assert (
        default["corpus"]["name"] == DEFAULT_CORPUS == "acme-zh@3"
        and default["pipeline"] == "deep"
        and default["rerank"] == "ltr-first-round (auto with embedder e5)"
        and default["config_file"] is None
    )

    from_file = info_cmd(nested, ["info", "--json"])  # found in a parent directory
    assert from_file["config_file"] == str(tmp_path / "drivebench.toml")
    assert from_file["corpus"]["name"] == "seed" and from_file["pipeline"] == "dense"

    from_env = info_cmd(nested, ["info", "--json"], DRIVEBENCH_INFO_CORPUS="acme-en", DRIVEBENCH_INFO_PIPELINE="bm25")
    assert from_env["corpus"]["name"] == "acme-en" and from_env["pipeline"] == "bm25"

    from_cli = info_cmd(
        nested,
        ["info", "--json", "--corpus", "seed", "--pipeline", "dense"],
        DRIVEBENCH_INFO_CORPUS="acme-en",
        DRIVEBENCH_INFO_PIPELINE="bm25",
    )
    assert from_cli["corpus"]["name"] == "seed" and from_cli["pipeline"] == "dense"

    ignored = info_cmd(nested, ["--config", "none", "info", "--json"])
    assert ignored["config_file"] is None and ignored["corpus"]["name"] == DEFAULT_CORPUS


def test_pyproject_tool_table_and_explicit_config(tmp_path: Path, info_cmd: Callable[..., dict[str, Any]]) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "my-rag"\n\n[tool.drivebench]\nembedder = "hash"\n\n[tool.drivebench.info]\ncorpus = "acme-en"\n',
        encoding="utf-8",
    )
    got = info_cmd(tmp_path, ["info", "--json"])
    assert got["config_file"] == str(tmp_path / "pyproject.toml")
    assert got["embedder"]["name"] == "hash" and got["corpus"]["name"] == "acme-en"
    other = tmp_path / "elsewhere.toml"
    other.write_text('[info]\ncorpus = "seed"\n', encoding="utf-8")
    got = info_cmd(tmp_path, ["--config", str(other), "info", "--json"])
    assert got["config_file"] == str(other) and got["corpus"]["name"] == "seed" and got["embedder"]["name"] == "e5"
    got = info_cmd(tmp_path, ["info", "--json"], DRIVEBENCH_CONFIG=str(other))
    assert got["config_file"] == str(other)


def default_map(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "drivebench.toml"
    path.write_text(text, encoding="utf-8")
    command = typer.main.get_command(app)
    ctx = command.make_context("drivebench", ["info"], resilient_parsing=True)
    return build_default_map(ctx, load_config(str(path)))


def test_tables_shared_keys_lists_and_relative_paths(tmp_path: Path) -> None:
    got = default_map(
        tmp_path,
        'corpus = "seed"\n[serve]\nport = 8010\ndata-dir = "var/drive"\nfault = "latency:delay_ms=20"\n'
        '[eval]\nk = "1,5"\n[eval.run]\ntarget = "http://127.0.0.1:8010"\n',
    )
    serve = got["serve"]
    assert serve == {
        "corpus": "seed",
        "port": 8010,
        "data_dir": str(tmp_path / "var/drive"),
        "fault": ["latency:delay_ms=20"],
    }
    assert got["tokens"] == {"corpus": "seed"} and got["demo"]["corpus"] == "seed"
    assert got["eval"]["run"]["target"] == "http://127.0.0.1:8010"
    assert got["eval"]["run"]["k"] == "1,5" and got["eval"]["score"]["k"] == "1,5"
    assert "corpus" in got["eval"]["run"]  # the leak-oracle corpus follows the shared corpus
    assert "serve" not in got.get("eval", {})


def test_config_errors_name_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def bad_config(folder: Path, text: str) -> tuple[str, str]:
        path = folder / "drivebench.toml"
        path.write_text(text, encoding="utf-8")
        code, _, err = invoke(["--config", str(path), "info"], folder, monkeypatch)
        assert code == 2, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 2 and "Traceback" not in err, err
        return lines[0], lines[1]

    path = tmp_path / "drivebench.toml"
    first, hint = bad_config(tmp_path, 'corpus = "seed"\n\n[serve]\nhost = "127.0.0.1"\nprot = 8010\n')
    assert first == f"error: {path}:5: unknown option 'prot' for `drivebench serve`"
    assert "port" in hint
    first, hint = bad_config(tmp_path, '[serve]\nport = "eighty"\n')
    assert first.startswith(f"error: {path}:2: port = 'eighty': ")
    assert "drivebench serve --help" in hint
    first, hint = bad_config(tmp_path, 'corpus = "seed"\n[serv]\nport = 1\n')
    assert first == f"error: {path}:2: unknown key 'serv' in [top level]"
    assert "serve" in hint and "info" in hint
    first, _ = bad_config(tmp_path, '[eval.rn]\ntarget = "x"\n')
    assert first == f"error: {path}:1: unknown key 'rn' in [eval]"
    first, _ = bad_config(tmp_path, 'corpus = "seed"\n[serve\n')
    assert first.startswith(f"error: {path}:2: not valid TOML")
    done = run("--config", str(tmp_path / "nope.toml"), "info")  # and once through the real console script
    assert done.returncode == 2 and f"error: {tmp_path / 'nope.toml'}: config file not found" in done.stderr


def test_line_of_finds_keys_in_their_table() -> None:
    text = 'port = 1\n[serve]\n  port = 2\n[eval.run]\n"port" = 3\n'
    config = ConfigFile(Path("x.toml"), {}, text)
    assert config.line_of((), "port") == 1
    assert config.line_of(("serve",), "port") == 3
    assert config.line_of(("eval", "run"), "port") == 5
    assert (
        ConfigFile(Path("p"), {}, "[tool.drivebench.serve]\nport = 1\n", ("tool", "drivebench")).line_of(
            ("serve",), "port"
        )
        == 2
    )


def test_answer_levers_are_config_keys_checked_like_the_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = default_map(
        tmp_path, '[serve]\nanswer_citation = "some:0.3"\nanswer-length = 2\n[demo]\nanswer_passages = 5\n'
    )
    assert got["serve"] == {"answer_citation": "some:0.3", "answer_length": 2}
    assert got["demo"] == {"answer_passages": 5}
    path = tmp_path / "drivebench.toml"
    path.write_text('[serve]\nanswer_citation = "sometimes"\n', encoding="utf-8")
    code, _, err = invoke(["--config", str(path), "info"], tmp_path, monkeypatch)
    assert code == 2 and f"{path}:2: answer_citation = 'sometimes'" in err and "some:F" in err
    code, _, err = invoke(["--config", "none", "serve", "--answer-passages", "0"], tmp_path, monkeypatch)
    assert code == 2 and "--answer-passages" in err
