"""The ``eval sync`` loop: for each change of the scenario, plan it from the drive's state, check the target
answers as expected before it, apply it through the drive's API, and probe the target as every affected
principal every ``poll_s`` seconds until it reflects the change or ``deadline_s`` passes.

A pair (principal, document) counts only when it can fail: a revocation whose document the target never
returned to that principal before the change is "not testable", never a pass; so is a grant whose document
the target already returned. Who was affected is the drive's own answer (``/access`` before and after).
Target errors are counted (as in ``eval run``) and never become lag figures. The drive is reset to the
corpus it loaded when the run ends, also on Ctrl-C.

A class whose probe is the answer endpoint (``answer-cache``) asks the target's ``answer`` instead of its
recall: the answer shows the document when it cites it, returns it among its results, or states a fact
(``formats.facts``) the asker could know only from it (``metrics.answer_leak``)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.citations import extract_citations
from drivebench.evaluator.idmap import IdMapper, MapStats, is_unmapped
from drivebench.evaluator.metrics.answer_leak import answer_leaks
from drivebench.evaluator.sync.drive_client import DriveClient, DriveError
from drivebench.evaluator.sync.planner import PLANNERS, Plan
from drivebench.evaluator.sync.queries import distinctive_sentence, title_of
from drivebench.evaluator.sync.scenario import ManualChange, Probe, Scenario, change_classes
from drivebench.evaluator.sync.view import DriveView
from drivebench.formats.evalset import EvalQuery, RunHit
from drivebench.formats.facts import CorpusFact
from drivebench.formats.target import TargetError, TargetResponse


class RecallTarget(Protocol):
    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse: ...


class AnswerTarget(Protocol):
    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse: ...


@dataclass(frozen=True)
class SyncConfig:
    deadline_s: float = 120.0
    poll_s: float = 0.5
    top_k: int = 10
    manual: bool = False


@dataclass
class PairResult:
    change: int
    cls: str
    kind: str
    principal: str
    doc_id: str
    applied_at: str | None = None
    converged_at: str | None = None
    lag_s: float | None = None
    leak_s: float | None = None
    converged: bool | None = None
    testable: bool = True
    reason: str | None = None
    queries: list[str] = field(default_factory=list)
    probes: int = 0
    errors: int = 0
    old_versions: list[str] = field(default_factory=list)  # versions the target reported before the change
    name: str | None = None  # the document's file name and drive path, as the drive said before the change
    path: str | None = None
    probe: Probe = "recall"  # the endpoint asked: recall, or answer (cited, returned, or its facts stated)


@dataclass
class ChangeRecord:
    index: int
    cls: str
    detail: str
    applied_at: str | None = None
    error: str | None = None
    pairs: list[PairResult] = field(default_factory=list)
    unaffected: list[str] = field(default_factory=list)  # probed principals the drive says kept their access


@dataclass
class SyncRun:
    scenario: str
    changes: list[ChangeRecord] = field(default_factory=list)
    not_planned: dict[str, int] = field(default_factory=dict)  # class -> changes the drive offered no case for
    not_planned_why: dict[str, str] = field(default_factory=dict)  # class -> why, when not the drive's lack
    requests: int = 0
    errors: int = 0
    drive_restored: bool | None = None
    started_at: str = ""
    finished_at: str = ""
    interrupted: bool = False
    cases: list[dict[str, Any]] | None = None  # the conformance scenario's judged cases


def _iso(t: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if t is None else t, UTC).isoformat(timespec="milliseconds")


class _Log:
    def __init__(self, path: Path | None) -> None:
        self._f = path.open("w", encoding="utf-8") if path is not None else None

    def __call__(self, event: str, **data: Any) -> None:
        if self._f is not None:
            self._f.write(json.dumps({"event": event, "t": _iso(), **data}, ensure_ascii=False, default=str) + "\n")
            self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()


class SyncRunner:
    def __init__(
        self,
        drive: DriveClient | None,
        target: RecallTarget,
        config: SyncConfig,
        *,
        log_path: Path | None = None,
        on_event: Callable[[str], None] | None = None,
        wait_for_person: Callable[[str], None] | None = None,
        id_mapper: IdMapper | None = None,
        answer_target: AnswerTarget | None = None,
        no_answers_why: str | None = None,
        facts: list[CorpusFact] | None = None,
    ) -> None:
        """``id_mapper``: how the target's result ids map to the drive's doc ids (``[ids] match``); with the
        drive's API it also learns every document the drive lists (trashed ones too), before the run and after
        each change, so a document the run uploads or moves maps as well. None with a drive: doc ids, checked
        against the drive's.

        ``answer_target``: what answers the ``answer-cache`` class's questions (None: the class is not
        measured, for ``no_answers_why``); ``facts``: the corpus's facts, whose statement in an answer shows
        their document (None: citations and results alone)."""
        self.drive, self.target, self.config = drive, target, config
        self.answer_target, self.facts = answer_target, facts
        self.no_answers_why = no_answers_why or "the target has no answer endpoint"
        self._answers_checked = answer_target is None
        self.catalog = Catalog()  # the drive's documents by id, name and path: what an answer's citations name
        self._may: dict[str, set[str]] = {}  # user -> documents they may preview (facts judged against it)
        if id_mapper is None and drive is not None:
            id_mapper = IdMapper("doc_id")
        self.id_mapper = id_mapper
        self.id_stats = MapStats()
        self.unmapped_examples: list[str] = []
        self.log = _Log(log_path)
        self.say = on_event or (lambda _msg: None)
        self.wait_for_person = wait_for_person or (lambda _msg: input())
        self.run_id = uuid.uuid4().hex[:6]
        self.requests = 0
        self.errors = 0
        self._qid = 0
        self.result: SyncRun | None = None  # filled as the run goes: a run cut short keeps what it measured
        self.not_planned_why: dict[str, str] = {}  # class -> why it was not measured, when not the drive's lack

    # ------------------------------------------------------------------ probing
    async def _ask(self, user: str, query: str, probe: Probe = "recall") -> TargetResponse | None:
        self._qid += 1
        self.requests += 1
        q = EvalQuery(query_id=f"sync-{self._qid}", query=query, user_id=user)
        try:
            if probe == "answer":
                assert self.answer_target is not None, "an answer probe needs the answer endpoint"
                resp = await self.answer_target.answer(q, self.config.top_k)
            else:
                resp = await self.target.recall(q, self.config.top_k)
        except TargetError as exc:
            self.errors += 1
            self.log("probe", user=user, query=query, probe=probe, error=str(exc), kind=exc.kind)
            return None
        if self.id_mapper is not None:
            resp.hits = [self._map(h) for h in resp.hits]
        hits = [[h.doc_id, h.version_id] for h in resp.hits]
        if probe == "answer":
            self.log("probe", user=user, query=query, probe=probe, hits=hits, answer=resp.answer)
        else:
            self.log("probe", user=user, query=query, hits=hits)
        return resp

    def _answer_shows(self, user: str, resp: TargetResponse, doc: str) -> bool:
        """The answer cites ``doc``, returns it among its results, or states a fact of it the user could know
        from no other document they may preview (``self._may``)."""
        hits = [h.doc_id for h in resp.hits]
        if doc in hits or doc in extract_citations(resp.answer, self.catalog, prefer=hits).cited:
            return True
        owned = [f for f in self.facts or () if doc in f.owner_doc_ids]
        if not owned or not resp.answer:
            return False
        return bool(answer_leaks(resp.answer, owned, self._may.get(user, set()).__contains__))

    async def _answers_missing(self, user: str, query: str) -> str | None:
        """Once a run: why the answer endpoint cannot be asked (None: it answers). Not counted as a probe."""
        if self._answers_checked:
            return None if self.answer_target is not None else self.no_answers_why
        self._answers_checked = True
        assert self.answer_target is not None
        try:
            q = EvalQuery(query_id="sync-answer-preflight", query=query, user_id=user)
            await self.answer_target.answer(q, self.config.top_k)
        except TargetError as exc:
            url = getattr(self.answer_target, "answer_url", "the answer endpoint")
            self.no_answers_why = f"the target's answer endpoint ({url}) does not answer: {exc}"
            self.answer_target = None
            return self.no_answers_why
        return None

    def _map(self, hit: RunHit) -> RunHit:
        assert self.id_mapper is not None
        mapped = self.id_mapper.map_hit(hit, self.id_stats)
        if is_unmapped(mapped) and len(self.unmapped_examples) < 5:
            foreign = str((mapped.model_extra or {}).get("foreign_id"))
            if foreign not in self.unmapped_examples:
                self.unmapped_examples.append(foreign)
        return mapped

    def learn_drive(self) -> None:
        """Teach the id mapper every document the drive lists now, trashed ones too (a trashed document the
        target still returns must map to it: unmapped, it would look gone)."""
        if self.id_mapper is None or self.drive is None:
            return
        for f in self.drive.files("/"):
            self.id_mapper.learn(f["doc_id"], f["path"], f["name"])
            self.catalog.add(CatalogDoc(f["doc_id"], f["name"], f["path"]))

    def id_summary(self) -> dict[str, Any] | None:
        if self.id_mapper is None:
            return None
        st = self.id_stats
        return {
            "match": self.id_mapper.match,
            "describe": self.id_mapper.describe,
            "results": st.results,
            "unmapped": st.unmapped,
            "reasons": dict(st.reasons),
            "examples": self.unmapped_examples,
        }

    async def _returns(
        self, user: str, queries: list[str], doc: str, probe: Probe = "recall"
    ) -> tuple[list[str], set[str | None], int]:
        """Which queries return ``doc`` to ``user`` (with ``probe="answer"``: whose answers show it), the
        versions they report, and how many calls failed."""
        answers = await asyncio.gather(*(self._ask(user, q, probe) for q in queries))
        found: list[str] = []
        versions: set[str | None] = set()
        failed = 0
        for q, resp in zip(queries, answers, strict=True):
            if resp is None:
                failed += 1
                continue
            hits = [h for h in resp.hits if h.doc_id == doc]
            if hits or (probe == "answer" and self._answer_shows(user, resp, doc)):
                found.append(q)
                versions.update(h.version_id for h in hits)
        return found, versions, failed

    # ------------------------------------------------------------------ one change
    def _queries(self, doc: str, view: DriveView) -> list[str]:
        assert self.drive is not None, "planned changes need the drive's API"
        f = view.files[doc]
        out = [title_of(f["name"])]
        sentence = distinctive_sentence(self.drive.content(doc), f["name"])
        if sentence and sentence not in out:
            out.append(sentence)
        return out

    async def _wait_setup(self, plan: Plan, queries: dict[str, list[str]]) -> bool:
        """A setup change (a grant that will expire) must reach the target before the measured change."""
        end = time.monotonic() + self.config.deadline_s
        while time.monotonic() < end:
            seen = [await self._returns(u, queries[d], d) for u in plan.users for d in plan.docs]
            if all(found for found, _, _ in seen):
                return True
            await asyncio.sleep(self.config.poll_s)
        return False

    async def change(self, index: int, cls: str, used: set[str]) -> ChangeRecord | None:
        assert self.drive is not None, "planned changes need the drive's API"
        view = await asyncio.to_thread(DriveView.read, self.drive)
        plan = PLANNERS[cls](view, used, self.run_id, index)
        if plan is None:
            return None
        queries = {d: await asyncio.to_thread(self._queries, d, view) for d in plan.docs}
        probe = change_classes()[cls].probe
        if probe == "answer":
            missing = await self._answers_missing(plan.users[0], queries[plan.docs[0]][0])
            if missing is not None:
                self.not_planned_why[cls] = missing
                return None
            # before the change, a fact shows the document when no other document the user sees states it
            self._may = {u: {d for d, us in view.access.items() if u in us} - set(plan.docs) for u in plan.users}
        used.update(plan.docs)
        rec = ChangeRecord(index, cls, plan.detail)
        self.say(f"[{index}] {cls}: {plan.detail}")
        synced_setup = True
        if plan.setup is not None:
            await asyncio.to_thread(plan.setup, self.drive)
            self.log("setup", change=index, cls=cls)
            synced_setup = await self._wait_setup(plan, queries)
        before = {d: await asyncio.to_thread(self.drive.access, d) for d in plan.docs}
        found_before: dict[tuple[str, str], tuple[list[str], set[str | None]]] = {}
        unanswered: set[tuple[str, str]] = set()  # every probe before the change failed
        for u in plan.users:
            for d in plan.docs:
                found, versions, failed = await self._returns(u, queries[d], d, probe)
                found_before[(u, d)] = (found, versions)
                if failed == len(queries[d]):
                    unanswered.add((u, d))
        try:
            result: dict[str, Any] = await asyncio.to_thread(plan.apply, self.drive) or {}
        except DriveError as exc:
            rec.error = str(exc)
            self.log("change", index=index, cls=cls, detail=plan.detail, error=str(exc))
            return rec
        t0 = time.monotonic()
        rec.applied_at = _iso()
        self.log("change", index=index, cls=cls, detail=plan.detail, applied_at=rec.applied_at, result=result)
        await asyncio.to_thread(self.learn_drive)  # an uploaded or moved document's place, before it is probed
        docs = list(plan.docs)
        if cls == "new-document":
            docs = [result["doc_id"]]
            queries[docs[0]] = [plan.new_text or "", title_of(result["name"])]
        after = {d: await asyncio.to_thread(self._access_after, d) for d in docs}
        if probe == "answer":  # after the change, what the drive now lets each user preview
            now = await asyncio.to_thread(self.drive.access_all)
            self._may = {u: {d for d, us in now.items() if u in us} for u in plan.users}
        kind = change_classes()[cls].kind
        pairs: list[PairResult] = []
        for d in docs:
            for u in plan.users:
                lost, gained = u in before.get(d, set()) - after[d], u in after[d] - before.get(d, set())
                affected = {"revoke": lost, "grant": gained, "content": u in after[d]}[kind]
                if not affected:
                    rec.unaffected.append(f"{u}:{d}")
                    continue
                found, versions = found_before.get((u, d), ([], set()))
                pair = PairResult(index, cls, kind, u, d, applied_at=rec.applied_at, probe=probe)
                if d in view.files:
                    pair.name, pair.path = view.files[d]["name"], view.path_of(d)
                elif cls == "new-document":
                    pair.name, pair.path = result.get("name"), result.get("path")
                if not synced_setup:
                    pair.testable, pair.reason = False, "the setup grant never reached the target"
                elif (u, d) in unanswered:
                    pair.testable, pair.reason = False, "the target failed every probe before the change"
                elif kind in ("revoke", "content") and not found:
                    pair.testable, pair.reason = False, "the target never returned it before the change"
                elif kind == "grant" and found:
                    pair.testable, pair.reason = False, "the target returned it before access was given"
                pair.queries = found if kind == "revoke" else [plan.new_text or ""] if kind == "content" else queries[d]
                pair.old_versions = sorted(v for v in versions if v is not None)
                pairs.append(pair)
        rec.pairs = pairs
        await self._converge([p for p in pairs if p.testable], t0)
        return rec

    def _access_after(self, doc: str) -> set[str]:
        """Who may preview ``doc`` after the change; nobody when the drive no longer has it (purged)."""
        assert self.drive is not None
        try:
            return self.drive.access(doc)
        except DriveError as exc:
            if exc.status == 404:
                return set()
            raise

    async def _reflected(self, pair: PairResult) -> tuple[bool | None, int]:
        found, versions, failed = await self._returns(pair.principal, pair.queries, pair.doc_id, pair.probe)
        if failed == len(pair.queries):
            return None, failed  # every call failed: nothing learned this round
        if pair.kind == "revoke":  # converged only when every query answered without the document
            if found:
                return False, failed
            return (True if failed == 0 else None), failed
        if pair.kind == "grant":
            return bool(found), failed
        old = set(pair.old_versions)
        return bool(found) and not (versions & old), failed

    async def _converge(self, pairs: list[PairResult], t0: float) -> None:
        pending = list(pairs)
        deadline = t0 + self.config.deadline_s
        leaking_until: dict[int, float] = {}  # pair -> the last answer that still returned a revoked document
        answered: set[int] = set()  # pairs the target answered at least once after the change
        while pending:
            results = await asyncio.gather(*(self._reflected(p) for p in pending))
            now = time.monotonic()
            still = []
            for p, (ok, failed) in zip(pending, results, strict=True):
                p.probes += 1
                p.errors += failed
                if ok is not None:
                    answered.add(id(p))
                if ok:
                    p.converged, p.lag_s, p.converged_at = True, round(now - t0, 3), _iso()
                    p.leak_s = round(leaking_until.get(id(p), t0) - t0, 3) if p.kind == "revoke" else 0.0
                else:
                    if ok is False and p.kind == "revoke":
                        leaking_until[id(p)] = now
                    still.append(p)
            pending = still
            if not pending or now >= deadline:
                break
            await asyncio.sleep(min(self.config.poll_s, max(0.0, deadline - time.monotonic())))
        for p in pending:
            if id(p) not in answered:  # nothing was seen after the change: no leak, no convergence, no figure
                p.testable, p.reason = False, "the target failed every probe after the change"
                continue
            p.converged = False
            p.leak_s = round(self.config.deadline_s, 3) if p.kind == "revoke" else 0.0

    async def manual_change(self, index: int, change: ManualChange) -> ChangeRecord:
        """A change a person makes on a real drive: check before, wait for Enter, probe until reflected."""
        kind, probe = change_classes()[change.cls].kind, change_classes()[change.cls].probe
        rec = ChangeRecord(index, change.cls, change.instruction)
        pair = PairResult(index, change.cls, kind, change.principal, change.doc_id, probe=probe)
        self.catalog.add(CatalogDoc(change.doc_id))  # no drive listing: an answer may still cite it by id
        missing = await self._answers_missing(change.principal, change.queries[0]) if probe == "answer" else None
        if missing is not None:  # nothing to measure it with: the person is not asked to make the change
            pair.testable, pair.reason = False, missing
            rec.pairs = [pair]
            return rec
        found, versions, failed = await self._returns(change.principal, change.queries, change.doc_id, probe)
        pair.old_versions = sorted(v for v in versions if v is not None)
        if failed == len(change.queries):
            pair.testable, pair.reason = False, "the target failed every probe before the change"
        elif kind in ("revoke", "content") and not found:
            pair.testable, pair.reason = False, "the target never returned it before the change"
        elif kind == "grant" and found:
            pair.testable, pair.reason = False, "the target returned it before access was given"
        elif kind == "content" and not pair.old_versions:
            # the same queries find the old and the new text: only a version id tells them apart
            pair.testable, pair.reason = False, "the target reports no version ids: the new version looks like the old"
        pair.queries = found if kind == "revoke" else change.queries
        await asyncio.to_thread(self.wait_for_person, f"[{index}] {change.cls}: {change.instruction} (Enter when done)")
        t0 = time.monotonic()
        rec.applied_at = pair.applied_at = _iso()
        self.log(
            "change", index=index, cls=change.cls, detail=change.instruction, applied_at=rec.applied_at, manual=True
        )
        rec.pairs = [pair]
        await self._converge([pair] if pair.testable else [], t0)
        return rec

    # ------------------------------------------------------------------ the run
    async def run(self, scenario: Scenario) -> SyncRun:
        out = self.result = SyncRun(scenario.name, started_at=_iso())
        used: set[str] = set()
        index = 0
        if not self.config.manual:
            await asyncio.to_thread(self.learn_drive)
        try:
            for change in scenario.manual:
                index += 1
                out.changes.append(await self.manual_change(index, change))
            for cls, count in [] if self.config.manual else scenario.changes:
                for _ in range(count):
                    index += 1
                    rec = await self.change(index, cls, used)
                    if rec is None:
                        out.not_planned[cls] = out.not_planned.get(cls, 0) + 1
                        out.not_planned_why.update(self.not_planned_why)
                        why = (
                            self.not_planned_why.get(cls)
                            or f"the drive offers {change_classes()[cls].none or 'no such change'}"
                        )
                        self.say(f"[{index}] {cls}: not planned (not measured): {why}")
                    else:
                        out.changes.append(rec)
        except (KeyboardInterrupt, asyncio.CancelledError):
            out.interrupted = True
            raise
        finally:
            out.requests, out.errors = self.requests, self.errors
            out.finished_at = _iso()
            self.log("end", requests=self.requests, errors=self.errors)
        return out

    def close(self) -> None:
        self.log.close()


def pair_dicts(run: SyncRun) -> list[dict[str, Any]]:
    rows = []
    for c in run.changes:
        for p in c.pairs:
            d = asdict(p)
            d.pop("old_versions", None)
            d["class"] = d.pop("cls")
            rows.append(d)
    return rows
