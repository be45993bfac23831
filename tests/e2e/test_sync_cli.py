"""``drivebench eval sync`` end to end: a real ``drivebench serve`` (uvicorn, Casbin, FAISS) as drive and target,
the CLI in a subprocess: exit codes, metrics.json, JUnit, and the drive back at its starting state."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from drivebench.drive.tokens import EVAL_SERVICE
from drivebench.server.process import free_port
from tests.support.clirun import run
from tests.support.serverproc import ServerProc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    proc = ServerProc(tmp_path_factory.mktemp("sync") / "data")
    proc.start()
    yield proc
    proc.stop()


def _sync(server: ServerProc, out: Path, *extra: str, target: str | None = None) -> tuple[int, str, str]:
    done = run(
        "eval", "sync",
        "--drive", server.url, "--drive-token", server.token("admin"),
        "--target", target or server.url, "--token", server.token(EVAL_SERVICE),
        "--deadline", "5", "--poll", "0.1", "--out", str(out), *extra,
        timeout=300,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_revocations_on_the_simulator_exit_0_with_every_figure_written(server: ServerProc, tmp_path: Path) -> None:
    before = server.get("/_sim/stats").json()
    code, out, err = _sync(server, tmp_path / "r", "--json", "-", "--junit", str(tmp_path / "j.xml"))
    assert code == 0, err
    result = json.loads(out)
    o = result["sync"]["overall"]
    assert o["revocations_not_converged"] == 0 and o["leak_seconds_total"] == 0 and o["revocation_lag_p95_s"] <= 1
    assert o["pairs"] >= 9 and result["sync"]["drive_restored"] is True
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["sync"]["overall"] == o
    events = [json.loads(x)["event"] for x in (tmp_path / "r" / "run.jsonl").read_text().splitlines()]
    assert events.count("change") == len(result["sync"]["changes"]) and "probe" in events
    assert "revocation lag" in (tmp_path / "r" / "report.md").read_text()
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("tests", "0")) == len(result["sync"]["pairs"])
    assert suite.get("failures") == "0"
    after = server.get("/_sim/stats").json()
    assert (after["snapshot"], after["clock"], after["changes"]) == (before["snapshot"], before["clock"], 0)


def test_a_gate_that_holds_exits_1(server: ServerProc, tmp_path: Path) -> None:
    code, _, err = _sync(server, tmp_path / "g", "--scenario", "content", "--fail-on", "lag_p95_s[new-version]>=0")
    assert code == 1, err


def test_a_target_that_does_not_answer_exits_3_with_no_lag_figure(server: ServerProc, tmp_path: Path) -> None:
    code, _, err = _sync(server, tmp_path / "e", target=f"http://127.0.0.1:{free_port()}")
    assert code == 3, err
    metrics = json.loads((tmp_path / "e" / "metrics.json").read_text())
    assert metrics["status"]["state"] == "failed" and metrics["sync"]["pairs"] == []
    assert metrics["sync"]["overall"]["revocation_lag_p95_s"] is None


def test_a_drive_with_changes_is_refused_without_reset_first(server: ServerProc, tmp_path: Path) -> None:
    body = {"path": "/rd", "subject": {"kind": "user", "id": "u004"}, "actions": ["preview"]}
    assert server.post("/api/permissions/grants", json=body).status_code == 201
    code, _, err = _sync(server, tmp_path / "u", "--scenario", "content")
    assert code == 2 and "--reset-first" in err
    code, _, err = _sync(server, tmp_path / "u2", "--scenario", "content", "--reset-first")
    assert code == 0, err
    assert server.get("/_sim/stats").json()["changes"] == 0


def test_ctrl_c_resets_the_drive(server: ServerProc, tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    from tests.support.clirun import DRIVEBENCH, clean_env

    before = server.get("/_sim/stats").json()
    proc = subprocess.Popen(
        [
            str(DRIVEBENCH), "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
            "--target", server.url, "--token", server.token(EVAL_SERVICE), "--scenario", "all",
            "--deadline", "30", "--poll", "0.1", "--out", str(tmp_path / "c"),
        ],
        env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while server.get("/_sim/stats").json()["changes"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the run has changed the drive
    assert server.get("/_sim/stats").json()["changes"] > 0
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    after = server.get("/_sim/stats").json()
    assert (after["snapshot"], after["clock"], after["changes"]) == (before["snapshot"], before["clock"], 0), err


def test_conformance_passes_every_applicable_case_on_the_simulator(server: ServerProc, tmp_path: Path) -> None:
    code, out, err = _sync(server, tmp_path / "k", "--scenario", "conformance", "--json", "-")
    assert code == 0, err
    verdicts = {c["case"]: c["verdict"] for c in json.loads(out)["sync"]["cases"]}
    assert len(verdicts) == 11 and set(verdicts.values()) == {"pass"}, verdicts


def test_the_target_may_be_a_profile(server: ServerProc, tmp_path: Path) -> None:
    profile = tmp_path / "target.toml"
    profile.write_text(
        f'[request]\nurl = "{server.url}/api/mcp/recall"\n[auth]\ntoken = "{server.token(EVAL_SERVICE)}"\n',
        encoding="utf-8",
    )
    done = run(
        "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
        "--target-profile", str(profile), "--scenario", "content", "--deadline", "5", "--poll", "0.1",
        "--out", str(tmp_path / "p"), "--json", "-",
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sync"]["overall"]["pairs"] >= 3 and result["sync"]["overall"]["not_converged"] == 0
