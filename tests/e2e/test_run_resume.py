"""``eval run`` stopped by Ctrl-C, then ``--resume``; ``--only-failed``: the real ``drivebench`` CLI (in a subprocess
where a signal stops it) against a real uvicorn server (the session simulator) behind a counting proxy that can slow each answer down.

A partial run exits 130, says ``"partial": true`` in metrics.json and ``scope = 'partial'`` in the history, and prints
the ``--resume`` command; resuming asks only the unanswered queries and ends with the metrics of a run that was
never stopped; resuming a complete run, or with options that contradict the run's, exits 2; ``--only-failed`` asks
exactly the queries that missed or leaked."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from drivebench.evaluator.history import HistoryStore
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import EvalQuery, GoldDoc, load_evalset, write_jsonl
from drivebench.testing import ServedSimulator
from tests.support.clirun import DRIVEBENCH, clean_env, run_in_process
from tests.support.failopen import serve_app


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """``drivebench ARGS`` in process (the CLI's own entry point, exit code and streams): only the runs stopped by a
    signal need a process of their own, and have one."""
    code, stdout, stderr = run_in_process(*args)
    return subprocess.CompletedProcess(list(args), code, stdout, stderr)


class CountingProxy:
    """``POST /api/mcp/recall`` forwarded to the server, each request logged (its body) and delayed by ``delay_s``."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.delay_s = upstream.rstrip("/"), 0.0
        self.bodies: list[dict[str, Any]] = []
        self.app = FastAPI(lifespan=self._lifespan)
        self.client: httpx.AsyncClient | None = None

        @self.app.post("/api/mcp/recall")
        async def recall(request: Request) -> JSONResponse:
            body = await request.json()
            self.bodies.append(body)
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            assert self.client is not None, "the proxy's client is opened at start-up"
            resp = await self.client.post(
                f"{self.upstream}/api/mcp/recall",
                json=body,
                headers={"Authorization": request.headers.get("authorization", "")},
            )
            return JSONResponse(resp.json(), status_code=resp.status_code)

    @contextlib.asynccontextmanager
    async def _lifespan(self, _: FastAPI) -> AsyncIterator[None]:
        # one client for every forwarded request: a new one per request cost ~30 ms (its TLS context) each
        async with httpx.AsyncClient(timeout=30) as self.client:
            yield


def _key(x: EvalQuery | dict[str, Any]) -> tuple[Any, ...]:
    get = (lambda n: getattr(x, n)) if isinstance(x, EvalQuery) else x.get
    as_of = get("as_of")
    when = (as_of if isinstance(as_of, datetime) else datetime.fromisoformat(as_of)).isoformat() if as_of else None
    return (get("query"), get("user_id"), get("user_role"), get("department"), when)


@dataclass
class Setup:
    server: ServedSimulator
    proxy: CountingProxy
    url: str
    evalset: Path
    queries: list[EvalQuery]
    misses: set[str]
    root: Path

    def asked(self, since: int = 0) -> list[str]:
        """The query ids of the requests the proxy saw (from request ``since`` on)."""
        by_key = {_key(q): q.query_id for q in self.queries}
        return [by_key[_key(b)] for b in self.proxy.bodies[since:]]

    def args(self, *extra: str) -> list[str]:
        token = self.server.sim.tokens.eval_token
        return ["eval", "run", "--target", self.url, "--token", token, "--concurrency", "2", *extra]


@pytest.fixture(scope="module")
def setup(drivebench_server: ServedSimulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """The seed eval set plus two queries whose gold document their asker may not see (never returned: a miss)."""
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    root = tmp_path_factory.mktemp("resume")
    seed = load_evalset(sim.corpus_dir / EVALSET_NAME)
    oracle = corpus_oracle(sim.corpus_dir)
    probe = next(q for q in seed if q.user_id)
    hidden = [d for d in sorted(oracle.drive.documents) if not oracle(probe, d)][:2]
    assert len(hidden) == 2
    misses = [
        probe.model_copy(update={"query_id": f"miss-{i}", "query": f"{probe.query} ({i})", "gold": [GoldDoc(doc_id=d)]})
        for i, d in enumerate(hidden)
    ]
    queries = [*seed, *misses]
    evalset = write_jsonl(root / "evalset.jsonl", queries)
    proxy = CountingProxy(drivebench_server.url)
    with serve_app(proxy.app) as url:
        yield Setup(drivebench_server, proxy, url, evalset, queries, {q.query_id for q in misses}, root)


@pytest.fixture(scope="module")
def reference(setup: Setup) -> Path:
    """A run that was never stopped."""
    out = setup.root / "reference"
    done = _run(*setup.args("--evalset", str(setup.evalset), "--corpus", "seed", "--out", str(out)))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def partial(setup: Setup) -> tuple[Path, subprocess.CompletedProcess[str], Path]:
    """A run stopped by SIGINT after some queries were answered (each answer takes 0.15 s, two in flight)."""
    out, history = setup.root / "partial", setup.root / "history.sqlite3"
    setup.proxy.delay_s = 0.15
    argv = [DRIVEBENCH, *setup.args("--evalset", str(setup.evalset), "--corpus", "seed", "--out", str(out))]
    env = clean_env(DRIVEBENCH_HISTORY=str(history))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        lines = out / "run.jsonl"
        while time.monotonic() < deadline and proc.poll() is None:
            if lines.exists() and len(lines.read_text(encoding="utf-8").splitlines()) >= 6:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it was interrupted"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        setup.proxy.delay_s = 0.0
    return out, subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr), history


def _copy(run_dir: Path, to: Path) -> Path:
    shutil.copytree(run_dir, to)
    return to


def _not_latency(metrics: dict[str, Any]) -> dict[str, Any]:
    # wall-clock latency differs between any two runs, stopped or not; every other figure must be the same
    return {k: v for k, v in metrics.items() if "latency" not in k}


def test_sigint_writes_a_partial_run_exits_130_and_says_how_to_resume(setup: Setup, partial: Any) -> None:
    out, done, history = partial
    assert done.returncode == 130, done.stderr
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    completion = metrics["completion"]
    n = len(setup.queries)
    assert metrics["partial"] is True and metrics["status"]["state"] == "partial"
    assert completion["queries"] == n and 6 <= completion["answered"] < n, completion
    assert completion["stopped_by"] == "SIGINT" and completion["unanswered"] == n - completion["answered"]
    assert metrics["verdict"]["state"] == "failed" and metrics["verdict"]["exit_code"] == 130
    records = [json.loads(x) for x in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == completion["answered"] == len(metrics["per_query"])  # every answered query, no other
    assert all(r.get("error") is None for r in records)  # cancelled requests are not recorded as failures
    resume = f"drivebench eval run --resume {out}"
    assert resume in done.stderr and resume in metrics["status"]["reason"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "RUN PARTIAL" in report and f"{completion['answered']} of {n} queries" in report
    assert "RUN PARTIAL" in (out / "report.html").read_text(encoding="utf-8")
    assert json.loads((out / "run_config.json").read_text(encoding="utf-8"))["state"] == "partial"
    with sqlite3.connect(history) as con:
        assert con.execute("SELECT scope, status FROM runs").fetchall() == [("partial", "ok")]
    store = HistoryStore(history)
    assert store.trend("hit_rate@10") == [] and len(store.trend("hit_rate@10", include_failed=True)) == 1


def test_resume_asks_only_the_unanswered_queries_and_ends_as_an_uninterrupted_run(
    setup: Setup, partial: Any, reference: Path
) -> None:
    out = _copy(partial[0], setup.root / "resumed")
    answered = {json.loads(x)["query_id"] for x in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()}
    since = len(setup.proxy.bodies)
    history = setup.root / "resumed.sqlite3"
    done = _run(*setup.args("--resume", str(out), "--history", str(history)))
    assert done.returncode == 0, done.stderr
    asked = setup.asked(since)
    unanswered = {q.query_id for q in setup.queries} - answered
    assert set(asked) == unanswered and not answered & set(asked)  # the preflight probes an unanswered one too
    got = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    want = json.loads((reference / "metrics.json").read_text(encoding="utf-8"))
    assert "partial" not in got and got["status"]["state"] == "ok"
    assert got["run_info"]["resumed"]["answered_before"] == len(answered)
    assert _not_latency(got["metrics"]) == _not_latency(want["metrics"])
    assert len(_not_latency(got["metrics"])) > 20
    strip = lambda rows: [_not_latency(r) for r in rows]  # noqa: E731
    assert strip(got["per_query"]) == strip(want["per_query"])
    records = [json.loads(x)["query_id"] for x in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records == [q.query_id for q in setup.queries]  # the whole run, in eval-set order
    assert json.loads((out / "run_config.json").read_text(encoding="utf-8"))["state"] == "complete"
    with sqlite3.connect(history) as con:
        assert con.execute("SELECT scope FROM runs").fetchall() == [(None,)]
    again = _run(*setup.args("--resume", str(out), "--history", "none"))
    assert again.returncode == 2 and "nothing to resume" in again.stderr, again.stderr


def test_resume_of_a_run_that_was_never_stopped_exits_2(setup: Setup, reference: Path) -> None:
    since = len(setup.proxy.bodies)
    done = _run("eval", "run", "--resume", str(reference), "--token", setup.server.sim.tokens.eval_token)
    assert done.returncode == 2 and "nothing to resume" in done.stderr, done.stderr
    assert len(setup.proxy.bodies) == since


@pytest.mark.parametrize(
    "contradiction",
    [("--k", "1,5"), ("--corpus", "acme-zh"), ("--label", "other"), ("--fail-on", "hit_rate@10<0.9")],
)
def test_resume_with_options_that_contradict_the_run_exits_2(
    setup: Setup, partial: Any, contradiction: tuple[str, str]
) -> None:
    out = partial[0]
    before = (out / "run.jsonl").read_bytes()
    since = len(setup.proxy.bodies)
    done = _run(*setup.args("--resume", str(out), *contradiction))
    assert done.returncode == 2 and "contradicts" in done.stderr and contradiction[0] in done.stderr, done.stderr
    assert len(setup.proxy.bodies) == since and (out / "run.jsonl").read_bytes() == before  # nothing sent or written


def test_resume_with_the_same_options_given_again_is_no_contradiction(setup: Setup, partial: Any) -> None:
    out = _copy(partial[0], setup.root / "same-options")
    done = _run(*setup.args("--resume", str(out), "--k", "10,5,3,1", "--corpus", "seed", "--history", "none"))
    assert done.returncode == 0, done.stderr


def test_only_failed_asks_exactly_the_missed_queries_and_is_kept_out_of_trends(setup: Setup, reference: Path) -> None:
    listed = [json.loads(x)["query_id"] for x in (reference / "failed_queries.jsonl").read_text().splitlines()]
    assert setup.misses <= set(listed)  # the planted misses, and whatever the pipeline misses itself
    history = setup.root / "only-failed.sqlite3"
    since = len(setup.proxy.bodies)
    out = setup.root / "only-failed"
    args = ["--only-failed", str(reference), "--no-preflight", "--out", str(out), "--history", str(history)]
    done = _run(*setup.args(*args))
    assert done.returncode == 0, done.stderr
    assert sorted(setup.asked(since)) == sorted(listed)  # each failed query once, nothing else
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run_info"]["label"] == "only-failed of reference"
    assert metrics["run_info"]["subset"]["queries"] == len(listed)
    assert [r["query_id"] for r in metrics["per_query"]] == [q.query_id for q in setup.queries if q.query_id in listed]
    with sqlite3.connect(history) as con:
        assert con.execute("SELECT scope, label FROM runs").fetchall() == [("subset", "only-failed of reference")]
    assert HistoryStore(history).trend("hit_rate@10") == []  # never a point of the full runs' trend


def test_a_killed_run_keeps_its_answers_and_resumes_to_the_same_metrics(setup: Setup, reference: Path) -> None:
    """SIGKILL: no handler runs, no metrics.json is written; run.jsonl (appended as the run went) and
    run_config.json (state ``running``) are enough to resume."""
    out = setup.root / "killed"
    setup.proxy.delay_s = 0.15
    argv = [DRIVEBENCH, *setup.args("--evalset", str(setup.evalset), "--corpus", "seed", "--out", str(out))]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            lines = out / "run.jsonl"
            if lines.exists() and len(lines.read_text(encoding="utf-8").splitlines()) >= 6:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        setup.proxy.delay_s = 0.0
    assert not (out / "metrics.json").exists()
    assert json.loads((out / "run_config.json").read_text(encoding="utf-8"))["state"] == "running"
    kept = {json.loads(x)["query_id"] for x in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()}
    assert len(kept) >= 6
    since = len(setup.proxy.bodies)
    done = _run(*setup.args("--resume", str(out), "--history", "none"))
    assert done.returncode == 0, done.stderr
    assert not kept & set(setup.asked(since))
    got = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    want = json.loads((reference / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    assert _not_latency(got) == _not_latency(want)
