"""One probe request before a run: stop within seconds, with a diagnosis, when the target cannot work.

``await preflight(target, query, top_k)`` sends the first eval query once (no retries) and returns a
``Preflight``. ``fatal`` is true for every failure except HTTP 429 and 5xx (the run retries those,
and counts what still fails). The diagnosis names the problem and shows what was found, e.g.::

    results path data.items not found; top-level keys: code, msg, data
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from drivebench.evaluator.idmap import IdMapper
from drivebench.evaluator.targets.profile import SIMULATOR_RECALL_PATH
from drivebench.formats.evalset import EvalQuery, RunHit, RunRecord
from drivebench.formats.target import Target, TargetError

NOT_FATAL = ("http_429", "http_5xx")


@dataclass
class Preflight:
    ok: bool
    fatal: bool
    kind: str | None
    diagnosis: str
    seconds: float
    results: int = 0
    query_id: str | None = None
    hits: list[RunHit] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("hits", None)
        return out

    def check_ids(self, mapper: IdMapper | None) -> Preflight:
        """Fatal when the probe's results exist but none maps to a corpus document."""
        if mapper is None or not self.ok or not self.hits:
            return self
        rec = RunRecord(query_id=self.query_id or "probe", results=self.hits)
        (mapped,), _ = mapper.map_records([rec])
        if mapped.error_kind == "unmapped":
            self.ok, self.fatal, self.kind = False, True, "unmapped"
            self.diagnosis = f"ids do not map: {mapped.error}; check [ids] match or give a map file"
        return self


def _principal(q: EvalQuery) -> str:
    return f"user {q.user_id}" if q.user_id else f"role {q.user_role}"


def diagnose(kind: str, message: str, url: str, q: EvalQuery) -> str:
    """The one-line diagnosis of a failed probe."""
    if kind == "connection":
        return f"cannot connect to {url}: {message} (is the server running, and is the host/port right?)"
    if kind == "timeout":
        return f"no answer from {url}: {message}"
    if kind == "http_401":
        return f"HTTP 401 Unauthorized from {url}: the token was rejected (check --token or [auth]); {message}"
    if kind == "http_403":
        return (
            f"HTTP 403 Forbidden from {url} for {_principal(q)}: the token may not recall as this principal "
            f"(a service token needs the right to act for others, or give tokens_file); {message}"
        )
    if kind == "http_404":
        return (
            f"HTTP 404 Not Found at {url}: no recall endpoint there (check the URL path; "
            f"--target without a path means {SIMULATOR_RECALL_PATH}); {message}"
        )
    if kind == "http_4xx":
        return f"the endpoint rejected the request: {message} (check [request.body] and the method)"
    if kind == "app_error":
        return f"the endpoint answered 2xx but {message}"
    if kind == "not_json":
        return f"{message} (is {url} the recall API?)"
    if kind == "bad_shape":
        return message
    return message


async def preflight(target: Target, query: EvalQuery, top_k: int, mode: str = "recall") -> Preflight:
    url = getattr(target, "url", getattr(target, "name", "the target"))
    started = time.perf_counter()
    try:
        resp = await getattr(target, mode)(query, top_k)
    except TargetError as exc:
        return Preflight(
            ok=False,
            fatal=exc.kind not in NOT_FATAL,
            kind=exc.kind,
            diagnosis=diagnose(exc.kind, str(exc), str(url), query),
            seconds=round(time.perf_counter() - started, 3),
            query_id=query.query_id,
        )
    except Exception as exc:  # a target bug
        return Preflight(
            ok=False,
            fatal=True,
            kind="other",
            diagnosis=f"{type(exc).__name__}: {exc}",
            seconds=round(time.perf_counter() - started, 3),
            query_id=query.query_id,
        )
    n = len(resp.hits)
    return Preflight(
        ok=True,
        fatal=False,
        kind=None,
        diagnosis=f"ok: {n} result(s) for {query.query_id} as {_principal(query)}",
        seconds=round(time.perf_counter() - started, 3),
        results=n,
        query_id=query.query_id,
        hits=list(resp.hits),
    )
