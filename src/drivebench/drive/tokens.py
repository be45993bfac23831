"""Bearer tokens: one per corpus user plus two service tokens, derived from a secret.

* a user token acts as that user (scope ``recall``), and only as that user;
* the evaluation token (scope ``evaluate-as``) may evaluate as any ``user_id`` or ``user_role``
  (+ ``department``); every such request is logged with the caller;
* the admin token (scopes ``admin``, ``evaluate-as``) also reaches the ``/_sim`` control plane.

Tokens are HMAC-SHA256(secret, corpus name + subject), so the same corpus and secret always give
the same tokens (``drivebench tokens`` prints them). They never expire.

Expiring user tokens (``TokenRegistry.mint``, ``POST /_sim/tokens``): a JWT (HS256, claims ``sub``, ``aud`` =
the corpus name, ``exp``, ``iat``, ``jti``) signed with a key derived from the same secret. Like every other
time-dependent decision of the simulator, ``exp`` is judged against the drive's simulated clock: the token
stops resolving (401) once the clock reaches it. An administrator may mint one whose ``exp`` has already
passed, to test that a system refuses an expired token (``probe --fail-safe`` does).

The simulated clock can go back (a reset returns to the corpus's time; ``set_clock`` may move it back), and an
expired token must never work again. So a minted token also carries the drive history it was minted in (the
``epoch`` claim, ``Drive.feed_epoch``: a reset, a seed or a restart without a data directory starts another),
and a token of another history is refused; within one history, expiry is judged against the latest time the
registry has seen, so moving the clock back does not revive it either.

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
from datetime import UTC, datetime
from pathlib import Path

import jwt

from drivebench.drive.clock import as_utc
from drivebench.drive.state import Drive

DEV_SECRET = "drivebench-development-secret"
SECRET_ENV = "DRIVEBENCH_TOKEN_SECRET"
SECRET_FILE = "token-secret"  # in a data directory
EVAL_SERVICE = "svc:evaluator"
ADMIN_SERVICE = "svc:admin"


JWT_ALGORITHM = "HS256"
MINTED_SCOPES = ("recall",)

# Opaque numbers: a keyed permutation of ``[0, 2**52)`` (a 4-round Feistel network over two 26-bit halves, keyed
# BLAKE2b as the round function: a pseudorandom permutation, Luby-Rackoff), keyed per subject by ``TokenRegistry.opaque``.
# A user sees ``encode(n)`` instead of a global counter ``n`` (a position in the change feed, a row of the chunk
# store): stable for the same ``n`` and key, so it can be handed back (a cursor), but without the key it says nothing
# about ``n``, so neither its size nor the gap between two of them counts what the user cannot see. The values stay
# below 2**53: exact in every JSON reader, JavaScript's included.
OPAQUE_BITS = 52
_OPAQUE_HALF = OPAQUE_BITS // 2
_OPAQUE_MASK = (1 << _OPAQUE_HALF) - 1
_OPAQUE_ROUNDS = 4


class OpaqueInts:
    def __init__(self, key: bytes) -> None:
        if not 16 <= len(key) <= 64:
            raise ValueError("an opaque-number key has 16 to 64 bytes")
        self._key = key

    def _round(self, r: int, half: int) -> int:
        digest = hashlib.blake2b(bytes((r,)) + half.to_bytes(4, "big"), key=self._key, digest_size=4).digest()
        return int.from_bytes(digest, "big") & _OPAQUE_MASK

    def encode(self, n: int) -> int:
        """The opaque value of ``0 <= n < 2**52``."""
        if not 0 <= n < 1 << OPAQUE_BITS:
            raise ValueError(f"only 0 <= n < 2**{OPAQUE_BITS} have an opaque value")
        left, right = n >> _OPAQUE_HALF, n & _OPAQUE_MASK
        for r in range(_OPAQUE_ROUNDS):
            left, right = right, left ^ self._round(r, right)
        return (left << _OPAQUE_HALF) | right

    def decode(self, value: int) -> int | None:
        """The ``n`` whose opaque value is ``value``; None when ``value`` is out of the domain."""
        if not 0 <= value < 1 << OPAQUE_BITS:
            return None
        left, right = value >> _OPAQUE_HALF, value & _OPAQUE_MASK
        for r in reversed(range(_OPAQUE_ROUNDS)):
            left, right = right ^ self._round(r, left), left
        return (left << _OPAQUE_HALF) | right


@dataclass(frozen=True)
class TokenInfo:
    token: str
    subject: str  # a user_id, or svc:evaluator / svc:admin
    scopes: tuple[str, ...]
    expires_at: datetime | None = None  # minted tokens only: the simulated instant they stop resolving

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


def _jwt_key(secret: bytes) -> bytes:
    """The minted tokens' signing key: derived from the secret, so it never signs what the HMAC tokens sign."""
    return hmac.new(secret, b"drivebench minted token key", hashlib.sha256).digest()


class TokenRegistry:
    def __init__(self, drive: Drive, secret: bytes | None = None) -> None:
        self._drive = drive
        self._jwt_key = _jwt_key(secret or _secret())
        self._by_token: dict[str, TokenInfo] = {}
        self._corpus = drive.name
        self._secret = secret or _secret()
        self._opaque: dict[tuple[str, str], OpaqueInts] = {}
        self._latest_seen: datetime | None = None  # the latest clock reading: expiry never runs backwards
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
        if info is None:
            return self._resolve_minted(token) if token.count(".") == 2 else None
        if not hmac.compare_digest(info.token, token):
            return None
        return info

    def mint(self, subject: str, expires_at: datetime) -> TokenInfo:
        """An expiring token for the user ``subject``, valid until the drive's clock reaches ``expires_at``
        (which may already have passed: the token is then refused from the start)."""
        if subject not in self._drive.users:
            raise KeyError(f"no user {subject!r} in corpus {self._drive.name}")
        exp = as_utc(expires_at)
        claims = {
            "sub": subject,
            "aud": self._drive.name,
            "iat": self._drive.clock.now().timestamp(),
            "exp": exp.timestamp(),
            "jti": secrets.token_hex(8),
            "epoch": self._drive.feed_epoch,
        }
        token = jwt.encode(claims, self._jwt_key, algorithm=JWT_ALGORITHM)
        return TokenInfo(token, subject, MINTED_SCOPES, exp)

    def _resolve_minted(self, token: str) -> TokenInfo | None:
        """A minted token whose signature, audience, subject and epoch hold and whose ``exp`` the drive's clock
        has not reached; None otherwise (a forged, altered, expired token, one of a user since removed, or one
        minted in a history the drive has since replaced)."""
        try:
            claims = jwt.decode(
                token,
                self._jwt_key,
                algorithms=[JWT_ALGORITHM],
                audience=self._drive.name,
                # exp is judged below against the simulated clock, not the wall clock
                options={"verify_exp": False, "verify_iat": False, "require": ["exp", "sub", "aud", "iat", "epoch"]},
            )
            exp = datetime.fromtimestamp(float(claims["exp"]), UTC)
        except (jwt.PyJWTError, ValueError, TypeError, OverflowError):
            return None
        subject = claims["sub"]
        if (
            claims["epoch"] != self._drive.feed_epoch
            or not isinstance(subject, str)
            or subject not in self._drive.users
        ):
            return None
        if self.expiry_clock() >= exp:
            return None
        return TokenInfo(token, subject, MINTED_SCOPES, exp)

    def expiry_clock(self) -> datetime:
        """The drive's clock, or the latest reading before it when the clock was moved back."""
        now = self._drive.clock.now()
        if self._latest_seen is None or now > self._latest_seen:
            self._latest_seen = now
        return self._latest_seen

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
