"""Probe requests before a run: stop within seconds, with a diagnosis, when the target cannot work.

``await preflight(target, queries, top_k)`` sends the first eval query once (no retries) and, when it was
answered, one query of another asker (``other_asker``): a user's token answers its own user's questions and
is refused every other user's, so probing two askers tells such a token from the evaluation token before the
run sends anything else. It returns a ``Preflight``. ``fatal`` is true for every failure except HTTP 429 and
5xx (the run retries those, and counts what still fails). The diagnosis names the problem and shows what was
found, e.g.::

    results path data.items not found; top-level keys: code, msg, data
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from drivebench.evaluator.idmap import IdMapper
from drivebench.evaluator.targets.profile import SIMULATOR_ANSWER_PATH, SIMULATOR_RECALL_PATH
from drivebench.formats.evalset import EvalQuery, RunHit, RunRecord
from drivebench.formats.target import Target, TargetError

NOT_FATAL = ("http_429", "http_5xx")
HEALTH_PATH = "/healthz"  # the simulator's: it names the corpus it serves (to the admin token)


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


def _asker(q: EvalQuery) -> tuple[str | None, str | None, str | None]:
    return (q.user_id, q.user_role, q.department)


def other_asker(queries: Sequence[EvalQuery]) -> EvalQuery | None:
    """The first query asked by someone other than the first query's asker, None when one principal asks them
    all. Another user is preferred: a user's token may ask as its own user (and the roles it holds) only."""
    if not queries:
        return None
    first = queries[0]
    others = [q for q in queries[1:] if _asker(q) != _asker(first)]
    return next((q for q in others if q.user_id and q.user_id != first.user_id), others[0] if others else None)


# Said on every 403: the usual cause is a user's token given where the evaluation token belongs.
EVALUATE_AS_HINT = (
    "this token cannot evaluate as other users (a user's token acts as its own user only): run with the "
    "evaluation token, the one with scope evaluate-as (`drivebench tokens --corpus NAME` prints it), or give one "
    "token per principal ([auth] tokens_file)"
)


def diagnose(kind: str, message: str, url: str, q: EvalQuery, mode: str = "recall") -> str:
    """The one-line diagnosis of a failed probe; ``url`` is the one the request went to (with ``mode``
    "answer", the answer endpoint's)."""
    if kind == "connection":
        return f"cannot connect to {url}: {message} (is the server running, and is the host/port right?)"
    if kind == "timeout":
        return f"no answer from {url}: {message}"
    if kind == "http_401":
        return f"HTTP 401 Unauthorized from {url}: the token was rejected (check --token or [auth]); {message}"
    if kind == "http_403":
        return (
            f"HTTP 403 Forbidden from {url} for {_principal(q)}: the token may not recall as this principal; "
            f"{EVALUATE_AS_HINT}; {message}"
        )
    if kind == "http_404" and mode == "answer":
        return (
            f"HTTP 404 Not Found at {url}: no answer endpoint there (--answers asks the answer endpoint: set "
            f"[request] answer_url in the target profile; without it, {SIMULATOR_ANSWER_PATH} on the recall URL's "
            f"host); {message}"
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
        return f"{message} (is {url} the {mode} API?)"
    if kind == "bad_shape":
        return message
    return message


def _endpoint(target: Target, mode: str) -> str:
    """The URL a ``mode`` request goes to: an answer goes to the target's answer endpoint (``[request]
    answer_url``), not to its recall URL."""
    answer_url = getattr(target, "answer_url", None) if mode == "answer" else None
    return str(answer_url or getattr(target, "url", getattr(target, "name", "the target")))


async def _probe(target: Target, query: EvalQuery, top_k: int, mode: str) -> Preflight:
    """One request for ``query``, never retried."""
    url = _endpoint(target, mode)
    started = time.perf_counter()
    try:
        resp = await getattr(target, mode)(query, top_k)
    except TargetError as exc:
        return Preflight(
            ok=False,
            fatal=exc.kind not in NOT_FATAL,
            kind=exc.kind,
            diagnosis=diagnose(exc.kind, str(exc), url, query, mode),
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


async def preflight(
    target: Target, query: EvalQuery | Sequence[EvalQuery], top_k: int, mode: str = "recall"
) -> Preflight:
    """Probe the first query; given the eval set, also the first query of another asker (``other_asker``) once
    the first was answered. The first failure is the result; the hits are the first query's."""
    queries = [query] if isinstance(query, EvalQuery) else list(query)
    first = await _probe(target, queries[0], top_k, mode)
    other = other_asker(queries) if first.ok else None
    if other is None:
        return first
    second = await _probe(target, other, top_k, mode)
    if second.fatal:
        second.seconds = round(first.seconds + second.seconds, 3)
        second.diagnosis = f"{second.diagnosis} ({_principal(queries[0])} was answered, {_principal(other)} was not)"
        return second
    first.seconds = round(first.seconds + second.seconds, 3)
    first.diagnosis += (
        f"; {second.results} for {other.query_id} as {_principal(other)}"
        if second.ok
        else f"; {other.query_id} as {_principal(other)}: {second.kind} (the run retries it)"
    )
    return first


def served_corpus(url: str, token: str | None, timeout: float = 3.0) -> str | None:
    """The corpus a simulator-shaped target says it serves (``corpus_version``, else ``corpus``, of
    ``GET /healthz`` on its host), None when it says nothing: another kind of server, a token it tells nothing,
    no answer (the preflight diagnoses that)."""
    parts = urlsplit(url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        resp = httpx.get(
            urlunsplit((parts.scheme, parts.netloc, HEALTH_PATH, "", "")), headers=headers, timeout=timeout
        )
        body = resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    said = body.get("corpus_version") or body.get("corpus")
    return said if isinstance(said, str) and said else None
