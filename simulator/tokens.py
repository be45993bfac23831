"""Bearer tokens: one per corpus user plus two service tokens, derived from a secret.

* a user token acts as that user (scope ``recall``), and only as that user;
* the evaluation token (scope ``evaluate-as``) may evaluate as any ``user_id`` or ``user_role``
  (+ ``department``); every such request is logged with the caller;
* the admin token (scopes ``admin``, ``evaluate-as``) also reaches the ``/_sim`` control plane.

Tokens are HMAC-SHA256(secret, corpus name + subject), so the same corpus and secret always give
the same tokens (``drivebench tokens`` prints them). The secret defaults to a development value;
set ``DRIVEBENCH_TOKEN_SECRET`` to make tokens unguessable.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

from drivebench.simulator.drive.state import Drive

DEV_SECRET = "drivebench-development-secret"
EVAL_SERVICE = "svc:evaluator"
ADMIN_SERVICE = "svc:admin"


@dataclass(frozen=True)
class TokenInfo:
    token: str
    subject: str  # a user_id, or svc:evaluator / svc:admin
    scopes: tuple[str, ...]

    @property
    def user_id(self) -> str | None:
        return None if self.subject.startswith("svc:") else self.subject

    def has(self, scope: str) -> bool:
        return scope in self.scopes


def _secret() -> bytes:
    return os.environ.get("DRIVEBENCH_TOKEN_SECRET", DEV_SECRET).encode()


def make_token(corpus: str, subject: str, secret: bytes | None = None) -> str:
    mac = hmac.new(secret or _secret(), f"{corpus}\x00{subject}".encode(), hashlib.sha256).hexdigest()
    prefix = "dbs" if subject.startswith("svc:") else "dbu"
    return f"{prefix}_{mac[:40]}"


class TokenRegistry:
    def __init__(self, drive: Drive, secret: bytes | None = None) -> None:
        self._by_token: dict[str, TokenInfo] = {}
        for user_id in sorted(drive.users):
            self._add(TokenInfo(make_token(drive.name, user_id, secret), user_id, ("recall",)))
        self._add(TokenInfo(make_token(drive.name, EVAL_SERVICE, secret), EVAL_SERVICE, ("recall", "evaluate-as")))
        self._add(
            TokenInfo(make_token(drive.name, ADMIN_SERVICE, secret), ADMIN_SERVICE, ("recall", "evaluate-as", "admin"))
        )

    def _add(self, info: TokenInfo) -> None:
        self._by_token[info.token] = info

    def resolve(self, token: str) -> TokenInfo | None:
        # Compare in constant time against the candidate with the same value (dict lookup, then hmac).
        info = self._by_token.get(token)
        if info is None or not hmac.compare_digest(info.token, token):
            return None
        return info

    def for_subject(self, subject: str) -> TokenInfo:
        return next(i for i in self._by_token.values() if i.subject == subject)

    @property
    def eval_token(self) -> str:
        return self.for_subject(EVAL_SERVICE).token

    @property
    def admin_token(self) -> str:
        return self.for_subject(ADMIN_SERVICE).token

    def all(self) -> list[TokenInfo]:
        return sorted(self._by_token.values(), key=lambda i: i.subject)
