"""An HTTP recall endpoint of the vendor's shape (the simulator, or a real instance).

``recall`` posts to ``path`` (``/api/mcp/recall``); ``answer`` posts the same body plus
``citation_style`` to ``answer_path`` (``/api/mcp/answer``) and reads ``answer`` from the response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from drivebench.evaluator.schema import EvalQuery, RunHit
from drivebench.evaluator.targets.base import TargetError, TargetResponse, request_body


@dataclass(frozen=True)
class ResponseMapping:
    """Where a response variant keeps things: dotted path to the result list and per-result keys."""

    results: str = "results"
    doc_id: str = "doc_id"
    version_id: str = "version_id"
    score: str = "score"
    rank: str = "rank"
    answer: str = "answer"

    @classmethod
    def parse(cls, pairs: list[str]) -> ResponseMapping:
        """From ``field=key`` pairs, e.g. ``doc_id=file_id results=data.items``."""
        values: dict[str, str] = {}
        for pair in pairs:
            name, sep, key = pair.partition("=")
            if not sep or name not in cls.__dataclass_fields__ or not key:
                known = ", ".join(cls.__dataclass_fields__)
                raise ValueError(f"bad field mapping {pair!r}: use FIELD=KEY with FIELD one of {known}")
            values[name] = key
        return cls(**values)


def _dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def parse_hits(data: dict[str, Any], mapping: ResponseMapping) -> list[RunHit]:
    rows = _dig(data, mapping.results)
    if not isinstance(rows, list):
        raise TargetError(f"response has no list at {mapping.results!r}", retryable=False)
    hits = []
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict) or _dig(row, mapping.doc_id) is None:
            raise TargetError(f"result {i} has no {mapping.doc_id!r}", retryable=False)
        version = _dig(row, mapping.version_id)
        score = _dig(row, mapping.score)
        rank = _dig(row, mapping.rank)
        hits.append(
            RunHit(
                doc_id=str(_dig(row, mapping.doc_id)),
                version_id=None if version is None else str(version),
                score=None if score is None else float(score),
                rank=int(rank) if isinstance(rank, int) else i,
            )
        )
    return hits


class HttpTarget:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        mapping: ResponseMapping | None = None,
        timeout: float = 30.0,
        path: str = "/api/mcp/recall",
        transport: httpx.AsyncBaseTransport | None = None,
        answer_path: str = "/api/mcp/answer",
        citation_style: str = "brackets",
    ) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith(path) else base + path
        root = base[: -len(path)] if base.endswith(path) else base
        self.answer_url = root + answer_path
        self.citation_style = citation_style
        self.name = f"http:{self.url}"
        self.mapping = mapping or ResponseMapping()
        self._client = httpx.AsyncClient(
            timeout=timeout, headers={"Authorization": f"Bearer {token}"}, transport=transport
        )

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await self._post(self.url, request_body(query, top_k))

    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
        """Recall plus a generated answer with citations (``POST /api/mcp/answer``)."""
        return await self._post(self.answer_url, {**request_body(query, top_k), "citation_style": self.citation_style})

    async def _post(self, url: str, body: dict[str, Any]) -> TargetResponse:
        try:
            resp = await self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise TargetError(f"timeout: {type(exc).__name__}", retryable=True) from exc
        except httpx.TransportError as exc:
            raise TargetError(f"connection error: {type(exc).__name__}: {exc}", retryable=True) from exc
        if resp.status_code == 429 or resp.status_code >= 500:
            retry_after = resp.headers.get("retry-after")
            delay = float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else None
            raise TargetError(f"HTTP {resp.status_code}: {resp.text[:200]}", retryable=True, retry_after=delay)
        if resp.status_code != 200:
            raise TargetError(f"HTTP {resp.status_code}: {resp.text[:300]}", retryable=False)
        try:
            data = resp.json()
        except ValueError as exc:
            raise TargetError("response is not JSON", retryable=False) from exc
        if not isinstance(data, dict):
            raise TargetError("response is not a JSON object", retryable=False)
        answer = _dig(data, self.mapping.answer)
        return TargetResponse(
            hits=parse_hits(data, self.mapping),
            as_of=data.get("as_of"),
            snapshot=data.get("snapshot"),
            answer=answer if isinstance(answer, str) else None,
            raw=data,
        )

    async def aclose(self) -> None:
        await self._client.aclose()
