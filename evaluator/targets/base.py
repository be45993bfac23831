"""The target protocol: one recall call per eval query, as the query's principal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from drivebench.evaluator.schema import EvalQuery, RunHit


@dataclass
class TargetResponse:
    hits: list[RunHit]
    as_of: str | None = None
    snapshot: str | None = None
    answer: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class TargetError(Exception):
    """A failed call. ``retryable`` marks 429, 5xx, timeouts and connection errors."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


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
