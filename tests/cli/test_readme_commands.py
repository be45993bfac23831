"""The commands of the Commands (the lines this file owns), Configuration and Container pages of docs/, executed
(Container: the docker lines are checked against the files they use, since no container engine runs here, and
the one command they run inside the container runs here). README's Quick start and tour run in
tests/cli/test_quick_starts_run.py."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import typer
import yaml

from drivebench.cli.config import build_default_map, load_config
from drivebench.cli.main import app
from tests.support.clirun import REPO, clean_env, run
from tests.support.docs import code_blocks, section


def blocks(page: str, title: str, language: str) -> list[str]:
    return code_blocks(page, title, language)


def commands(block: str) -> list[str]:
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_commands_section_lines_for_the_root_options_and_info() -> None:
    lines = commands(blocks("commands.md", "Synopsis", "bash")[0])
    synopsis = next(line for line in lines if line.startswith("drivebench [--config"))
    root_help = run("--help").stdout
    for option in re.findall(r"--[a-z-]+", synopsis):
        assert option in root_help, option
    assert run("--config", "none", "--quiet", "--version").stdout.startswith("drivebench ")
    info_line = next(line for line in lines if line.startswith("drivebench info"))
    assert info_line == "drivebench info [--json]"
    assert json.loads(run("info", "--json").stdout)["drivebench"]


def test_configuration_example_is_a_valid_config_file(tmp_path: Path) -> None:
    (toml,) = blocks("configuration.md", "Configuration", "toml")
    path = tmp_path / "drivebench.toml"
    path.write_text(toml, encoding="utf-8")
    command = typer.main.get_command(app)
    ctx = command.make_context("drivebench", ["info"], resilient_parsing=True)
    defaults = build_default_map(ctx, load_config(str(path)))
    assert defaults["serve"]["port"] == 8010 and defaults["serve"]["data_dir"] == str(tmp_path / "var/drive")
    assert defaults["serve"]["fault"] == ["latency:delay_ms=20"] and defaults["serve"]["corpus"] == "seed"
    assert defaults["eval"]["run"]["target"] == "http://127.0.0.1:8010" and defaults["eval"]["run"]["k"] == "1,5,10"
    env = clean_env()
    env.pop("DRIVEBENCH_CONFIG")
    data = json.loads(run("info", "--json", env=env, cwd=tmp_path).stdout)
    assert (
        data["config_file"] == str(path) and data["corpus"]["name"] == "seed" and data["embedder"]["name"] == "minilm"
    )
    for name in re.findall(r"`(DRIVEBENCH_[A-Z_]+)`", section("configuration.md", "Configuration")):
        if name.count("_") >= 2 and name.split("_")[1] in ("SERVE", "EVAL", "DEMO"):
            command_words = name.split("_")[1:3] if name.startswith("DRIVEBENCH_EVAL_") else name.split("_")[1:2]
            assert name in run(*[w.lower() for w in command_words], "--help").stdout, name


def test_container_commands_match_the_files_they_use() -> None:
    lines = commands(blocks("container.md", "Container", "bash")[0])
    assert len(lines) == 4
    build, run_image, compose_up, compose_exec = (shlex.split(line) for line in lines)
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert build[:3] == ["docker", "build", "-t"] and build[-1] == "." and "ARG TORCH_INDEX_URL" in dockerfile
    assert "TORCH_INDEX_URL=$TORCH_INDEX_URL" in build
    assert "-v" in run_image and run_image[run_image.index("-v") + 1] == "drivebench-data:/data"
    assert 'VOLUME ["/data"]' in dockerfile and "EXPOSE 8000" in dockerfile
    assert run_image[run_image.index("-p") + 1] == "127.0.0.1:8000:8000"
    assert any(a.startswith("DRIVEBENCH_TOKEN_SECRET=") for a in run_image)
    assert compose_up[-4:] == ["docker", "compose", "up", "-d"]
    compose = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
    assert compose_exec[:4] == ["docker", "compose", "exec", "drivebench"] and "drivebench" in compose["services"]
    inside = compose_exec[4:]  # `drivebench tokens` as the container runs it (compose sets the corpus variable)
    env = clean_env(DRIVEBENCH_TOKENS_CORPUS="seed", DRIVEBENCH_TOKEN_SECRET="not-the-default")
    done = run(*inside[1:], "--json", env=env)
    assert inside[0] == "drivebench" and done.returncode == 0, done.stderr
    tokens = json.loads(done.stdout)
    assert any("admin" in t["scopes"] for t in tokens)
