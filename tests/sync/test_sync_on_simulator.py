"""``eval sync`` against the simulator's own recall (in process: the drive API through a test client, the
target through the app's ASGI interface). The simulator filters at query time, so every revocation is
reflected by the first probe: no leak second, lags far below a second."""

from __future__ import annotations

import json

from drivebench.evaluator.sync.outputs import summary_lines
from drivebench.evaluator.sync.scenario import change_classes
from drivebench.simulator.backend import Simulator
from tests.support.sync import HidingTarget, run_in_process, simulator_target


def test_every_revoking_class_converges_at_once_and_the_drive_is_restored(fresh_sim: Simulator, tmp_path) -> None:
    before = fresh_sim.stats()["snapshot"], fresh_sim.drive.clock.now()
    result = run_in_process(fresh_sim, "revocations", out_dir=tmp_path)
    sync, o = result["sync"], result["sync"]["overall"]
    assert result["status"]["state"] == "ok", result["status"]
    revoking = {c for c, v in change_classes().items() if v.kind == "revoke"}
    assert set(sync["classes"]) == revoking
    for cls, s in sync["classes"].items():
        assert s["n"] >= 1 and s["not_converged"] == 0 and s["not_testable"] == 0, (cls, s)
        assert s["lag_p95_s"] is not None and s["lag_p95_s"] <= 1.0, (cls, s)
    assert o["leak_seconds_total"] == 0 and o["revocations_not_converged"] == 0
    assert o["revocation_lag_p95_s"] <= 1.0
    assert all(c["error"] is None for c in sync["changes"])
    assert sync["drive_restored"] is True
    assert (fresh_sim.stats()["snapshot"], fresh_sim.drive.clock.now()) == before
    # none left open is not a rate of 0: the count is read with its 95 % upper bound, in every rendering
    n = o["revocation_pairs"]
    said = f"0 of {n} revocations left open (≤ {o['revocations_open_bound'] * 100:.1f} %, 95 %)"
    assert summary_lines(result)[0] == said
    for name in ("report.md", "report.html"):
        assert said in (tmp_path / name).read_text(encoding="utf-8"), name
    assert json.loads((tmp_path / "metrics.json").read_text())["sync"]["classes"]["purged"]["open_leak_bound"] > 0


def test_content_and_grant_classes_converge(fresh_sim: Simulator) -> None:
    result = run_in_process(fresh_sim, "content")
    assert result["status"]["state"] == "ok"
    for cls in ("new-version", "new-document", "grant-added"):
        s = result["sync"]["classes"][cls]
        assert s["n"] >= 1 and s["not_converged"] == 0, (cls, s)


def test_a_pair_the_target_never_returned_is_not_testable_never_a_pass(fresh_sim: Simulator) -> None:
    first = run_in_process(fresh_sim, "revocations")["sync"]["pairs"]
    hidden = {(p["principal"], p["doc_id"]) for p in first if p["class"] == "trashed"}
    assert hidden
    result = run_in_process(fresh_sim, "revocations", HidingTarget(simulator_target(fresh_sim), hidden))
    trashed = [p for p in result["sync"]["pairs"] if p["class"] == "trashed"]
    assert trashed and all(not p["testable"] and p["converged"] is None for p in trashed)
    assert all("never returned" in p["reason"] for p in trashed)
    assert result["sync"]["classes"]["trashed"]["n"] == 0
    assert result["sync"]["classes"]["trashed"]["lag_p95_s"] is None  # not measured, never 0


def test_a_target_that_returns_nothing_measures_nothing(fresh_sim: Simulator) -> None:
    # each change whose setup grant must first reach the target waits the whole deadline for it: a short one
    result = run_in_process(
        fresh_sim, "revocations", HidingTarget(simulator_target(fresh_sim), nothing=True), deadline=0.2
    )
    assert result["status"]["state"] == "failed" and "nothing was measured" in result["status"]["reason"]
    assert result["sync"]["overall"]["pairs"] == 0 and result["sync"]["overall"]["not_testable"] > 0


def test_conformance_passes_every_applicable_case_on_the_simulator(fresh_sim: Simulator) -> None:
    result = run_in_process(fresh_sim, "conformance")
    cases = {c["case"]: c for c in result["sync"]["cases"]}
    assert result["status"]["state"] == "ok", result["status"]
    verdicts = {n: c["verdict"] for n, c in cases.items()}
    assert len(verdicts) == 11 and set(verdicts.values()) == {"pass"}, verdicts  # nested: a planted chain
    assert result["sync"]["drive_restored"] is True


def test_manual_changes_wait_for_the_person_then_probe(fresh_sim: Simulator, tmp_path) -> None:
    """``--manual`` on a drive without an admin API: the person makes the change (here: the test, through the
    drive's own API, when asked), then the pair is probed; nothing is applied by the run itself."""
    from drivebench.evaluator.sync.evaluate import run_sync
    from drivebench.evaluator.sync.runner import SyncConfig
    from drivebench.evaluator.sync.scenario import load_scenario
    from tests.support.sync import drive_client

    f = tmp_path / "manual.toml"
    f.write_text(
        '[[manual]]\nclass = "trashed"\nprincipal = "u001"\ndoc_id = "d0003"\n'
        'queries = ["Information Security Policy"]\ninstruction = "trash the security policy"\n',
        encoding="utf-8",
    )
    asked: list[str] = []

    def person(message: str) -> None:
        asked.append(message)
        drive_client(fresh_sim).trash("d0003")

    result = run_sync(
        None,
        simulator_target(fresh_sim),
        "in-process",
        load_scenario(str(f)),
        SyncConfig(deadline_s=5, poll_s=0.1, manual=True),
        preflight_user="u001",
        wait_for_person=person,
    )
    assert len(asked) == 1 and "trash the security policy" in asked[0]
    (pair,) = result["sync"]["pairs"]
    assert pair["testable"] and pair["converged"] and pair["principal"] == "u001" and pair["doc_id"] == "d0003"
    assert result["status"]["state"] == "ok" and result["sync"]["drive_restored"] is None


class NoVersionTarget:
    """A target whose answers carry no version ids (many RAG APIs return only the document)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    async def recall(self, query, top_k):  # type: ignore[no-untyped-def]
        resp = await self.inner.recall(query, top_k)  # type: ignore[attr-defined]
        for h in resp.hits:
            h.version_id = None
        return resp


def _manual_new_version(fresh_sim: Simulator, tmp_path, target: object) -> dict:
    from drivebench.evaluator.sync.evaluate import run_sync
    from drivebench.evaluator.sync.runner import SyncConfig
    from drivebench.evaluator.sync.scenario import load_scenario
    from tests.support.sync import drive_client

    f = tmp_path / "manual.toml"
    f.write_text(
        '[[manual]]\nclass = "new-version"\nprincipal = "u001"\ndoc_id = "d0003"\n'
        'queries = ["Information Security Policy"]\ninstruction = "upload a new version of the policy"\n',
        encoding="utf-8",
    )

    def person(_message: str) -> None:
        drive_client(fresh_sim).new_version(
            "d0003", "Information Security Policy.md", b"# Information Security Policy\n\nrevised in full\n"
        )

    return run_sync(
        None,
        target,  # type: ignore[arg-type]
        "in-process",
        load_scenario(str(f)),
        SyncConfig(deadline_s=5, poll_s=0.1, manual=True),
        preflight_user="u001",
        wait_for_person=person,
    )


def test_a_manual_new_version_converges_when_the_target_reports_the_new_version(fresh_sim: Simulator, tmp_path) -> None:
    (pair,) = _manual_new_version(fresh_sim, tmp_path, simulator_target(fresh_sim))["sync"]["pairs"]
    assert pair["testable"] and pair["converged"] is True, pair


def test_a_manual_new_version_is_not_testable_on_a_target_without_version_ids(fresh_sim: Simulator, tmp_path) -> None:
    """The manual queries find the old text and the new alike: without version ids the first answer after Enter
    would look converged whether or not the target has the new version; so it is not testable, never a pass."""
    result = _manual_new_version(fresh_sim, tmp_path, NoVersionTarget(simulator_target(fresh_sim)))
    (pair,) = result["sync"]["pairs"]
    assert not pair["testable"] and pair["converged"] is None and "no version ids" in pair["reason"], pair
    assert result["sync"]["classes"]["new-version"]["lag_p95_s"] is None
