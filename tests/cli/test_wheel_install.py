"""drivebench installed from a built wheel, not from a checkout (docs/ci.md): the wheel is built from a copy of
the sources, installed into a fresh virtual environment, and its ``drivebench`` serves the seed corpus and
evaluates it over HTTP from a directory outside any checkout. So package data the wheel leaves out (the Casbin
model, the packaged vectors, the console's templates, the scenarios) fails here, not in a user's CI job.

The fresh environment gets its dependencies from this test's environment (a ``.pth`` file naming its
site-packages: nothing is downloaded), after the wheel itself is installed with ``--no-deps``; the test asserts
that ``drivebench`` is imported from the wheel, never from the sources."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from drivebench.server.process import free_port
from tests.support.clirun import REPO, clean_env
from tests.support.docs import code_blocks

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
CI_JOB = ("ci.md", "A CI job")
DOCUMENTED_URL = "http://127.0.0.1:8000"


def ci_jobs() -> tuple[dict[str, Any], dict[str, Any]]:
    github, gitlab, _screenshots = (yaml.safe_load(block) for block in code_blocks(*CI_JOB, "yaml"))
    return github["jobs"]["recall"], gitlab["recall"]


def step(job: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in job["steps"] if s.get("name") == name)


def test_the_documented_jobs_install_the_package_and_run_the_same_evaluation() -> None:
    github, gitlab = ci_jobs()
    (requirements,) = code_blocks(*CI_JOB, "text")
    assert "drivebench @ git+https://" in requirements and ".whl" in requirements
    installs = [step(github, "install drivebench")["run"], *gitlab["before_script"]]
    assert installs == ["python -m pip install -r ci/drivebench.txt"] * 2  # a package, never `pip install -e`
    assert "ci/drivebench.txt" in github["steps"][1]["with"]["key"] and gitlab["cache"]["key"]["files"] == [
        "ci/drivebench.txt"
    ]
    simulator, vendor = gitlab["script"]
    assert step(github, "evaluate the simulator")["run"] == simulator
    assert step(github, "evaluate your endpoint")["run"].strip() == vendor
    documented = " ".join(code_blocks("ci.md", "CI", "bash")[0].replace("\\\n", " ").split())
    assert " ".join(vendor.split()) in documented  # the line tests/e2e/test_readme_real_endpoints.py runs
    assert "fonts-wqy-microhei" in code_blocks(*CI_JOB, "yaml")[2]


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of a copy of the sources (a build in the checkout would leave build/ and *.egg-info there)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path / "dist"
    built = subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("drivebench-*.whl")
    return wheel


def fresh_venv_with(wheel: Path, tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [*PIP, "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # the dependencies, after the venv's own site-packages (which hold the wheel)
    (Path(purelib) / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv


def test_the_wheel_installs_and_evaluates_the_simulator(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    venv = fresh_venv_with(wheel, tmp_path)
    work = tmp_path / "job"  # no checkout here: nothing to import drivebench from but the wheel
    work.mkdir()
    env = clean_env(HOME=str(tmp_path), DRIVEBENCH_SERVE_PORT=str(free_port()))  # the shared cache: built corpora
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"

    imported = subprocess.run(
        ["python", "-c", "import drivebench; print(drivebench.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    assert Path(imported.stdout.strip()).is_relative_to(venv), imported.stdout

    helped = subprocess.run(["drivebench", "demo", "--help"], cwd=work, env=env, capture_output=True, text=True)
    assert helped.returncode == 0 and "Usage: drivebench demo" in helped.stdout, helped.stderr

    port = env["DRIVEBENCH_SERVE_PORT"]
    script = step(ci_jobs()[0], "evaluate the simulator")["run"].replace(DOCUMENTED_URL, f"http://127.0.0.1:{port}")
    assert "8000" not in script
    evaluated = subprocess.run(
        ["bash", "-e", "-c", f"trap 'kill $(jobs -p); wait' EXIT\n{script}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
    )
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    for name in ("metrics.json", "report.html", "junit.xml"):
        assert (work / "reports" / "sim" / name).is_file(), name
    assert "passed: hit_rate@10" in evaluated.stdout + evaluated.stderr
