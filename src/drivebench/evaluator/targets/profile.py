"""Target profiles: how to call a recall endpoint and read its answer, as a TOML file.

``load_profile(path)`` reads the file; ``TargetProfile()`` is the simulator's shape (the built-in
default). The format (every table and key is optional)::

    [request]
    url = "http://127.0.0.1:9000/api/mcp/recall"   # the full URL; nothing is appended
    method = "POST"                                 # POST sends the body as JSON; GET as query parameters
    headers = { "X-Tenant" = "acme" }
    timeout_s = 30
    concurrency = 8
    answer_url = "..."                              # only for --answers (default: .../api/mcp/answer)
    [request.body]       # "${name}" alone becomes that typed value; inside a longer string it is text;
    query = "${query}"   # a key whose value is missing is dropped.
    top_k = "${top_k}"   # names: query, top_k, user_id, user_role, department, as_of, query_id
    [auth]
    token = "..."        # or token_env = "VAR", or tokens_file = "tokens.json" (principal -> token)
    header = "Authorization"                        # and scheme = "Bearer" ("" sends the bare token)
    [response]
    results = "data.items"     # dotted path to the result list
    doc_id = "fileId"
    version_id = "versionId"   # or version = "versionNo" (the version number 1..n)
    score = "score"
    text = "content"
    ok_when = { path = "code", equals = 0 }    # for APIs that answer errors with HTTP 200
    message = "msg"                            # where such an error says why (shown in reports)
    [ids]
    match = "path"   # "doc_id" | "path" | "name" | a CSV/JSONL file mapping foreign id -> doc_id

``tokens_file`` is a JSON object keyed by principal: a user id, ``role:<role>`` (or the bare role
name), and optionally ``*`` for everyone else. Relative file names are relative to the profile.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from drivebench.formats.evalset import EvalQuery

SIMULATOR_RECALL_PATH = "/api/mcp/recall"
SIMULATOR_ANSWER_PATH = "/api/mcp/answer"
TEMPLATE_NAMES = ("query", "top_k", "user_id", "user_role", "department", "as_of", "query_id")
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

SIMULATOR_BODY: dict[str, Any] = {
    "query": "${query}",
    "top_k": "${top_k}",
    "user_id": "${user_id}",
    "user_role": "${user_role}",
    "department": "${department}",
    "as_of": "${as_of}",
}

_SIMULATOR_BODY_KEYS = ", ".join(f'`{key} = "{value}"`' for key, value in SIMULATOR_BODY.items())  # for the docs


class ProfileError(ValueError):
    """A profile that cannot be used (a configuration error: exit code 2)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequestSpec(_Strict):
    url: str | None = Field(
        default=None,
        description="The full URL of the recall endpoint; nothing is appended. `--target` overrides it (a "
        "`--target` without a path keeps this path on the host it names).",
    )
    method: str = Field(default="POST", description="`POST` sends the body as JSON, `GET` as query parameters.")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description='Extra HTTP headers sent with every request, e.g. `{ "X-Tenant" = "acme" }`.',
    )
    timeout_s: float = Field(
        default=30.0, gt=0, le=3600, description="Seconds to wait for each answer (at most 3600); `--timeout` wins."
    )
    concurrency: int = Field(
        default=8, ge=1, le=256, description="Requests in flight (1 to 256); `--concurrency` wins."
    )
    body: dict[str, Any] = Field(
        default_factory=lambda: dict(SIMULATOR_BODY),
        description='The body template, a table of its own: a value that is exactly `"${name}"` becomes that '
        "typed value, `${name}` inside a longer string is text, and a key whose value is missing is dropped. "
        f"Names: {', '.join(TEMPLATE_NAMES)}. Default: the simulator's, {_SIMULATOR_BODY_KEYS}.",
    )
    answer_url: str | None = Field(
        default=None,
        description="The answer endpoint `--answers` asks: the same body plus `citation_style`, answered with the "
        "results and a generated answer citing them (read by `[response] answer`). Source Recall Coverage and "
        f"citation precision need it. Default: `{SIMULATOR_ANSWER_PATH}` on the recall URL's host (the "
        "simulator's); a 404 there names the URL tried.",
    )

    @field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        if value.upper() not in ("POST", "GET"):
            raise ValueError(f"method must be POST or GET, got {value!r}")
        return value.upper()


class AuthSpec(_Strict):
    token: str | None = Field(
        default=None,
        description="The token itself. Give one of `token`, `token_env` or `tokens_file`; `--token` overrides "
        "them all, and without any of them `DRIVEBENCH_TOKEN` is used.",
    )
    token_env: str | None = Field(default=None, description="The name of the environment variable holding the token.")
    tokens_file: str | None = Field(
        default=None,
        description="A JSON object principal -> token (a user id, `role:<role>` or the bare role name, and "
        "optionally `*` for everyone else): each query is sent with its principal's token. Relative to the profile.",
    )
    header: str = Field(default="Authorization", description="The header the token is sent in.")
    scheme: str = Field(
        default="Bearer", description='Written before the token (`Bearer <token>`); `""` sends the bare token.'
    )


class OkWhen(_Strict):
    path: str = Field(description="Dotted path to the value that says whether the call succeeded.")
    equals: Any = Field(description="That value, with its type, on success; anything else is a failed query.")


class ResponseSpec(_Strict):
    results: str = Field(default="results", description="Dotted path to the result list.")
    doc_id: str = Field(
        default="doc_id", description="A result's document id (dotted path); `[ids] match` maps it to the corpus."
    )
    version_id: str | None = Field(
        default="version_id",
        description="A result's version id; a number 1..n is taken as that version of the document.",
    )
    version: str | None = Field(
        default=None, description="A result's version number 1..n, for APIs that give numbers, not version ids."
    )
    score: str | None = Field(default="score", description="A result's score (a number).")
    rank: str | None = Field(
        default="rank", description="A result's rank (an integer); without one, its place in the list."
    )
    text: str | None = Field(
        default=None, description="A result's passage text: kept in run.jsonl (500 characters) for reading, not scored."
    )
    name: str | None = Field(default=None, description="A result's file name, shown in the reports.")
    answer: str = Field(
        default="answer",
        description="Dotted path to the generated answer in the answer endpoint's response (`--answers`): the "
        "documents it cites (`--citation-style`) give Source Recall Coverage and citation precision.",
    )
    ok_when: OkWhen | None = Field(
        default=None,
        description='For APIs that answer errors with HTTP 200, e.g. `{ path = "code", equals = 0 }`: a 2xx '
        "response is a success only when the value at `path` equals `equals` (else a failed query, kind "
        "`app_error`).",
    )
    message: str | None = Field(
        default=None,
        description="Where such an error says why (shown in the reports); default: the first of msg, message, "
        "error.message, error, errmsg.",
    )

    def override(self, pairs: list[str]) -> ResponseSpec:
        """A copy with ``FIELD=KEY`` pairs applied (``--field doc_id=fileId``); ValueError when bad."""
        values: dict[str, str] = {}
        known = [f for f in type(self).model_fields if f != "ok_when"]
        for pair in pairs:
            name, sep, key = pair.partition("=")
            if not sep or name not in known or not key:
                raise ValueError(f"bad field mapping {pair!r}: use FIELD=KEY with FIELD one of {', '.join(known)}")
            values[name] = key
        return self.model_copy(update=values)

    @classmethod
    def parse(cls, pairs: list[str]) -> ResponseSpec:
        """From ``field=key`` pairs, e.g. ``doc_id=file_id results=data.items``."""
        return cls().override(pairs)


class IdsSpec(_Strict):
    match: str = Field(
        default="doc_id",
        description="How result ids map to the corpus (needs `--corpus`): `doc_id` (they are its ids), `path` (a "
        "drive path, current or past), `name` (a unique file name), or a CSV/JSONL map file, relative to the "
        "profile. `--match` wins.",
    )


class TargetProfile(_Strict):
    request: RequestSpec = Field(default_factory=RequestSpec)
    auth: AuthSpec = Field(default_factory=AuthSpec)
    response: ResponseSpec = Field(default_factory=ResponseSpec)
    ids: IdsSpec = Field(default_factory=IdsSpec)
    source: str | None = None  # the file it was read from (relative paths resolve against it)

    # ------------------------------------------------------------------ files
    def resolve_path(self, name: str) -> Path:
        path = Path(name).expanduser()
        if not path.is_absolute() and self.source:
            path = Path(self.source).parent / path
        return path

    # ------------------------------------------------------------------ auth
    def tokens(self) -> tuple[str | None, dict[str, str]]:
        """``(single token, per-principal tokens)`` from ``[auth]``; ProfileError when unusable."""
        a = self.auth
        given = [x for x in (a.token, a.token_env, a.tokens_file) if x]
        if len(given) > 1:
            raise ProfileError("[auth]: give one of token, token_env or tokens_file")
        if a.token_env:
            value = os.environ.get(a.token_env)
            if not value:
                raise ProfileError(f"[auth] token_env: the environment variable {a.token_env} is not set")
            return value, {}
        if a.tokens_file:
            path = self.resolve_path(a.tokens_file)
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ProfileError(f"[auth] tokens_file {path}: {exc}") from None
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise ProfileError(f"[auth] tokens_file {path}: must be a JSON object principal -> token")
            return None, {str(k): v for k, v in data.items()}
        return a.token, {}

    # ------------------------------------------------------------------ body
    def check_body(self) -> None:
        for name in _names(self.request.body):
            if name not in TEMPLATE_NAMES:
                raise ProfileError(
                    f"[request.body]: unknown placeholder ${{{name}}}; known: {', '.join(TEMPLATE_NAMES)}"
                )


def template_values(query: EvalQuery, top_k: int) -> dict[str, Any]:
    return {
        "query": query.query,
        "top_k": top_k,
        "user_id": query.user_id,
        "user_role": query.user_role,
        "department": query.department,
        "as_of": None if query.as_of is None else query.as_of.isoformat(),
        "query_id": query.query_id,
    }


_MISSING = object()


def render(template: Any, values: dict[str, Any]) -> Any:
    """Fill a body template (see the module docs); keys whose value is missing are dropped."""
    if isinstance(template, dict):
        out = {}
        for key, sub in template.items():
            value = render(sub, values)
            if value is not _MISSING:
                out[key] = value
        return out
    if isinstance(template, list):
        return [v for v in (render(x, values) for x in template) if v is not _MISSING]
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole:
            value = values.get(whole.group(1))
            return _MISSING if value is None else value
        names = _PLACEHOLDER.findall(template)
        if names and any(values.get(n) is None for n in names):
            return _MISSING
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
    return template


def placeholder_names(template: Any) -> list[str]:
    """The ``${name}`` placeholders of a body template, in order (``user_id``, ``as_of`` ...)."""
    return _names(template)


def _names(template: Any) -> list[str]:
    if isinstance(template, dict):
        return [n for v in template.values() for n in _names(v)]
    if isinstance(template, list):
        return [n for v in template for n in _names(v)]
    if isinstance(template, str):
        return _PLACEHOLDER.findall(template)
    return []


def load_profile(path: str | Path) -> TargetProfile:
    """Read a TOML target profile; ProfileError (one line, with the file name) when it is invalid."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: not valid TOML ({exc})") from None
    try:
        profile = TargetProfile.model_validate({**data, "source": str(path)})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProfileError(f"{path}: [{where}] {first['msg']} ({len(exc.errors())} problem(s))") from None
    profile.check_body()
    return profile


def simulator_url(url: str) -> str:
    """``--target URL``: a URL without a path means the simulator's recall path; with a path, as given."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ProfileError(f"--target {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8000)")
    if parts.path in ("", "/"):
        return urlunsplit((parts.scheme, parts.netloc, SIMULATOR_RECALL_PATH, parts.query, ""))
    return url


def with_target(profile: TargetProfile, url: str) -> str:
    """The URL ``--target`` gives, under ``profile``: with a path, as given; without one, the
    profile's path (else the simulator's) on the given host."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ProfileError(f"--target {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8000)")
    if parts.path not in ("", "/"):
        return url
    if profile.request.url:
        old = urlsplit(profile.request.url)
        return urlunsplit((parts.scheme, parts.netloc, old.path, old.query, ""))
    return simulator_url(url)


def answer_url_for(recall_url: str) -> str:
    """The simulator's answer endpoint beside its recall endpoint."""
    if recall_url.rstrip("/").endswith(SIMULATOR_RECALL_PATH):
        return recall_url.rstrip("/")[: -len(SIMULATOR_RECALL_PATH)] + SIMULATOR_ANSWER_PATH
    parts = urlsplit(recall_url)
    return urlunsplit((parts.scheme, parts.netloc, SIMULATOR_ANSWER_PATH, "", ""))
