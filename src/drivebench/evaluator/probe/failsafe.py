"""``drivebench probe --fail-safe``: does a recall endpoint fail CLOSED on requests it cannot honour?

Any target (the simulator, a team's own RAG, a vendor) is called the way ``eval run`` calls it. First the
baseline: the real user, the real token, a query that returns documents. A target that answers the baseline
nothing (or an error) is *not testable*: a probe must never pass because the target answers nothing to anyone.
Then each case of ``failsafe_cases`` sends requests derived from the baseline; each must fail closed, i.e. answer
an HTTP error status (4xx/5xx, or a 2xx whose body says it failed: ``ok_when``) or a 2xx with no results. A 2xx
with documents is FAIL OPEN, reported with the document ids. With the simulator's admin token
(``drive_token``), ``permission-outage`` switches that fault on through ``PUT /_sim/faults``, sends the
baseline, and restores the fault set it found (in a ``finally``); and ``expired-token`` also sends a really
expired token: one the simulator mints for the baseline user (``POST /_sim/tokens``) with its expiry already
reached on the drive's clock, after checking that a live token minted the same way returns documents (else
the expired one would prove nothing, and the case says so).

Exit codes (``FailSafeReport.exit_code``): 0 every case closed; 1 a case failed open; 3 not testable (the
baseline returned nothing or failed) or a case could not be measured (the target could not be reached).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from drivebench.evaluator.probe.failsafe_cases import (
    DEFAULT_QUERIES,
    OUTAGE_FAULT,
    Case,
    FailSafeTarget,
    Request,
    baseline_request,
    plan,
)
from drivebench.evaluator.targets.http import check_ok
from drivebench.formats.target import TargetError

Verdict = Literal["closed", "OPEN", "not applicable", "error reaching target"]
CLOSED: Verdict = "closed"
OPEN: Verdict = "OPEN"
NOT_APPLICABLE: Verdict = "not applicable"
ERROR: Verdict = "error reaching target"
EXIT_CLOSED, EXIT_OPEN, EXIT_USAGE, EXIT_NOT_TESTABLE = 0, 1, 2, 3
SIMULATOR_HEADER = "x-drivebench-faults"  # every simulator /api/ response carries it
_ORDER = {OPEN: 0, ERROR: 1, CLOSED: 2, NOT_APPLICABLE: 3}


class Attempt(BaseModel):
    """One request sent and how it was judged."""

    variant: str
    verdict: Verdict
    status: int | None = None
    results: int | None = None
    doc_ids: list[str] = Field(default_factory=list)
    detail: str = ""


class CaseResult(BaseModel):
    """A case: OPEN when any of its requests returned documents; error when one could not be measured."""

    case: str
    description: str
    verdict: Verdict
    status: int | None = None  # of the request that decided the verdict
    results: int | None = None
    doc_ids: list[str] = Field(default_factory=list)
    detail: str = ""
    attempts: list[Attempt] = Field(default_factory=list)

    @property
    def statuses(self) -> str:
        """The distinct statuses of the requests sent, e.g. ``401`` or ``400, 422`` (``-``: none)."""
        seen = dict.fromkeys(str(a.status) for a in self.attempts if a.status is not None)
        return ", ".join(seen) or "-"


class Baseline(BaseModel):
    """The real user's request: it must return at least one document for the probe to mean anything."""

    user: str
    query: str | None = None
    ok: bool = False
    status: int | None = None
    results: int = 0
    doc_ids: list[str] = Field(default_factory=list)
    simulator: bool = False  # the answer carried the simulator's fault header
    tried: list[str] = Field(default_factory=list)
    detail: str = ""


class FailSafeReport(BaseModel):
    target: str
    baseline: Baseline
    cases: list[CaseResult] = Field(default_factory=list)  # OPEN first, then errors, closed, not applicable
    verdict: Literal["closed", "open", "not testable", "incomplete"] = "not testable"
    exit_code: int = EXIT_NOT_TESTABLE
    open_cases: list[str] = Field(default_factory=list)

    def finish(self) -> FailSafeReport:
        """Order the cases and set the verdict and the exit code."""
        self.cases.sort(key=lambda c: _ORDER[c.verdict])
        self.open_cases = [c.case for c in self.cases if c.verdict == OPEN]
        if self.open_cases:
            self.verdict, self.exit_code = "open", EXIT_OPEN
        elif not self.baseline.ok:
            self.verdict, self.exit_code = "not testable", EXIT_NOT_TESTABLE
        elif any(c.verdict == ERROR for c in self.cases):
            self.verdict, self.exit_code = "incomplete", EXIT_NOT_TESTABLE
        else:
            self.verdict, self.exit_code = "closed", EXIT_CLOSED
        return self

    def summary(self) -> str:
        if self.verdict == "open":
            return f"FAIL OPEN: {', '.join(self.open_cases)}"
        if self.verdict == "not testable":
            return "not testable: the baseline does not work, so failing closed proves nothing"
        if self.verdict == "incomplete":
            bad = [c.case for c in self.cases if c.verdict == ERROR]
            return f"not every case was measured: {', '.join(bad)} could not reach the target"
        sent = [c for c in self.cases if c.verdict == CLOSED]
        return f"fails closed: {len(sent)} case(s) closed" + (
            f", {len(self.cases) - len(sent)} not applicable" if len(sent) < len(self.cases) else ""
        )


# ---------------------------------------------------------------------------------------------- judging


def _dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def read_results(resp: httpx.Response, target: FailSafeTarget) -> tuple[list[str] | None, str]:
    """The document ids of a 2xx answer (None: no result list in it) and what was seen, in words."""
    try:
        data = resp.json()
    except ValueError:
        return None, "2xx, but the body is not JSON: no results"
    if not isinstance(data, dict):
        return None, f"2xx, but the body is a JSON {type(data).__name__}: no results"
    try:
        check_ok(data, target.mapping)
    except TargetError as exc:
        return None, f"2xx, but {exc}"
    rows = _dig(data, target.mapping.results)
    if not isinstance(rows, list):
        return None, f"2xx without a result list at {target.mapping.results!r}"
    ids = []
    for row in rows:
        doc = _dig(row, target.mapping.doc_id) if isinstance(row, dict) else None
        ids.append("?" if doc is None or isinstance(doc, dict | list) else str(doc))
    return ids, f"2xx with {len(ids)} result(s)"


def error_message(resp: httpx.Response) -> str:
    """What an error answer says: its JSON message (``error.message``, ``message``, ``msg``, ``detail``) or the
    start of its body."""
    try:
        data = resp.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        for path in ("error.message", "message", "msg", "detail", "error"):
            said = _dig(data, path)
            if isinstance(said, str) and said:
                return said[:200]
    return resp.text[:160].replace("\n", " ")


def judge(request: Request, resp: httpx.Response | None, error: str | None, target: FailSafeTarget) -> Attempt:
    """Closed: an error status, or a 2xx with no document. OPEN: a 2xx with documents. ``error``: not reached."""
    if resp is None:
        return Attempt(variant=request.variant, verdict=ERROR, detail=error or "no answer")
    status = resp.status_code
    if status >= 300:
        text = error_message(resp)
        return Attempt(
            variant=request.variant, verdict=CLOSED, status=status, results=0, detail=f"HTTP {status}: {text}"
        )
    ids, seen = read_results(resp, target)
    if ids:
        return Attempt(variant=request.variant, verdict=OPEN, status=status, results=len(ids), doc_ids=ids, detail=seen)
    return Attempt(variant=request.variant, verdict=CLOSED, status=status, results=0, detail=seen)


def combine(case: Case, attempts: Sequence[Attempt]) -> CaseResult:
    """A case's verdict from its requests': any OPEN is OPEN, else any error is an error, else closed."""
    worst = min(attempts, key=lambda a: _ORDER[a.verdict])
    opened = [a for a in attempts if a.verdict == OPEN]
    ids = list(dict.fromkeys(d for a in opened for d in a.doc_ids))
    detail = "; ".join(f"{a.variant}: {a.detail}" for a in (opened or [worst]))
    if not opened and worst.verdict == CLOSED and len(attempts) > 1:
        detail += f" (and {len(attempts) - 1} more request(s), all closed)"
    return CaseResult(
        case=case.name,
        description=case.description,
        verdict=worst.verdict,
        status=worst.status,
        results=max((a.results or 0) for a in opened) if opened else worst.results,
        doc_ids=ids,
        detail=detail,
        attempts=list(attempts),
    )


# ---------------------------------------------------------------------------------------------- sending


async def send(
    client: httpx.AsyncClient, target: FailSafeTarget, request: Request
) -> tuple[httpx.Response | None, str | None]:
    """The target's answer to ``request``, or (None, why) when it could not be reached."""
    try:
        if target.method == "GET":
            params = {k: v if isinstance(v, str) else str(v) for k, v in request.body.items()}
            return await client.get(target.url, params=params, headers=request.headers), None
        return await client.post(target.url, json=request.body, headers=request.headers), None
    except httpx.TimeoutException as exc:
        return None, f"timeout: no answer within {target.timeout_s:g} s ({type(exc).__name__})"
    except httpx.TransportError as exc:
        return None, f"connection error: {type(exc).__name__}: {exc}"


async def run_baseline(
    client: httpx.AsyncClient, target: FailSafeTarget, user: str, queries: Sequence[str]
) -> tuple[Baseline, Request | None]:
    """The first of ``queries`` that returns documents to ``user``; not ok when none does."""
    base = Baseline(user=user)
    for query in queries:
        request = baseline_request(target, user, query)
        base.tried.append(query)
        resp, error = await send(client, target, request)
        base.query = query
        if resp is None:
            base.detail = f"the baseline request could not reach the target ({error})"
            return base, None
        base.status = resp.status_code
        base.simulator = SIMULATOR_HEADER in resp.headers
        if resp.status_code >= 300:
            base.detail = f"the baseline request answered HTTP {resp.status_code}: {error_message(resp)}"
            return base, None
        ids, seen = read_results(resp, target)
        if ids is None:
            base.detail = f"the baseline answer cannot be read ({seen}); check the response mapping"
            return base, None
        if ids:
            base.ok, base.results, base.doc_ids, base.detail = True, len(ids), ids, seen
            return base, request
    asked = "; ".join(repr(q) for q in base.tried)
    base.detail = f"the target returns no document to the real user {user} (asked {asked}): give --user/--query"
    return base, None


async def run_body_identity(client: httpx.AsyncClient, target: FailSafeTarget, case: Case) -> CaseResult:
    """``body-identity``: not applicable when the token does not answer a body naming nobody (it names its
    principal in the body, by right); else each claim is OPEN when it returns documents the baseline did not."""
    bare, *claims = case.requests
    probe = judge(bare, *(await send(client, target, bare)), target)
    if probe.verdict == ERROR:
        return combine(case, [probe])
    if probe.verdict == CLOSED and probe.status is not None and probe.status >= 300:
        return CaseResult(
            case=case.name,
            description=case.description,
            verdict=NOT_APPLICABLE,
            detail=f"the token needs the body to name its principal ({probe.detail}): an evaluation token may name "
            "anyone; give a user's own token",
            attempts=[probe],
        )
    attempts = []
    for r in claims:
        a = judge(r, *(await send(client, target, r)), target)
        new = [d for d in a.doc_ids if d not in (case.beyond or frozenset())]
        if a.verdict == OPEN and not new:
            a = a.model_copy(update={"verdict": CLOSED, "detail": f"{a.detail}, all the baseline's: ignored"})
        elif a.verdict == OPEN:
            a = a.model_copy(update={"doc_ids": new, "detail": f"{a.detail}, {len(new)} the baseline did not return"})
        attempts.append(a)
    return combine(case, attempts)


async def run_outage(
    client: httpx.AsyncClient, target: FailSafeTarget, baseline: Request, drive_token: str
) -> CaseResult:
    """``permission-outage``: the simulator's fault on, the baseline sent, the fault set found restored."""
    case = Case(OUTAGE_FAULT, "the simulator's permission engine down (fault permission-outage)")
    admin = {"Authorization": f"Bearer {drive_token}"}
    url = target.faults_url

    def failed(why: str) -> CaseResult:
        return CaseResult(case=case.name, description=case.description, verdict=ERROR, detail=why)

    try:
        got = await client.get(url, headers=admin)
        before = got.json().get("active", []) if got.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return failed(f"could not read the faults at {url}: {type(exc).__name__}: {exc}")
    if before is None:
        return failed(
            f"GET {url} answered HTTP {got.status_code} (is this the simulator, and --drive-token its admin token?)"
        )
    attempt: Attempt | None = None
    why = "the fault could not be switched on"
    try:
        on = await client.put(url, json={"faults": [OUTAGE_FAULT]}, headers=admin)
        if on.status_code == 200:
            request = Request(f"the baseline, fault {OUTAGE_FAULT} on", baseline.headers, baseline.body)
            attempt = judge(request, *(await send(client, target, request)), target)
        else:
            why = f"PUT {url} answered HTTP {on.status_code}: {on.text[:200]}"
    except httpx.HTTPError as exc:
        why = f"could not switch the fault on: {type(exc).__name__}: {exc}"
    finally:
        not_restored = await _restore_faults(client, url, admin, before)
    result = combine(case, [attempt]) if attempt is not None else failed(why)
    result.detail += f"; faults restored to {_names(before)}" if not not_restored else ""
    if not_restored:
        result.detail += f"; faults NOT restored: {not_restored}"
        if result.verdict == CLOSED:
            result.verdict = ERROR
    return result


def _names(faults: list[Any]) -> str:
    names = [f.get("name", "?") if isinstance(f, dict) else str(f) for f in faults]
    return ", ".join(names) or "none"


async def _restore_faults(client: httpx.AsyncClient, url: str, admin: dict[str, str], before: list[Any]) -> str:
    """Put back the faults found before (none: switched off); '' when the server says it has them again."""
    try:
        back = await client.put(url, json={"faults": before}, headers=admin)
        now = back.json().get("active") if back.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if now is None:
        return f"PUT answered HTTP {back.status_code}"
    return "" if now == before else f"the server now runs {_names(now)}"


async def mint_expired(
    client: httpx.AsyncClient, target: FailSafeTarget, baseline: Request, user: str, drive_token: str
) -> tuple[str | None, str]:
    """A token the simulator issued to ``user`` whose expiry its clock has reached, and what was done, in words;
    (None, why) when the drive cannot mint one, or when a live token minted the same way does not work (then
    the expired one's refusal would prove nothing)."""
    admin = {"Authorization": f"Bearer {drive_token}"}
    url = target.tokens_url

    async def mint(ttl: float) -> dict[str, Any] | str:
        try:
            r = await client.post(url, json={"subject": user, "ttl_seconds": ttl}, headers=admin)
            data = r.json() if r.status_code == 201 else None
        except (httpx.HTTPError, ValueError) as exc:
            return f"could not mint a token at {url}: {type(exc).__name__}: {exc}"
        if not isinstance(data, dict) or not isinstance(data.get("token"), str):
            return f"POST {url} answered HTTP {r.status_code}: the drive mints no expiring token"
        return data

    live = await mint(3600)
    if isinstance(live, str):
        return None, live
    control = Request(f"a live token the drive issued to {user}", target.auth(live["token"]), baseline.body)
    attempt = judge(control, *(await send(client, target, control)), target)
    if attempt.verdict != OPEN:  # the live token must return the baseline's documents
        return None, f"a live token the drive minted for {user} was not honoured ({attempt.detail}): none sent expired"
    expired = await mint(0)
    if isinstance(expired, str):
        return None, expired
    if expired.get("expired") is not True:
        return None, f"the token minted with no time to live is not reported expired: {expired.get('expires_at')}"
    return expired["token"], f"expired at {expired['expires_at']} on the drive's clock; a live one returns documents"


async def run_failsafe(
    target: FailSafeTarget,
    user: str,
    queries: Sequence[str] = DEFAULT_QUERIES,
    *,
    drive_token: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> FailSafeReport:
    """The baseline, then every case, one request at a time (the outage case last: it changes the target)."""
    async with httpx.AsyncClient(timeout=target.timeout_s, transport=transport, follow_redirects=True) as client:
        base, baseline = await run_baseline(client, target, user, queries)
        report = FailSafeReport(target=target.url, baseline=base)
        if baseline is None:
            return report.finish()
        assert base.query is not None
        minted, minted_note = (None, "")
        if drive_token and target.token:
            minted, minted_note = await mint_expired(client, target, baseline, user, drive_token)
        for case in plan(target, user, base.query, expired_token=minted, baseline_docs=frozenset(base.doc_ids)):
            if case.beyond is not None:
                report.cases.append(await run_body_identity(client, target, case))
                continue
            if case.not_applicable is not None:
                report.cases.append(
                    CaseResult(
                        case=case.name, description=case.description, verdict=NOT_APPLICABLE, detail=case.not_applicable
                    )
                )
                continue
            attempts = [judge(r, *(await send(client, target, r)), target) for r in case.requests]
            result = combine(case, attempts)
            if case.name == "expired-token" and minted_note:
                result.detail += f"; the drive's own expired token: {minted_note}"
            report.cases.append(result)
        if drive_token:
            report.cases.append(await run_outage(client, target, baseline, drive_token))
        else:
            report.cases.append(
                CaseResult(
                    case=OUTAGE_FAULT,
                    description="the simulator's permission engine down (fault permission-outage)",
                    verdict=NOT_APPLICABLE,
                    detail="simulator only: give --drive-token ADMIN_TOKEN",
                )
            )
    return report.finish()


# ---------------------------------------------------------------------------------------------- JUnit


def write_junit(report: FailSafeReport, path: Path) -> Path:
    """JUnit XML: suite ``drivebench.fail-safe``, a test case per case (and the baseline): a failure for
    OPEN, an error for a case not measured or a baseline that does not work, skipped when not applicable."""
    root = ET.Element("testsuites", name="drivebench")
    suite = ET.SubElement(root, "testsuite", name="drivebench.fail-safe")
    base = ET.SubElement(suite, "testcase", classname="drivebench.fail-safe", name="baseline")
    if not report.baseline.ok:
        ET.SubElement(base, "error", message="not testable").text = report.baseline.detail
    failures = errors = skipped = 0
    errors += not report.baseline.ok
    for c in report.cases:
        case = ET.SubElement(suite, "testcase", classname="drivebench.fail-safe", name=c.case)
        if c.verdict == OPEN:
            failures += 1
            message = f"FAIL OPEN: HTTP {c.status}, {c.results} document(s): {', '.join(c.doc_ids)}"
            ET.SubElement(case, "failure", message=message).text = c.detail
        elif c.verdict == ERROR:
            errors += 1
            ET.SubElement(case, "error", message="error reaching target").text = c.detail
        elif c.verdict == NOT_APPLICABLE:
            skipped += 1
            ET.SubElement(case, "skipped", message=c.detail)
    suite.set("tests", str(len(report.cases) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path
