"""``drivebench eval sync`` end to end: a real ``drivebench serve`` (uvicorn, Casbin, FAISS) as drive and target,
the CLI in a subprocess: exit codes, metrics.json, JUnit, and the drive back at its starting state."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import typer
from click.testing import CliRunner

from drivebench.drive.tokens import EVAL_SERVICE
from drivebench.evaluator.sync.scenario import change_classes
from drivebench.server.process import free_port
from tests.support.clirun import DRIVEBENCH, clean_env, run, run_in_process
from tests.support.failopen import serve_app
from tests.support.serverproc import ServerProc
from tests.support.sync import RecallProxy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    proc = ServerProc(tmp_path_factory.mktemp("sync") / "data")
    proc.start()
    yield proc
    proc.stop()


def _sync_args(server: ServerProc, out: Path, *extra: str, target: str | None = None) -> list[str]:
    return [
        "eval", "sync",
        "--drive", server.url, "--drive-token", server.token("admin"),
        "--target", target or server.url, "--token", server.token(EVAL_SERVICE),
        "--deadline", "5", "--poll", "0.1", "--out", str(out), *extra,
    ]  # fmt: skip


def _sync(server: ServerProc, out: Path, *extra: str, target: str | None = None) -> tuple[int, str, str]:
    return run_in_process(*_sync_args(server, out, *extra, target=target))


def test_revocations_on_the_simulator_exit_0_with_every_figure_written(server: ServerProc, tmp_path: Path) -> None:
    before = server.get("/_sim/stats").json()
    args = _sync_args(server, tmp_path / "r", "--json", "-", "--junit", str(tmp_path / "j.xml"))
    done = run(*args, timeout=300)  # the real console script, in a process of its own
    code, out, err = done.returncode, done.stdout, done.stderr
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
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "Revocation lag p95 s" in page
    assert 'id="verdict-headline" data-state="passed">Verdict: passed (exit 0): every revocation took effect' in page
    revoking = {c for c, v in change_classes().items() if v.kind == "revoke"}
    assert set(result["sync"]["classes"]) == revoking  # every revoking class, each named in the page's table
    assert f"0 of {o['revocation_pairs']} revocations left open (≤ " in err  # the terminal reads it with its bound
    for cls, figures in result["sync"]["classes"].items():
        assert f'<td class="text">{cls}</td><td>revoke</td>' in page, cls
        # every revoking class on its own, not only over all of them: reflected within a second, nothing leaked
        assert figures["not_converged"] == 0 and figures["leak_seconds"] == 0 and figures["lag_p95_s"] <= 1, cls
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


GRANT_ADDED = 'changes = [{ class = "grant-added" }]\n'


def _grants(server: ServerProc) -> list[dict]:
    return sorted(server.get("/api/v1/directory").json()["grants"], key=lambda g: g["grant_id"])


def _start_sync(server: ServerProc, tmp_path: Path, target: str) -> subprocess.Popen[str]:
    """``eval sync`` of one grant-added change against a target that never syncs: the run waits out its 30 s
    deadline with the added grant on the drive, until the test stops it."""
    scenario = tmp_path / "grant.toml"
    scenario.write_text(GRANT_ADDED, encoding="utf-8")
    proc = subprocess.Popen(
        [
            DRIVEBENCH, "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
            "--target", target, "--token", server.token(EVAL_SERVICE), "--scenario", str(scenario),
            "--deadline", "30", "--poll", "0.1", "--out", str(tmp_path / "c"),
        ],
        env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    before = len(_grants(server))
    deadline = time.monotonic() + 60
    while len(_grants(server)) == before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the run has added its grant
    assert len(_grants(server)) == before + 1, proc.poll()
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_resets_the_drive_and_exits_128_plus_the_signal(
    server: ServerProc, tmp_path: Path, sig: signal.Signals
) -> None:
    """Ctrl-C, a CI runner's SIGTERM and a closed terminal's SIGHUP alike: the grant the run added is gone, the
    drive is back at its snapshot and clock, and the exit code is the shell's 128 + the signal's number."""
    before, grants = server.get("/_sim/stats").json(), _grants(server)
    with serve_app(RecallProxy(server.url, freeze=True).app) as stale:
        proc = _start_sync(server, tmp_path, stale)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {sig.name}" in err and "1 changes undone" in err, err
    assert _grants(server) == grants
    after = server.get("/_sim/stats").json()
    assert (after["snapshot"], after["clock"], after["changes"]) == (before["snapshot"], before["clock"], 0), err


def test_after_sigkill_the_next_run_refuses_and_restore_undoes_the_changes(server: ServerProc, tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the added grant stays, the next run refuses (exit 2) and names --restore, which
    resets the drive and says how many changes it undid."""
    before, grants = server.get("/_sim/stats").json(), _grants(server)
    with serve_app(RecallProxy(server.url, freeze=True).app) as stale:
        proc = _start_sync(server, tmp_path, stale)
        proc.kill()
        proc.communicate(timeout=60)
    assert len(_grants(server)) == len(grants) + 1
    code, _, err = _sync(server, tmp_path / "next", "--scenario", "content")
    assert code == 2 and "--restore" in err, err
    drive = ["--drive", server.url, "--drive-token", server.token("admin")]
    code, out, err = run_in_process("eval", "sync", "--restore", *drive)
    assert code == 0, err
    assert "1 changes undone" in out, out
    assert _grants(server) == grants
    after = server.get("/_sim/stats").json()
    assert (after["snapshot"], after["clock"], after["changes"]) == (before["snapshot"], before["clock"], 0)
    code, out, err = run_in_process("eval", "sync", "--restore", *drive)
    assert code == 0 and "no change to undo" in out, out + err


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
    code, stdout, stderr = run_in_process(
        "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
        "--target-profile", str(profile), "--scenario", "content", "--deadline", "5", "--poll", "0.1",
        "--out", str(tmp_path / "p"), "--json", "-",
    )  # fmt: skip
    assert code == 0, stderr
    result = json.loads(stdout)
    assert result["sync"]["overall"]["pairs"] >= 3 and result["sync"]["overall"]["not_converged"] == 0


class PersonAtTheKeyboard(io.BytesIO):
    """Standard input of ``eval sync --manual``: before each Enter ("\\n") it is asked for, the person makes the
    next change (here: through the drive's API, as an administrator would with the drive's own tools)."""

    def __init__(self, changes: list[Callable[[], None]]) -> None:
        super().__init__()
        self.changes, self.entered = list(changes), 0

    def _line(self) -> bytes:
        if not self.changes:
            return b""  # end of input: the run would see EOF, never an Enter nobody pressed
        self.changes.pop(0)()
        self.entered += 1
        return b"\n"

    def read(self, size: int | None = -1) -> bytes:
        return b"" if size == 0 else self._line()

    def read1(self, size: int = -1) -> bytes:
        return b"" if size == 0 else self._line()


def _invoke(args: list[str], stdin: io.BytesIO | str | None = None) -> tuple[int, str]:
    from drivebench.cli.main import app

    env = {"DRIVEBENCH_CONFIG": "none", "DRIVEBENCH_HISTORY": "none", "COLUMNS": "200", "NO_COLOR": "1"}
    # click's runner (typer's wraps only text input): standard input may be a stream of one's own
    done = CliRunner().invoke(typer.main.get_command(app), args, input=stdin, env=env)
    return done.exit_code, done.output + (str(done.exception) if done.exception else "")


def manual_example() -> str:
    """The worked example of docs/sync.md ("Against a real drive"): the page shows what this test runs."""
    from tests.support.docs import code_blocks

    (block,) = code_blocks("sync.md", "Against a real drive", "toml")
    return block


def test_manual_needs_no_drive_and_probes_after_each_enter(server: ServerProc, tmp_path: Path) -> None:
    """A real drive has no admin API for drivebench: ``--manual`` without --drive/--drive-token prints each change,
    waits for Enter (the person makes it meanwhile), then probes the target until it reflects the change."""
    scenario = tmp_path / "manual.toml"
    scenario.write_text(manual_example(), encoding="utf-8")
    deny = {"path": "/rd/Code Review Guidelines.md", "subject": {"kind": "user", "id": "u001"}}
    person = PersonAtTheKeyboard(
        [
            lambda: server.post("/api/v1/files/d0003/trash").raise_for_status(),
            lambda: server.post(
                "/api/permissions/grants", json={**deny, "actions": ["preview"], "effect": "deny"}
            ).raise_for_status(),
        ]
    )
    try:
        code, output = _invoke(
            [
                "eval", "sync", "--manual", "--scenario", str(scenario),
                "--target", server.url, "--token", server.token(EVAL_SERVICE),
                "--deadline", "5", "--poll", "0.1", "--out", str(tmp_path / "m"),
            ],
            person,
        )  # fmt: skip
    finally:
        server.post("/_sim/reset")  # a manual run never resets the drive: the person changed it
    assert code == 0, output
    assert person.entered == 2 and "Missing option" not in output
    metrics = json.loads((tmp_path / "m" / "metrics.json").read_text())
    assert metrics["sync"]["drive"] is None and metrics["sync"]["drive_restored"] is None
    pairs = {p["class"]: p for p in metrics["sync"]["pairs"]}
    assert set(pairs) == {"trashed", "deny-added"}
    for cls, doc in (("trashed", "d0003"), ("deny-added", "d0007")):
        p = pairs[cls]
        assert p["testable"] and p["converged"] and p["principal"] == "u001" and p["doc_id"] == doc, p
        assert 0 <= p["lag_s"] <= 5
    changes = metrics["sync"]["changes"]
    assert [c["detail"] for c in changes] == [
        "trash /company/Information Security Policy.md",
        "deny u001 preview on /rd/Code Review Guidelines.md (sharing settings, remove access)",
    ]


def test_manual_enter_without_the_change_is_an_open_leak(server: ServerProc, tmp_path: Path) -> None:
    """Enter pressed without the change made: the target still returns the document, so the revocation is an
    open leak (exit 1), never a converged pair."""
    scenario = tmp_path / "manual.toml"
    scenario.write_text(manual_example().split("\n\n")[0] + "\n", encoding="utf-8")
    code, output = _invoke(
        [
            "eval", "sync", "--manual", "--scenario", str(scenario),
            "--target", server.url, "--token", server.token(EVAL_SERVICE),
            "--deadline", "1", "--poll", "0.1", "--out", str(tmp_path / "n"),
        ],
        "\n",
    )  # fmt: skip
    assert code == 1, output
    (pair,) = json.loads((tmp_path / "n" / "metrics.json").read_text())["sync"]["pairs"]
    assert pair["testable"] and pair["converged"] is False and pair["lag_s"] is None


@pytest.mark.parametrize(
    ("given", "missing"),
    [([], "--drive and --drive-token"), (["--drive", "http://127.0.0.1:9"], "--drive-token")],
)
def test_without_manual_the_drive_is_required(tmp_path: Path, given: list[str], missing: str) -> None:
    code, output = _invoke(
        ["eval", "sync", *given, "--target", "http://127.0.0.1:9", "--token", "t", "--out", str(tmp_path / "x")]
    )
    assert code == 2, output
    assert f"missing {missing}" in output and "--manual" in output
    assert not (tmp_path / "x").exists()  # refused before anything ran


# a target that never syncs is waited on for the whole deadline: short, where the deadline is not the point
STALE = "0.5"
FEW_REVOCATIONS = 'changes = [{ class = "trashed" }, { class = "deny-added" }, { class = "trashed" }]\n'


def test_allow_not_converged_exits_0_and_still_reports_the_leak(server: ServerProc, tmp_path: Path) -> None:
    """A target whose index never syncs: every revocation stays open. Without the flag that is exit 1; with
    --allow-not-converged exit 0, and the leak is still in metrics.json, report.md, report.html and JUnit."""
    scenario = tmp_path / "few.toml"
    scenario.write_text(FEW_REVOCATIONS, encoding="utf-8")
    with serve_app(RecallProxy(server.url, freeze=True).app) as stale:
        code, _, err = _sync(
            server, tmp_path / "strict", "--scenario", str(scenario), "--deadline", STALE, target=stale
        )
        assert code == 1, err
        code, out, err = _sync(
            server, tmp_path / "a", "--scenario", str(scenario), "--deadline", STALE, "--allow-not-converged",
            "--json", "-", "--junit", str(tmp_path / "a.xml"), target=stale,
        )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    o = result["sync"]["overall"]
    assert result["status"]["state"] == "ok"
    assert o["revocations_not_converged"] == o["revocation_pairs"] >= 3
    assert (
        o["revocation_lag_p95_s"] == float(STALE) and o["revocation_lag_is_lower_bound"]
    )  # the deadline, a lower bound
    assert o["leak_seconds_total"] >= o["revocations_not_converged"] * float(STALE)  # the whole deadline each
    for cls in ("trashed", "deny-added"):
        assert result["sync"]["classes"][cls]["not_converged"] == result["sync"]["classes"][cls]["n"] >= 1
    for name in ("report.md", "report.html"):
        text = (tmp_path / "a" / name).read_text()
        assert f"LEAK: still returned after {STALE} s: trashed" in text and "deny-added" in text, name
    suite = ET.parse(tmp_path / "a.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) == o["revocations_not_converged"]
    after = server.get("/_sim/stats").json()
    assert after["changes"] == 0  # reset as always


@pytest.mark.parametrize(
    ("fail_after", "first_change"),
    [(13, "converged"), (7, "unanswered")],  # 1 preflight + 6 probes before the first change (+ 6 after it)
)
def test_a_target_that_breaks_mid_run_exits_3_with_no_lag_figure(
    server: ServerProc, tmp_path: Path, fail_after: int, first_change: str
) -> None:
    """The target answers the preflight and the first change (or only the probes before it), then every call
    fails: more failures than --max-error-rate allows is exit 3, and the run's figures are "not measured",
    never a lag; a pair the target never answered after the change is not testable, never a leak."""
    scenario = tmp_path / "few.toml"
    scenario.write_text(FEW_REVOCATIONS, encoding="utf-8")
    proxy = RecallProxy(server.url, fail_after=fail_after)
    with serve_app(proxy.app) as breaking:
        code, out, err = _sync(
            server, tmp_path / "b", "--scenario", str(scenario), "--deadline", "1", "--max-error-rate", "0.2",
            "--json", "-", target=breaking,
        )  # fmt: skip
    assert code == 3, err
    assert proxy.forwarded == fail_after and proxy.failed >= 4  # it did answer, then broke
    result = json.loads(out)
    assert result["status"]["state"] == "failed" and "target calls failed" in result["status"]["reason"]
    assert result["sync"]["errors"]["rate"] > 0.2
    o = result["sync"]["overall"]
    for key in ("revocation_lag_p50_s", "revocation_lag_p95_s", "revocation_lag_max_s"):
        assert o[key] is None, (key, o)
    for cls, s in result["sync"]["classes"].items():
        assert s["lag_p50_s"] is s["lag_p95_s"] is s["lag_max_s"] is None, (cls, s)
    assert all(v is None for k, v in result["metrics"].items() if "lag" in k), result["metrics"]
    pairs = result["sync"]["pairs"]
    first = [p for p in pairs if p["change"] == 1]
    if first_change == "converged":  # observed before the break: kept in the pairs, for replay
        assert first and all(p["converged"] and p["lag_s"] is not None for p in first), first
    else:
        assert first and all(not p["testable"] and p["reason"].endswith("after the change") for p in first), first
        assert result["sync"]["overall"]["revocations_not_converged"] == 0  # no leak was seen, none reported
    later = [p for p in pairs if p["change"] > 1]
    assert later and all(not p["testable"] and p["reason"].endswith("before the change") for p in later), later
    report = (tmp_path / "b" / "report.md").read_text()
    assert "the run failed" in report and "not measured" in report and "LEAK" not in report
    assert server.get("/_sim/stats").json()["changes"] == 0


def test_open_leaks_fail_every_lag_gate_and_are_printed_first(server: ServerProc, tmp_path: Path) -> None:
    """Revocations that never took effect count as at least the deadline in every lag figure and fail a lag gate
    whatever its threshold (10 s here, with a 0.5 s deadline), also with --allow-not-converged; the terminal, the
    verdict and report.html lead with how many never took effect."""
    scenario = tmp_path / "few.toml"
    scenario.write_text(FEW_REVOCATIONS, encoding="utf-8")
    with serve_app(RecallProxy(server.url, freeze=True).app) as stale:
        code, out, err = _sync(
            server, tmp_path / "g", "--scenario", str(scenario), "--deadline", STALE, "--allow-not-converged",
            "--fail-on", "revocation_lag_p95_s>10", "--fail-on", "lag_max_s[trashed]>=100", target=stale,
        )  # fmt: skip
    assert code == 1, out + err
    metrics = json.loads((tmp_path / "g" / "metrics.json").read_text())
    n = metrics["sync"]["overall"]["revocations_not_converged"]
    assert n >= 3
    first = out.splitlines()[0]
    assert first == f"{n} revocations never took effect within {STALE} s (open leaks)", out
    gates = {g["expr"]: g for g in metrics["gates"]}
    for expr in ("revocation_lag_p95_s>10", "lag_max_s[trashed]>=100"):
        assert gates[expr]["failed"] and "never took effect" in gates[expr]["message"], gates[expr]
    assert metrics["verdict"]["exit_code"] == 1
    assert (
        f"Verdict: FAILED (exit 1): revocation_lag_p95_s is at least {STALE} s with no upper bound: {n} revocations"
        in err
    )
    page = (tmp_path / "g" / "report.html").read_text()
    assert 'data-state="failed">Verdict: FAILED (exit 1)' in page
    assert page.index(f"{n} revocations never took effect") < page.index("Per change class")
    assert f"≥{STALE}" in page and f"LEAK: never took effect within {STALE} s" in page
    # the per-pair rows name the document by its drive path, not only its id
    pair = metrics["sync"]["pairs"][0]
    assert pair["path"] and pair["path"].startswith("/") and f"{pair['path']} ({pair['doc_id']})" in page


def test_a_failed_conformance_run_says_which_cases_failed(server: ServerProc, tmp_path: Path) -> None:
    """A target that never syncs fails the cases whose ACL changes after the documents were indexed: exit 1, and
    the verdict line names each failed case and what the target did wrong."""
    with serve_app(RecallProxy(server.url, freeze=True).app) as stale:
        code, out, err = _sync(server, tmp_path / "k", "--scenario", "conformance", "--deadline", STALE, target=stale)
    assert code == 1, out + err
    failed = [c["case"] for c in json.loads((tmp_path / "k" / "metrics.json").read_text())["sync"]["cases"]
              if c["verdict"] == "fail"]  # fmt: skip
    assert failed
    (verdict,) = [line for line in err.splitlines() if line.startswith("Verdict:")]
    assert verdict.startswith(f"Verdict: FAILED (exit 1): {len(failed)} conformance case"), verdict
    assert all(case in verdict for case in failed), verdict


def _path_profile(server: ServerProc, tmp_path: Path, ids: str) -> Path:
    """A target that names documents by their drive path (the simulator's recall, its ``path`` read as the id)."""
    profile = tmp_path / "paths.toml"
    profile.write_text(
        f'[request]\nurl = "{server.url}/api/mcp/recall"\n[auth]\ntoken = "{server.token(EVAL_SERVICE)}"\n'
        f'[response]\ndoc_id = "path"\n{ids}',
        encoding="utf-8",
    )
    return profile


@pytest.mark.parametrize("corpus", ["seed", "dir"])
def test_ids_map_as_in_eval_run_by_the_profile_and_corpus(server: ServerProc, tmp_path: Path, corpus: str) -> None:
    """A target that returns paths: with [ids] match = "path" and --corpus (a built-in name or a corpus directory)
    every pair is measured and converges, a document the run moves or trashes included."""
    from drivebench.corpora.builtin import resolve_corpus

    scenario = tmp_path / "few.toml"
    scenario.write_text(FEW_REVOCATIONS.replace("]\n", ', { class = "moved-out" }]\n'), encoding="utf-8")
    given = "seed" if corpus == "seed" else str(resolve_corpus("seed"))
    code, stdout, stderr = run_in_process(
        "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
        "--target-profile", str(_path_profile(server, tmp_path, '[ids]\nmatch = "path"\n')), "--corpus", given,
        "--scenario", str(scenario), "--deadline", "5", "--poll", "0.1", "--out", str(tmp_path / "p"), "--json", "-",
    )  # fmt: skip
    assert code == 0, stderr
    sync = json.loads(stdout)["sync"]
    assert sync["overall"]["not_testable"] == 0 and sync["overall"]["pairs"] >= 4, sync["overall"]
    assert {p["class"] for p in sync["pairs"]} == {"trashed", "deny-added", "moved-out"}
    assert all(p["converged"] for p in sync["pairs"])
    assert sync["ids"]["match"] == "path" and sync["ids"]["unmapped"] == 0 and sync["ids"]["results"] > 0


def test_ids_it_cannot_recognise_are_named_with_the_mapping_options(server: ServerProc, tmp_path: Path) -> None:
    """The same target without [ids]: its paths are no doc ids of the drive. Nothing is measured (exit 3) and the
    run says the ids did not map, with an example and the options that map them."""
    scenario = tmp_path / "few.toml"
    scenario.write_text(FEW_REVOCATIONS, encoding="utf-8")
    code, stdout, stderr = run_in_process(
        "eval", "sync", "--drive", server.url, "--drive-token", server.token("admin"),
        "--target-profile", str(_path_profile(server, tmp_path, "")), "--scenario", str(scenario),
        "--deadline", "1", "--poll", "0.1", "--out", str(tmp_path / "u"),
    )  # fmt: skip
    assert code == 3, stderr
    text = stdout + stderr
    assert "results carry ids that map to no document by doc_id" in text and "'/" in text, text
    assert '[ids] match = "path" or "name"' in text and "--corpus" in text and "map file" in text, text
    metrics = json.loads((tmp_path / "u" / "metrics.json").read_text())
    assert "map to no document" in metrics["status"]["reason"]
    assert "map to no document" in (tmp_path / "u" / "report.html").read_text()
