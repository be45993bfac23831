"""Bearer tokens: one per corpus user plus two service tokens, derived from a secret.

* a user token acts as that user (scope ``recall``), and only as that user;
* the evaluation token (scope ``evaluate-as``) may evaluate as any ``user_id`` or ``user_role``
  (+ ``department``); every such request is logged with the caller;
* the admin token (scopes ``admin``, ``evaluate-as``) also reaches the ``/_sim`` control plane.

Tokens are HMAC-SHA256(secret, corpus name + subject), so the same corpus and secret always give
the same tokens (``drivebench tokens`` prints them).

The secret (``resolve_secret``): ``DRIVEBENCH_TOKEN_SECRET`` when set; else, for ``drivebench serve``, a
random one: stored in ``<data-dir>/token-secret`` (mode 0600, reused on every start) with ``--data-dir``,
else in a fresh 0600 temporary file whose path ``serve`` prints. ``drivebench tokens --data-dir DIR`` or
``--secret-file PATH`` prints the tokens of such a server. Only in-process simulators (the pytest fixture,
the Python API) fall back to the public development secret: never a server that listens.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from drivebench.drive.opaque import OpaqueInts
from drivebench.drive.state import Drive

DEV_SECRET = "drivebench-development-secret"
SECRET_ENV = "DRIVEBENCH_TOKEN_SECRET"
SECRET_FILE = "token-secret"  # in a data directory
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
    return os.environ.get(SECRET_ENV, DEV_SECRET).encode()


@dataclass(frozen=True)
class SecretSource:
    secret: bytes
    origin: str  # env | data-dir | file | generated | development
    path: Path | None = None  # the file holding it (data-dir, file, generated)


def read_secret_file(path: Path) -> bytes:
    text = Path(path).read_text(encoding="utf-8").strip()
    if len(text) < 32:
        raise ValueError(f"{path}: a token secret needs at least 32 characters")
    return text.encode()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def resolve_secret(data_dir: Path | None = None, *, generate: bool = True) -> SecretSource:
    """The token secret a server uses: the environment's, else the data directory's (created there,
    random, on first use), else (``generate``) a random one in a new private temporary file, else the
    development secret."""
    env = os.environ.get(SECRET_ENV)
    if env:
        return SecretSource(env.encode(), "env")
    if data_dir is not None:
        path = Path(data_dir) / SECRET_FILE
        if path.exists():
            return SecretSource(read_secret_file(path), "data-dir", path)
        if generate:
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            _write_private(path, secrets.token_hex(32))
            return SecretSource(read_secret_file(path), "data-dir", path)
    if generate:
        fd, name = tempfile.mkstemp(prefix="drivebench-token-secret-", text=True)  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secrets.token_hex(32) + "\n")
        return SecretSource(read_secret_file(Path(name)), "generated", Path(name))
    return SecretSource(DEV_SECRET.encode(), "development")


def make_token(corpus: str, subject: str, secret: bytes | None = None) -> str:
    mac = hmac.new(secret or _secret(), f"{corpus}\x00{subject}".encode(), hashlib.sha256).hexdigest()
    prefix = "dbs" if subject.startswith("svc:") else "dbu"
    return f"{prefix}_{mac[:40]}"


class TokenRegistry:
    def __init__(self, drive: Drive, secret: bytes | None = None) -> None:
        self._by_token: dict[str, TokenInfo] = {}
        self._corpus = drive.name
        self._secret = secret or _secret()
        self._opaque: dict[tuple[str, str], OpaqueInts] = {}
        for user_id in sorted(drive.users):
            self._add(TokenInfo(make_token(drive.name, user_id, secret), user_id, ("recall",)))
        self._add(TokenInfo(make_token(drive.name, EVAL_SERVICE, secret), EVAL_SERVICE, ("recall", "evaluate-as")))
        self._add(
            TokenInfo(make_token(drive.name, ADMIN_SERVICE, secret), ADMIN_SERVICE, ("recall", "evaluate-as", "admin"))
        )

    def _add(self, info: TokenInfo) -> None:
        self._by_token[info.token] = info

    def opaque(self, purpose: str, subject: str) -> OpaqueInts:
        """The opaque numbering ``subject`` sees for ``purpose`` (change-feed cursors, chunk ids): keyed by the
        token secret, so every worker of a server and every restart with the same secret agree, and no one
        without the secret can invert it; one key per subject, so two users' numbers cannot be matched."""
        found = self._opaque.get((purpose, subject))
        if found is None:
            found = self._opaque[(purpose, subject)] = OpaqueInts(self.derive_key(f"opaque\x00{purpose}", subject))
        return found

    def derive_key(self, purpose: str, subject: str = "") -> bytes:
        """A 32-byte key for ``purpose`` (and ``subject``) from the token secret and the corpus name."""
        label = f"{purpose}\x00{self._corpus}\x00{subject}".encode()
        return hmac.new(self._secret, label, hashlib.sha256).digest()

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
