"""The runner retries 429/5xx/timeouts with backoff, honours Retry-After, and records what failed."""

from __future__ import annotations

import asyncio

import httpx

from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.evalset import EvalQuery

OK = {"results": [{"doc_id": "d1", "version_id": "d1-v1", "score": 1.0, "rank": 1}], "as_of": "2026-11-01T00:00:00Z"}
Q = [EvalQuery(query_id=f"q{i}", query=f"question {i}", user_id="u1") for i in range(3)]


def _run(handler: object, cfg: RunConfig) -> list:
    target = HttpTarget("http://sim.test", "tok", transport=httpx.MockTransport(handler))  # type: ignore[arg-type]

    async def go() -> list:
        try:
            return await run_queries(target, Q, cfg)
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_retry_after_429_then_success() -> None:
    calls: dict[str, int] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        body = request.read().decode()
        calls[body] = calls.get(body, 0) + 1
        if calls[body] == 1:
            return httpx.Response(429, headers={"Retry-After": "0.01"}, json={"error": {"code": "throttled"}})
        assert request.headers["authorization"] == "Bearer tok"
        return httpx.Response(200, json=OK)

    records = _run(handler, RunConfig(attempts=3, backoff_base=0.001))
    assert [r.error for r in records] == [None, None, None]
    assert all(r.attempts == 2 and r.model_extra["retries"] == 1 for r in records)
    assert all(r.ranked_doc_ids == ["d1"] and r.latency_ms is not None for r in records)


def test_persistent_5xx_is_recorded_as_error_after_all_attempts() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": {"code": "down"}})

    records = _run(handler, RunConfig(attempts=4, backoff_base=0.001))
    assert all(r.error and r.error.startswith("HTTP 503") for r in records)
    assert all(r.attempts == 4 and r.results == [] for r in records)


def test_4xx_is_not_retried() -> None:
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return httpx.Response(403, json={"error": {"code": "forbidden"}})

    records = _run(handler, RunConfig(attempts=4, backoff_base=0.001))
    assert len(seen) == len(Q)
    assert all(r.error and "403" in r.error and r.attempts == 1 for r in records)


def test_timeouts_and_bad_payloads() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    records = _run(timeout, RunConfig(attempts=2, backoff_base=0.001))
    assert all(r.error and r.error.startswith("timeout") and r.attempts == 2 for r in records)

    def garbage(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": [{"score": 1}]})

    records = _run(garbage, RunConfig(attempts=2, backoff_base=0.001))
    assert all(r.error and "doc_id" in r.error and r.attempts == 1 for r in records)


def test_retries_are_summarised_in_the_metrics() -> None:
    """Per query in run.jsonl, summed in metrics.json's errors section: a run whose every query needed a retry
    reads as a flaky target, not as a clean one."""
    from drivebench.evaluator.scoring import score

    calls: dict[str, int] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        body = request.read().decode()
        calls[body] = calls.get(body, 0) + 1
        if "question 0" in body and calls[body] <= 2:  # the first query needs two retries, the others none
            return httpx.Response(503, json={"error": {"code": "down"}})
        return httpx.Response(200, json=OK)

    records = _run(handler, RunConfig(attempts=4, backoff_base=0.001))
    retries = score(Q, records)["errors"]["retries"]
    assert retries == {"total": 2, "queries": 1, "max": 2}
