"""The requests of ``probe --fail-safe``: the baseline recall request and every hostile variant of it.

Pure: nothing here sends anything (``failsafe`` does). Each case changes one thing of the baseline request, the
way a caller who is not who the baseline says would: no identity, a token that is not one, a token tampered
with or expired, a principal that names nobody, filters of the wrong shape, an instant a century ahead. A case
that cannot be expressed in the target's request shape (its body template has no such field) is not
applicable, never a silent pass.
"""

from __future__ import annotations

import base64
import json
import secrets
import string
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from drivebench.evaluator.targets.profile import (
    SIMULATOR_BODY,
    ResponseSpec,
    TargetProfile,
    placeholder_names,
    render,
)

DEFAULT_USER = "u001"  # the seed corpus's first user
# Queries that return documents to the seed corpus's users (the first that does is the baseline).
DEFAULT_QUERIES = (
    "项目X的技术方案审批人",
    "What caused the file preview outage INC-2026-0917?",
    "年假怎么规定的？",
    "What is the minimum password length for company accounts?",
)
MALFORMED_FILTERS: tuple[dict[str, Any], ...] = ({"folder": 12}, {"file_types": "pdf"}, {"nonsense": True})
CENTURY = timedelta(days=36525)
FAULTS_PATH = "/_sim/faults"
TOKENS_PATH = "/_sim/tokens"  # the simulator mints expiring user tokens there (admin token)
OUTAGE_FAULT = "permission-outage"
BODY_IDENTITY = "body-identity"
# Real principals of the seed corpus a body may claim (its finance manager sees what most users may not); the
# first that is not the baseline user's own is sent. Another corpus: the leak probe's body-identity class.
DEFAULT_CLAIMS: dict[str, tuple[str, ...]] = {
    "user_role": ("finance_manager", "manager"),
    "department": ("finance", "hr"),
    "user_id": ("u004", "u003"),
}


class FailSafeTarget(BaseModel):
    """How to call the target: what ``eval run``'s target options (``--target``/``--token`` or a profile)
    resolve to. ``simulator_shape``: the built-in body (the simulator's request, which has ``filters``)."""

    model_config = ConfigDict(frozen=True)

    url: str
    method: str = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body_template: dict[str, Any] = Field(default_factory=lambda: dict(SIMULATOR_BODY))
    simulator_shape: bool = True
    auth_header: str = "Authorization"
    auth_scheme: str = "Bearer"
    token: str | None = None
    mapping: ResponseSpec = Field(default_factory=ResponseSpec)
    timeout_s: float = Field(default=30.0, gt=0)
    top_k: int = Field(default=10, ge=1, le=100)

    @classmethod
    def from_profile(
        cls,
        profile: TargetProfile,
        url: str,
        token: str | None,
        *,
        mapping: ResponseSpec | None = None,
        timeout_s: float | None = None,
        top_k: int = 10,
    ) -> FailSafeTarget:
        """The target ``eval run`` would call: the profile's method, headers, body, auth and mapping at ``url``
        (``resolve_target``'s), authenticating with ``token``."""
        req = profile.request
        return cls(
            url=url,
            method=req.method,
            headers=dict(req.headers),
            body_template=req.body,
            simulator_shape=req.body == SIMULATOR_BODY,
            auth_header=profile.auth.header,
            auth_scheme=profile.auth.scheme,
            token=token,
            mapping=mapping or profile.response,
            timeout_s=timeout_s or req.timeout_s,
            top_k=top_k,
        )

    @property
    def fields(self) -> set[str]:
        """The template names the body carries (``user_id``, ``as_of`` ...)."""
        return set(placeholder_names(self.body_template))

    @property
    def carries_filters(self) -> bool:
        return self.method == "POST" and (self.simulator_shape or "filters" in self.body_template)

    @property
    def faults_url(self) -> str:
        """The simulator's fault API beside the recall URL (``PUT /_sim/faults``)."""
        return self._beside(FAULTS_PATH)

    @property
    def tokens_url(self) -> str:
        """The simulator's token minting beside the recall URL (``POST /_sim/tokens``)."""
        return self._beside(TOKENS_PATH)

    def _beside(self, path: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    def auth(self, credential: str | None) -> dict[str, str]:
        """The headers of a request that authenticates with ``credential`` as this target expects (None: none)."""
        others = {k: v for k, v in self.headers.items() if k.lower() != self.auth_header.lower()}
        if credential is None:
            return others
        value = f"{self.auth_scheme} {credential}".strip() if self.auth_scheme else credential
        return {**others, self.auth_header: value}

    def raw_auth(self, value: str) -> dict[str, str]:
        """The headers with the auth header set to exactly ``value``."""
        return {**self.auth(None), self.auth_header: value}

    def body(self, values: dict[str, Any], filters: Any = None) -> dict[str, Any]:
        """The template filled with ``values``; ``filters`` (when given) replaces or adds the ``filters`` key."""
        out: dict[str, Any] = render(self.body_template, values)
        if filters is not None:
            out["filters"] = filters
        return out


@dataclass(frozen=True)
class Request:
    """One recall request: its headers and body, and what makes it differ from the baseline, in words."""

    variant: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class Case:
    """A named check: the requests it sends (all must fail closed), or why it is not applicable."""

    name: str
    description: str
    requests: list[Request] = field(default_factory=list)
    not_applicable: str | None = None
    # a body-identity case is OPEN only for documents beyond these (the baseline's: a target that ignores the
    # claimed identity answers the token's own user, which is closed); None: any document is OPEN
    beyond: frozenset[str] | None = None


def baseline_values(user: str, query: str, top_k: int) -> dict[str, Any]:
    """Template values of the baseline: ``user`` asking ``query`` now (no role, department or instant)."""
    return {
        "query": query,
        "top_k": top_k,
        "user_id": user,
        "user_role": None,
        "department": None,
        "as_of": None,
        "query_id": "fail-safe",
    }


def baseline_request(target: FailSafeTarget, user: str, query: str) -> Request:
    values = baseline_values(user, query, target.top_k)
    return Request("the baseline: the real user with the real token", target.auth(target.token), target.body(values))


def nobody(kind: str | None = None) -> str:
    """A name that exists nowhere: ``zz-nobody-<random>`` (``zz-nobody-role-<random>`` ...), fresh per call."""
    return f"zz-nobody-{kind + '-' if kind else ''}{secrets.token_hex(4)}"


# ---------------------------------------------------------------------------------------------- tokens


def _rotate(ch: str, hexish: bool) -> str:
    for alphabet in (
        string.digits,
        "abcdef" if hexish else string.ascii_lowercase,
        "ABCDEF" if hexish else string.ascii_uppercase,
    ):
        if ch in alphabet:
            return alphabet[(alphabet.index(ch) + 1) % len(alphabet)]
    return ch


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in string.hexdigits for c in text)


def _split_prefix(token: str) -> tuple[str, str]:
    """``dbu_1f3c...`` -> (``dbu_``, ``1f3c...``): a short type prefix kept by tampering and forging."""
    for sep in ("_", "-"):
        head, found, tail = token.partition(sep)
        if found and 0 < len(head) <= 8 and tail:
            return head + sep, tail
    return "", token


def tampered(token: str, last: int = 4) -> str:
    """The token with its last ``last`` characters changed, each within its own character class (a hex
    token stays hex): what an attacker holding an old or a neighbour's token tries."""
    prefix, rest = _split_prefix(token)
    hexish = _is_hex(rest)
    head, tail = rest[:-last], rest[-last:]
    changed = "".join(_rotate(c, hexish) for c in tail)
    if changed == tail:  # nothing rotatable at the end (e.g. "=="): one character more
        changed = tail + "x"
    return prefix + head + changed


def forged(token: str) -> str:
    """A token of the same shape (prefix, length, character classes) that nobody ever issued."""
    prefix, rest = _split_prefix(token)
    hexish = _is_hex(rest)
    out = []
    for c in rest:
        if c in string.digits:
            out.append(secrets.choice(string.digits if not hexish else "0123456789abcdef"))
        elif c.isascii() and c.isalpha():
            pool = "abcdef" if hexish else (string.ascii_lowercase if c.islower() else string.ascii_uppercase)
            out.append(secrets.choice(pool))
        else:
            out.append(c)
    candidate = prefix + "".join(out)
    return candidate if candidate != token else tampered(token)


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def expired_jwt(token: str, now: datetime | None = None) -> str | None:
    """For a JWT (``header.payload.signature``): the same token with ``exp`` (and ``iat``/``nbf``) moved a
    day into the past, the original signature kept (an attacker cannot re-sign). None for any other token."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(_b64decode(parts[0]))
        payload = json.loads(_b64decode(parts[1]))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict) or "alg" not in header or not isinstance(payload, dict):
        return None
    moment = int((now or datetime.now(UTC)).timestamp())
    payload["exp"] = moment - 86400
    for claim in ("iat", "nbf"):
        if claim in payload:
            payload[claim] = moment - 2 * 86400
    body = _b64encode(json.dumps(payload, separators=(",", ":")).encode())
    return f"{parts[0]}.{body}.{parts[2]}"


# ---------------------------------------------------------------------------------------------- the cases


def plan(
    target: FailSafeTarget,
    user: str,
    query: str,
    now: datetime | None = None,
    expired_token: str | None = None,
    baseline_docs: frozenset[str] = frozenset(),
) -> list[Case]:
    """Every case but ``permission-outage`` (stateful: ``failsafe`` runs it), in report order. ``expired_token``:
    a token the drive itself issued for ``user`` and whose expiry has passed (the simulator mints one)."""
    values = baseline_values(user, query, target.top_k)
    base_body = target.body(values)
    real = target.auth(target.token)
    fields = target.fields
    cases = [
        Case(
            "no-identity",
            "no authentication header at all",
            [Request(f"no {target.auth_header} header", target.auth(None), base_body)],
        ),
        Case(
            "malformed-token",
            "an authentication header that carries no token",
            [
                Request(f"{target.auth_scheme or 'bare'} not-a-token", target.auth("not-a-token"), base_body),
                Request(
                    # a trailing space is stripped by any server (and refused by HTTP clients): the scheme alone
                    f"{target.auth_scheme} with empty credentials" if target.auth_scheme else "an empty token",
                    target.raw_auth(target.auth_scheme),
                    base_body,
                ),
            ],
        ),
        _expired_case(target, base_body, now, user, expired_token),
    ]
    if "user_id" in fields:
        cases.append(
            Case(
                "unknown-user",
                "the baseline body with a user_id that does not exist",
                [Request("user_id = a user that does not exist", real, target.body({**values, "user_id": nobody()}))],
            )
        )
    else:
        cases.append(Case("unknown-user", "user_id naming nobody", not_applicable="the body template has no user_id"))
    cases.append(body_identity_case(target, values, user, baseline_docs))
    cases.append(_unknown_field_case(target, values, "user_role", "unknown-role", "role"))
    cases.append(_unknown_field_case(target, values, "department", "unknown-department", "department"))
    if target.carries_filters:
        cases.append(
            Case(
                "malformed-filter",
                "filters of the wrong shape",
                [
                    Request(f"filters = {json.dumps(f)}", real, target.body(values, filters=f))
                    for f in MALFORMED_FILTERS
                ],
            )
        )
    else:
        cases.append(
            Case("malformed-filter", "filters of the wrong shape", not_applicable="the request shape has no filters")
        )
    if "as_of" in fields:
        future = ((now or datetime.now(UTC)) + CENTURY).replace(microsecond=0).isoformat()
        cases.append(
            Case(
                "future-as-of",
                "as_of a century in the future",
                [Request(f"as_of = {future}", real, target.body({**values, "as_of": future}))],
            )
        )
    else:
        cases.append(Case("future-as-of", "as_of a century ahead", not_applicable="the body template has no as_of"))
    return cases


def _expired_case(
    target: FailSafeTarget, body: dict[str, Any], now: datetime | None, user: str, expired: str | None
) -> Case:
    name, what = "expired-token", "a structurally valid token that is tampered with, forged or expired"
    token = target.token
    if not token:
        return Case(name, what, not_applicable="the baseline sends no token to tamper with")
    requests = [
        Request("the baseline token, last characters changed", target.auth(tampered(token)), body),
        Request("a token of the same shape nobody issued", target.auth(forged(token)), body),
    ]
    jwt = expired_jwt(token, now)
    if jwt is not None:
        requests.append(Request("the baseline JWT with exp in the past", target.auth(jwt), body))
    if expired is not None:
        requests.append(Request(f"a token the drive issued to {user}, expired", target.auth(expired), body))
    return Case(name, what, requests)


def _unknown_field_case(target: FailSafeTarget, values: dict[str, Any], key: str, name: str, kind: str) -> Case:
    """``user_role``/``department`` naming nothing: beside the baseline user, and (when the body names the
    user) as the only principal the request names."""
    what = f"{key} naming nothing"
    if key not in target.fields:
        return Case(name, what, not_applicable=f"the body template has no {key}")
    real = target.auth(target.token)
    bogus = nobody(kind)
    requests = [Request(f"the baseline user with {key} = {bogus}", real, target.body({**values, key: bogus}))]
    if "user_id" in target.fields:
        alone = target.body({**values, "user_id": None, key: bogus})
        requests.append(Request(f"{key} = {bogus} as the only principal", real, alone))
    return Case(name, what, requests)


def body_identity_case(
    target: FailSafeTarget, values: dict[str, Any], user: str, baseline_docs: frozenset[str]
) -> Case:
    """The real user's token with a body claiming a real other role, department or user (``DEFAULT_CLAIMS``), each
    as the only identity the body names. OPEN: documents the baseline did not return (the claimed identity's).
    The first request names nobody: a token that needs the body to name its principal (an evaluation token
    answers it with an error) may name anyone by right, so the case is then not applicable (``failsafe``)."""
    name, what = BODY_IDENTITY, "the real token with a body claiming a real other role, department or user"
    fields = [f for f in ("user_role", "department", "user_id") if f in target.fields]
    if not fields:
        return Case(name, what, not_applicable="the body template has no user_role, department or user_id")
    real = target.auth(target.token)
    bare = {**values, "user_id": None, "user_role": None, "department": None}
    requests = [
        Request("the baseline body naming nobody (does the token alone say who asks?)", real, target.body(bare))
    ]
    for f in fields:
        claim = next((v for v in DEFAULT_CLAIMS[f] if v != user), DEFAULT_CLAIMS[f][0])
        requests.append(Request(f"{f} = {claim} (a real other principal)", real, target.body({**bare, f: claim})))
    return Case(name, what, requests, beyond=baseline_docs)
