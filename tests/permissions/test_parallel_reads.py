"""Reads run in parallel: no process-wide lock on the recall path. Two recalls meet inside the
per-hit re-check (a barrier both must reach while the other is still in it) and inside the search; a
lock around either would leave one waiting and break the barrier. A write builds the new engine before
it is acknowledged, so the next read finds it ready and sees the change."""

from __future__ import annotations

import threading

from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import Simulator

Q = "项目X的技术方案审批人"


def _two_at_once(sim: Simulator, users: tuple[str, str]) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(user: str) -> None:
        try:
            assert sim.recall(sim.engine.user_principal(user), Q, 10).hits
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return errors


def test_two_recalls_are_inside_the_recheck_at_the_same_time(module_sim: Simulator, monkeypatch) -> None:
    engine = module_sim.engine
    real = engine.decide_doc
    barrier = threading.Barrier(2, timeout=10)
    met: list[bool] = []

    def meeting(*args, **kwargs) -> bool:
        if not met:
            met.append(True)
            barrier.wait()  # the other recall must get here while this one waits
        elif len(met) == 1:
            met.append(True)
            barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "decide_doc", meeting)
    assert _two_at_once(module_sim, ("u001", "u008")) == []
    assert len(met) == 2 and not barrier.broken


def test_two_recalls_are_inside_the_search_at_the_same_time(module_sim: Simulator, monkeypatch) -> None:
    real = module_sim.retriever.search
    barrier = threading.Barrier(2, timeout=10)

    def meeting(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(module_sim.retriever, "search", meeting)
    assert _two_at_once(module_sim, ("u001", "u008")) == []
    assert not barrier.broken


def test_a_write_builds_the_engine_before_it_is_acknowledged(module_sim: Simulator) -> None:
    before = module_sim.engine
    folder = module_sim.drive.folder_by_path("/projects").folder_id
    module_sim.drive.add_grant(GrantRec("g-par", "user:u012", ["preview"], "allow", folder_id=folder))
    module_sim.sync_index()  # what every write does before it answers
    built = module_sim.policies.built
    assert built is not before and built.policy_version == module_sim.drive.policy_version
    assert built.role_managers is before.role_managers  # a grant change: derived, documents and links reused
    assert module_sim.engine is built  # the next read takes it as it is
    module_sim.drive.remove_grant("g-par")
    module_sim.sync_index()
