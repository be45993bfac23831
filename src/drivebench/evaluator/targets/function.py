"""A Python function as the target: ``fn(query, principal, top_k, as_of) -> hits``.

For a retriever that lives in the caller's process (a LlamaIndex or LangChain retriever, a team's own code):
no server needed. ``principal`` is ``{"user_id", "user_role", "department"}`` as the eval query names it (absent
keys are None) and ``as_of`` the query's instant (a ``datetime``, or None for now). ``fn`` may be a plain or an
``async`` function; a plain one runs in a worker thread, so several queries are in flight as with HTTP.

Each hit is a document id (``str``), a mapping with ``doc_id`` (and optionally ``version_id``, ``score``), or an
object with those attributes (drivebench's own ``RecallHit`` is one). Anything else is a ``bad_shape`` error, an
exception from ``fn`` is an ``other`` error: a failed call is counted as a failure, never as an empty result.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

from drivebench.formats.evalset import EvalQuery, RunHit
from drivebench.formats.target import TargetError, TargetResponse

RecallFunction = Callable[[str, dict[str, str | None], int, datetime | None], Any]


def _hit(item: Any, rank: int) -> RunHit:
    if isinstance(item, RunHit):
        return item
    if isinstance(item, str):
        fields: dict[str, Any] = {"doc_id": item}
    elif isinstance(item, Mapping):
        fields = {k: item[k] for k in ("doc_id", "version_id", "score") if k in item}
    else:
        fields = {k: getattr(item, k) for k in ("doc_id", "version_id", "score") if hasattr(item, k)}
    doc_id = fields.get("doc_id")
    if not isinstance(doc_id, str) or not doc_id:
        raise TargetError(
            f"hit {rank} has no doc_id (got {type(item).__name__}): return ids, or mappings/objects with doc_id",
            retryable=False,
            kind="bad_shape",
        )
    score = fields.get("score")
    return RunHit(
        doc_id=doc_id,
        version_id=fields.get("version_id") if isinstance(fields.get("version_id"), str) else None,
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
        rank=rank,
    )


class FunctionTarget:
    def __init__(self, fn: RecallFunction, name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"a function target must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or f"python:{getattr(fn, '__qualname__', type(fn).__name__)}"
        # a callable object is async when its __call__ is
        call = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        self._async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        principal = {"user_id": query.user_id, "user_role": query.user_role, "department": query.department}
        try:
            if self._async:
                returned = await self.fn(query.query, principal, top_k, query.as_of)
            else:
                returned = await asyncio.to_thread(self.fn, query.query, principal, top_k, query.as_of)
                if inspect.isawaitable(returned):
                    returned = await _awaited(returned)
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"the function raised {type(exc).__name__}: {exc}", retryable=False) from exc
        if returned is None or isinstance(returned, str | bytes | Mapping) or not hasattr(returned, "__iter__"):
            raise TargetError(
                f"the function returned {type(returned).__name__}, not a list of hits",
                retryable=False,
                kind="bad_shape",
            )
        hits = [_hit(item, rank) for rank, item in enumerate(returned, 1)]
        return TargetResponse(hits=hits, as_of=query.as_of.isoformat() if query.as_of else None)

    async def aclose(self) -> None:
        return None


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
