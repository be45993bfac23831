"""The target protocol: one recall call per eval query, as the query's principal.

A call either returns a ``TargetResponse`` (a valid result list, possibly empty) or raises
``TargetError`` with a ``kind`` from ``ERROR_KINDS``: a failed call is never a result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from drivebench.formats.evalset import EvalQuery, RunHit

#: Error kinds, with what each means (reports list them in this order).
ERROR_KINDS: dict[str, str] = {
    "connection": "could not connect (refused, reset, DNS)",
    "timeout": "no answer within the timeout",
    "http_401": "HTTP 401: the token was rejected",
    "http_403": "HTTP 403: the principal or token may not call recall",
    "http_404": "HTTP 404: no recall endpoint at this URL",
    "http_429": "HTTP 429: rate limited (after retries)",
    "http_4xx": "another HTTP 4xx",
    "http_5xx": "HTTP 5xx: server error (after retries)",
    "http_other": "an HTTP status that is neither 2xx nor an error (e.g. a redirect not followed)",
    "app_error": "HTTP 2xx whose body says the call failed (ok_when)",
    "not_json": "the body is not a JSON object",
    "bad_shape": "the body does not fit the response mapping",
    "unmapped": "results came back but none maps to a document of the corpus ([ids] match)",
    "missing": "no record for the query in the run",
    "preflight": "not sent: the preflight probe failed",
    "other": "anything else (a target bug)",
}


def http_error_kind(status: int) -> str:
    if status in (401, 403, 404, 429):
        return f"http_{status}"
    if status >= 500:
        return "http_5xx"
    return "http_4xx" if status >= 400 else "http_other"


@dataclass
class TargetResponse:
    hits: list[RunHit]
    as_of: str | None = None
    snapshot: str | None = None
    answer: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    faults: str | None = None  # the X-Drivebench-Faults header ("none" on a clean simulator; None: not sent)


class TargetError(Exception):
    """A failed call. ``retryable`` marks 429, 5xx, timeouts and connection errors; ``kind`` is one
    of ``ERROR_KINDS``."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None, kind: str = "other") -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind if kind in ERROR_KINDS else "other"


class Target(Protocol):
    name: str

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse: ...

    async def aclose(self) -> None: ...


def request_body(query: EvalQuery, top_k: int) -> dict[str, Any]:
    """The vendor-shaped request for one eval query, naming its principal."""
    body: dict[str, Any] = {"query": query.query, "top_k": top_k}
    if query.user_id:
        body["user_id"] = query.user_id
    if query.user_role:
        body["user_role"] = query.user_role
    if query.department:
        body["department"] = query.department
    if query.as_of is not None:
        body["as_of"] = query.as_of.isoformat()
    return body
