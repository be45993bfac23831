"""ACL-semantics conformance (``--scenario conformance``): planted cases in a folder of the run's own
(``/drivebench-conformance-<run>``, which inherits nothing), each judged once the target has had the deadline
to sync. Cases and the bug each mirrors are data (``scenarios/conformance_cases.toml``); their setup is here.

Phase 1 sets every ACL before the document it governs is uploaded (so even a crawler that trusts modification
times sees each document with its final ACL), waits until the target returns what it should, then phase 2
makes the ACL-only changes (an ancestor's grant removed, a membership ended, a grant expired by the clock)
and waits again. A case passes when every expectation holds; it is "not testable" when its control (someone
who must see the document) never sees it, and "not applicable" when the drive has no principal for it (no
department nested three deep, say). The drive's own ``/access`` must agree with every expectation: a case
the drive itself answers differently is reported as an error of the case, never judged on the target."""

from __future__ import annotations

import asyncio
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.evaluator.sync.drive_client import DriveClient, DriveError
from drivebench.evaluator.sync.runner import SyncRun, SyncRunner, _iso
from drivebench.evaluator.sync.scenario import Scenario, _dir
from drivebench.formats.corpus import SECRET_LEVELS


@dataclass
class Expect:
    principal: str
    visible: bool
    control: bool = False
    seen: bool | None = None
    drive_says: bool | None = None


@dataclass
class Case:
    name: str
    wrong: str
    bug: str
    phase: int
    doc_id: str | None = None
    token: str = ""
    expects: list[Expect] = field(default_factory=list)
    change: Callable[[DriveClient], Any] | None = None  # phase 2
    verdict: str = "pending"
    note: str | None = None
    seen_before: bool | None = None  # phase 2: the principal who loses access saw it before the change


def case_specs() -> dict[str, dict[str, Any]]:
    return tomllib.loads((_dir() / "conformance_cases.toml").read_text(encoding="utf-8"))


def _user(kind_id: str) -> dict[str, str]:
    return {"kind": "user", "id": kind_id}


@dataclass
class Cast:
    """The principals the cases need, chosen from the drive's directory."""

    x: str  # the one who should (or should no longer) see
    y: str  # a colleague in the same department (the control)
    dept: str
    project: str | None
    high: str | None  # a user with a higher clearance than x (the clearance case's control)
    nested: tuple[str, str] | None  # (user, department three levels above theirs)
    spare: str | None = None  # a user no other case names (moved into a planted department chain)


def choose_cast(directory: dict[str, Any]) -> Cast:
    users = directory["users"]
    parents = {d["id"]: d["parent"] for d in directory["departments"]}
    level = {u["user_id"]: SECRET_LEVELS.index(u["clearance"]) for u in users}

    def current_project(u: dict[str, Any]) -> str | None:
        return next((p["project_id"] for p in u["projects"] if p["valid_until"] is None), None)

    ranked = sorted(users, key=lambda u: (current_project(u) is None, level[u["user_id"]] >= 3, u["user_id"]))
    for x in ranked:
        peers = [u for u in users if u["department"] == x["department"] and u["user_id"] != x["user_id"]]
        if not peers:
            continue
        high = next((u["user_id"] for u in users if level[u["user_id"]] > level[x["user_id"]]), None)
        nested = None
        for u in users:
            d, up = u["department"], 0
            while parents.get(d) is not None and up < 3:
                d, up = parents[d], up + 1
            if up == 3:
                nested = (u["user_id"], d)
                break
        named = {x["user_id"], peers[0]["user_id"], high}
        spare = next((u["user_id"] for u in users if u["user_id"] not in named), None)
        return Cast(x["user_id"], peers[0]["user_id"], x["department"], current_project(x), high, nested, spare)
    raise DriveError("the drive has no two users in one department: conformance needs them")


def plant(drive: DriveClient, run: str, cast: Cast, now: datetime) -> tuple[list[Case], str, str]:
    """Folders and grants first, documents last; returns the cases, the control document and its token."""
    specs = case_specs()
    root = f"/drivebench-conformance-{run}"
    drive.create_folder(root, break_inheritance=True)
    cases: list[Case] = []
    uploads: list[tuple[Case | None, str, str | None]] = []  # (case, folder, level)

    def grant(path: str, subject: dict[str, Any], actions: list[str], **kw: Any) -> dict[str, Any]:
        return drive.add_grant(path, subject, actions, **kw)

    def new(name: str, folder: str, level: str | None = None) -> Case:
        spec = specs[name]
        c = Case(name, spec["wrong"], spec["bug"], int(spec.get("phase", 1)))
        cases.append(c)
        uploads.append((c, folder, level))
        return c

    x, y, dept = cast.x, cast.y, {"kind": "department", "id": cast.dept}
    f = f"{root}/deny-user"
    drive.create_folder(f)
    grant(f, dept, ["preview"])
    grant(f, _user(x), ["preview"], effect="deny")
    new("deny-user-under-department-allow", f).expects = [Expect(x, False), Expect(y, True, control=True)]

    f = f"{root}/deny-folder"
    drive.create_folder(f)
    drive.create_folder(f"{f}/sub")
    grant(f, dept, ["preview"])
    grant(f"{f}/sub", _user(x), ["preview"], effect="deny")
    new("deny-folder-under-allowed-parent", f"{f}/sub").expects = [Expect(x, False), Expect(y, True, control=True)]

    # the drive's upload implies preview (uploaders see what they put in a folder), so the grant without
    # preview is list: the name, never the content
    f = f"{root}/list-only"
    drive.create_folder(f)
    grant(f, _user(x), ["list"])
    grant(f, _user(y), ["preview"])
    new("list-only-grant", f).expects = [Expect(x, False), Expect(y, True, control=True)]

    f = f"{root}/grandparent"
    for p in (f, f"{f}/a", f"{f}/a/b"):
        drive.create_folder(p)
    gone = grant(f, _user(x), ["preview"])
    grant(f"{f}/a", _user(y), ["preview"])
    c = new("grandparent-acl-change", f"{f}/a/b")
    c.expects = [Expect(x, False), Expect(y, True, control=True)]
    c.change = lambda d, gid=gone["grant_id"]: d.remove_grant(gid)

    f = f"{root}/broken"
    drive.create_folder(f)
    drive.create_folder(f"{f}/sub", break_inheritance=True)
    grant(f, _user(x), ["preview"])
    grant(f"{f}/sub", _user(y), ["preview"])
    new("broken-inheritance", f"{f}/sub").expects = [Expect(x, False), Expect(y, True, control=True)]

    f = f"{root}/nested"
    drive.create_folder(f)
    c = new("nested-department", f)
    nested = cast.nested
    if nested is None and cast.spare is not None:  # plant a chain of four departments, the spare user at its foot
        chain = [f"conf{run}d{k}" for k in range(4)]
        for parent, child in zip([None, *chain], chain, strict=False):
            drive.create_department(child, parent)
        drive.patch_user(cast.spare, department=chain[-1])
        nested = (cast.spare, chain[0])
    if nested is not None:
        member, top = nested
        grant(f, {"kind": "department", "id": top}, ["preview"])
        c.expects = [Expect(member, True)] + ([Expect(x, False)] if member != x else [])
    else:
        c.verdict, c.note = "not applicable", "no department nested three deep and no spare user to plant one"

    f = f"{root}/nobody"
    drive.create_folder(f)
    grant(f, {"kind": "role", "id": f"zq-nobody-{run}"}, ["preview"])
    new("nonexistent-subject", f).expects = [Expect(x, False), Expect(y, False)]

    f = f"{root}/project"
    drive.create_folder(f)
    c = new("ended-membership", f)
    if cast.project is not None:
        grant(f, {"kind": "project", "id": cast.project}, ["preview"])
        c.expects = [Expect(x, False)]
        c.change = lambda d, p=cast.project: d.end_membership(p, x)
    else:
        c.verdict, c.note = "not applicable", f"{x} is in no project"

    f = f"{root}/expiring"
    drive.create_folder(f)
    grant(f, _user(x), ["preview"], valid_until=(now + timedelta(minutes=10)).isoformat())
    grant(f, _user(y), ["preview"])
    c = new("expired-grant", f)
    c.expects = [Expect(x, False), Expect(y, True, control=True)]
    c.change = lambda d: d.advance_clock(11)

    f = f"{root}/clearance"
    drive.create_folder(f)
    c = new("clearance-below-level", f)
    if cast.high is not None:
        grant(f, _user(x), ["preview"])
        grant(f, _user(cast.high), ["preview"])
        c.expects = [Expect(x, False), Expect(cast.high, True, control=True)]
    else:
        c.verdict, c.note = "not applicable", "no user has a higher clearance than the cast"

    f = f"{root}/no-grant"
    drive.create_folder(f)
    new("no-grant", f).expects = [Expect(x, False), Expect(y, False)]

    f = f"{root}/control"
    drive.create_folder(f)
    grant(f, _user(x), ["preview"])
    grant(f, _user(y), ["preview"])

    levels: dict[str, str | None] = {c.name: None for c in cases}
    x_level = next(SECRET_LEVELS.index(u["clearance"]) for u in drive.directory()["users"] if u["user_id"] == x)
    levels["clearance-below-level"] = SECRET_LEVELS[min(3, x_level + 1)]
    for i, (case, folder, _) in enumerate(uploads):
        assert case is not None
        case.token = f"zqconf{run}c{i}"
        body = f"# conformance {case.name}\n\n{case.token} planted case {case.name}\n".encode()
        case.doc_id = drive.upload(folder, f"{case.name}.md", body, level=levels[case.name])["doc_id"]
    control_token = f"zqconf{run}control"
    control = drive.upload(f, "control.md", f"# conformance control\n\n{control_token} control\n".encode())["doc_id"]
    return cases, control, control_token


async def run_conformance(runner: SyncRunner, scenario: Scenario) -> SyncRun:
    drive, deadline, poll = runner.drive, runner.config.deadline_s, runner.config.poll_s
    assert drive is not None, "the conformance scenario plants its documents through the drive's API"
    out = runner.result = SyncRun(scenario.name, started_at=_iso())
    directory = await asyncio.to_thread(drive.directory)
    cast = choose_cast(directory)
    now = datetime.fromisoformat(directory["at"])
    cases, control, control_token = await asyncio.to_thread(plant, drive, runner.run_id, cast, now)
    await asyncio.to_thread(runner.learn_drive)  # the planted documents, for a target that returns paths
    live = [c for c in cases if c.verdict == "pending"]
    runner.say(f"planted {len(cases)} cases under /drivebench-conformance-{runner.run_id} ({len(live)} judged)")

    async def seen(user: str, case: Case) -> bool | None:
        found, _, failed = await runner._returns(user, [case.token], case.doc_id or "")
        return True if found else (None if failed else False)

    async def wait(until: Callable[[], bool], refresh: Callable[[], Any]) -> None:
        end = time.monotonic() + deadline
        while True:
            await refresh()
            if until() or time.monotonic() >= end:
                return
            await asyncio.sleep(poll)

    control_case = Case("control", "", "", 1, control, control_token, [Expect(cast.x, True), Expect(cast.y, True)])

    async def refresh(which: list[Case]) -> None:
        for c in which:
            results = await asyncio.gather(*(seen(e.principal, c) for e in c.expects))
            for e, r in zip(c.expects, results, strict=True):
                e.seen = r

    def holds(which: list[Case], visible_only: bool) -> bool:
        return all(e.seen == e.visible for c in which for e in c.expects if e.visible or not visible_only)

    # phase 1: the target has synced when everyone who should see a planted document sees it
    phase2 = [c for c in live if c.phase == 2]
    for c in phase2:  # before the change, the one who loses access must see it (else: not testable)
        for e in c.expects:
            if not e.visible and not e.control:
                e.visible = True
    await wait(lambda: holds([control_case, *live], True), lambda: refresh([control_case, *live]))
    for c in phase2:
        c.seen_before = all(e.seen for e in c.expects if not e.control)
        for e in c.expects:
            if not e.control:
                e.visible = False
    runner.log("conformance-phase", phase=1, control=[e.seen for e in control_case.expects])
    for c in phase2:
        if c.change is not None:
            await asyncio.to_thread(c.change, drive)
    runner.log("conformance-phase", phase=2, applied_at=_iso())
    await wait(lambda: holds(live, False), lambda: refresh(live))
    truth = {c.doc_id: await asyncio.to_thread(drive.access, c.doc_id or "") for c in live}
    for c in live:
        for e in c.expects:
            e.drive_says = e.principal in truth[c.doc_id]
        if any(e.drive_says != e.visible for e in c.expects):
            c.verdict, c.note = "error", "the drive itself answers differently than the case expects"
        elif not all(e.seen for e in control_case.expects):
            c.verdict, c.note = "not testable", "the target never returned the control document"
        elif any(e.control and not e.seen for e in c.expects):
            c.verdict, c.note = "not testable", "the control principal never saw the document"
        elif c.phase == 2 and not c.seen_before:
            c.verdict, c.note = "not testable", "the principal never saw the document before the change"
        elif any(e.seen is None for e in c.expects):
            c.verdict, c.note = "not testable", "the target failed to answer"
        elif all(e.seen == e.visible for e in c.expects):
            c.verdict = "pass"
        else:
            c.verdict = "fail"
            c.note = c.wrong
    out.cases = [
        {
            "case": c.name,
            "verdict": c.verdict,
            "wrong": c.wrong,
            "bug": c.bug,
            "phase": c.phase,
            "doc_id": c.doc_id,
            "note": c.note,
            "expectations": [
                {"principal": e.principal, "visible": e.visible, "seen": e.seen, "control": e.control}
                for e in c.expects
            ],
        }
        for c in cases
    ]
    out.requests, out.errors, out.finished_at = runner.requests, runner.errors, _iso()
    return out
