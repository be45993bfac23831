"""An HTTP recall endpoint: the simulator, or any real one described by a target profile.

``HttpTarget(url, token)`` speaks the simulator's shape (``POST /api/mcp/recall``); give
``profile=`` (``targets.profile.TargetProfile``) for another vendor's URL, method, headers, body
template, per-principal tokens and response mapping. ``answer`` posts the same body plus
``citation_style`` to the answer endpoint and reads ``answer`` from the response.

Every failure raises ``TargetError`` with a ``kind`` (``targets.base.ERROR_KINDS``): connection
errors, timeouts, HTTP >= 400, a 2xx whose body says it failed (``ok_when``), a body that is not
JSON or does not fit the mapping. Only 429, 5xx, timeouts and connection errors are retried.
"""

from __future__ import annotations

from typing import Any

import httpx

from drivebench.evaluator.targets.profile import (
    ResponseSpec,
    TargetProfile,
    answer_url_for,
    render,
    simulator_url,
    template_values,
)
from drivebench.formats.evalset import EvalQuery, RunHit
from drivebench.formats.target import TargetError, TargetResponse, http_error_kind

ResponseMapping = ResponseSpec  # the name older code uses
_MISSING = object()


def _dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def _keys(obj: Any) -> str:
    if isinstance(obj, dict):
        return ", ".join(map(str, list(obj)[:12])) or "(none)"
    return f"(a {type(obj).__name__}, not an object)"


def missing_path(data: Any, path: str) -> str:
    """Why ``path`` is not a list in ``data``, e.g. ``results path data.items not found; top-level
    keys: code, msg, data``."""
    found, obj = [], data
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            found.append(part)
            obj = obj[part]
            continue
        text = f"results path {path} not found; top-level keys: {_keys(data)}"
        if found:
            text += f"; {'.'.join(found)} has keys: {_keys(obj)}"
        return text
    return f"results path {path} is not a list (it is {type(obj).__name__})"


def parse_hits(data: dict[str, Any], mapping: ResponseSpec) -> list[RunHit]:
    rows = _dig(data, mapping.results)
    if not isinstance(rows, list):
        raise TargetError(missing_path(data, mapping.results), retryable=False, kind="bad_shape")
    hits = []
    for i, row in enumerate(rows, 1):
        doc = _dig(row, mapping.doc_id) if isinstance(row, dict) else None
        if doc is None or isinstance(doc, dict | list) or doc == "":
            keys = _keys(row) if isinstance(row, dict) else type(row).__name__
            raise TargetError(
                f"result {i} has no {mapping.doc_id!r} (its keys: {keys})", retryable=False, kind="bad_shape"
            )
        version = _dig(row, mapping.version_id) if mapping.version_id else None
        score = _dig(row, mapping.score) if mapping.score else None
        rank = _dig(row, mapping.rank) if mapping.rank else None
        extra: dict[str, Any] = {}
        if mapping.version:
            number = _dig(row, mapping.version)
            if number is not None:
                extra["version_no"] = str(number)
        if mapping.name and _dig(row, mapping.name) is not None:
            extra["name"] = str(_dig(row, mapping.name))
        if mapping.text and isinstance(_dig(row, mapping.text), str):
            extra["text"] = _dig(row, mapping.text)[:500]  # kept in run.jsonl for reading, not scored
        try:
            score_value = None if score is None else float(score)
        except (TypeError, ValueError):
            raise TargetError(
                f"result {i}: score {score!r} is not a number", retryable=False, kind="bad_shape"
            ) from None
        hits.append(
            RunHit(
                doc_id=str(doc),
                version_id=None if version is None else str(version),
                score=score_value,
                rank=int(rank) if isinstance(rank, int) and not isinstance(rank, bool) else i,
                **extra,
            )
        )
    return hits


def check_ok(data: dict[str, Any], mapping: ResponseSpec) -> None:
    """Raise ``app_error`` when ``ok_when`` says the 2xx answer is a failure."""
    ok = mapping.ok_when
    if ok is None:
        return
    value = _dig(data, ok.path)
    if value == ok.equals and type(value) is type(ok.equals):
        return
    said = ""
    for path in [mapping.message] if mapping.message else ["msg", "message", "error.message", "error", "errmsg"]:
        text = _dig(data, path) if path else None
        if isinstance(text, str | int | float) and str(text):
            said = f"; {path}: {str(text)[:200]}"
            break
    shown = repr(value) if value is not None else "missing"
    raise TargetError(
        f"response says it failed: {ok.path} = {shown} (expected {ok.equals!r}){said}",
        retryable=False,
        kind="app_error",
    )


def _root_cause(exc: BaseException) -> str:
    """`` (connection refused)`` and the like, from the OS error under httpx's generic message."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError):
            return " (connection refused)"
        if isinstance(cur, OSError) and cur.strerror:
            return f" ({cur.strerror.lower()})"
        cur = cur.__cause__ or cur.__context__
        if isinstance(cur, BaseExceptionGroup) and cur.exceptions:
            cur = cur.exceptions[0]
    return ""


class HttpTarget:
    def __init__(
        self,
        url: str | None,
        token: str | None,
        *,
        mapping: ResponseSpec | None = None,
        timeout: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        citation_style: str = "brackets",
        profile: TargetProfile | None = None,
        tokens: dict[str, str] | None = None,
    ) -> None:
        self.profile = profile or TargetProfile()
        req = self.profile.request
        if url is None:
            url = req.url
        if not url:
            raise ValueError("no URL: give --target or [request] url")
        self.url = url if profile is not None else simulator_url(url)
        self.answer_url = req.answer_url or answer_url_for(self.url)
        self.citation_style = citation_style
        self.name = self.url  # the URL says it is HTTP ("http:http://..." read twice)
        self.mapping = mapping or self.profile.response
        self.method = req.method
        self.body_template = req.body
        self.token = token
        self.tokens = tokens or {}
        self.auth_header, self.auth_scheme = self.profile.auth.header, self.profile.auth.scheme
        self.timeout = timeout if timeout is not None else req.timeout_s
        self._client = httpx.AsyncClient(
            timeout=self.timeout, headers=dict(req.headers), transport=transport, follow_redirects=True
        )

    # ------------------------------------------------------------------ principals and tokens
    def token_for(self, query: EvalQuery) -> str | None:
        """The token of the query's principal: per-principal tokens first, else the single token."""
        if self.tokens:
            for key in (query.user_id, f"role:{query.user_role}" if query.user_role else None, query.user_role, "*"):
                if key and key in self.tokens:
                    return self.tokens[key]
            return None
        return self.token

    def missing_tokens(self, queries: list[EvalQuery]) -> list[str]:
        """Principals of ``queries`` that have no token (empty when every query can be sent)."""
        if not self.tokens:
            return []
        return sorted({q.user_id or f"role:{q.user_role}" for q in queries if self.token_for(q) is None})

    def body(self, query: EvalQuery, top_k: int) -> dict[str, Any]:
        return render(self.body_template, template_values(query, top_k))

    # ------------------------------------------------------------------ calls
    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await self._send(self.url, self.body(query, top_k), self.token_for(query))

    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
        """Recall plus a generated answer with citations (``POST /api/mcp/answer``)."""
        return await self.send_body("answer", self.body(query, top_k), self.token_for(query))

    async def send_body(self, surface: str, body: dict[str, Any], token: str | None) -> TargetResponse:
        """Send ``body`` as it is with ``token`` to the ``recall`` or ``answer`` surface: for probes whose
        body and token do not come from one eval query's principal (a body naming someone the token is not)."""
        if surface == "answer":
            return await self._send(self.answer_url, {**body, "citation_style": self.citation_style}, token)
        return await self._send(self.url, body, token)

    async def _send(self, url: str, body: dict[str, Any], token: str | None) -> TargetResponse:
        headers = {}
        if token:
            headers[self.auth_header] = f"{self.auth_scheme} {token}".strip() if self.auth_scheme else token
        try:
            if self.method == "GET":
                params = {k: v if isinstance(v, str) else str(v) for k, v in body.items()}
                resp = await self._client.get(url, params=params, headers=headers)
            else:
                resp = await self._client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise TargetError(
                f"timeout: no answer within {self.timeout:g} s ({type(exc).__name__})", retryable=True, kind="timeout"
            ) from exc
        except httpx.TransportError as exc:
            raise TargetError(
                f"connection error: {type(exc).__name__}: {exc}{_root_cause(exc)}", retryable=True, kind="connection"
            ) from exc
        status = resp.status_code
        if status == 429 or status >= 500:
            retry_after = resp.headers.get("retry-after")
            delay = float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else None
            raise TargetError(
                f"HTTP {status}: {resp.text[:200]}", retryable=True, retry_after=delay, kind=http_error_kind(status)
            )
        if status >= 300:
            raise TargetError(f"HTTP {status}: {resp.text[:300]}", retryable=False, kind=http_error_kind(status))
        try:
            data = resp.json()
        except ValueError as exc:
            raise TargetError(
                f"response is not JSON (content-type {resp.headers.get('content-type', '?')}): {resp.text[:120]!r}",
                retryable=False,
                kind="not_json",
            ) from exc
        if not isinstance(data, dict):
            raise TargetError(
                f"response is not a JSON object but a {type(data).__name__}", retryable=False, kind="not_json"
            )
        check_ok(data, self.mapping)
        answer = _dig(data, self.mapping.answer)
        return TargetResponse(
            hits=parse_hits(data, self.mapping),
            as_of=data.get("as_of") if isinstance(data.get("as_of"), str) else None,
            snapshot=data.get("snapshot") if isinstance(data.get("snapshot"), str) else None,
            answer=answer if isinstance(answer, str) else None,
            raw=data,
            faults=resp.headers.get("x-drivebench-faults"),  # what the simulator ran with
        )

    async def aclose(self) -> None:
        await self._client.aclose()
