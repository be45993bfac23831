"""Finding 6: without DRIVEBENCH_TOKEN_SECRET the token secret was public, so anyone could compute a
server's admin token. ``serve`` now uses a random secret (kept in --data-dir, else in a private file),
warns, and says how ``drivebench tokens`` prints the matching tokens."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from drivebench.cli.common import err_console
from drivebench.cli.main import app
from drivebench.cli.serve import token_secret
from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.drive.tokens import ADMIN_SERVICE, DEV_SECRET, SECRET_ENV, TokenRegistry, make_token, resolve_secret
from drivebench.formats.corpus import load_manifest
from tests.support.serverproc import ServerProc


@pytest.fixture(autouse=True)
def _no_env_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)


def test_a_data_dir_gets_a_random_private_secret_once(tmp_path: Path) -> None:
    first = resolve_secret(tmp_path)
    assert first.origin == "data-dir" and first.path == tmp_path / "token-secret"
    assert stat.S_IMODE(first.path.stat().st_mode) == 0o600
    assert first.secret != DEV_SECRET.encode() and len(first.secret) >= 32
    assert resolve_secret(tmp_path).secret == first.secret  # kept across restarts
    assert resolve_secret(tmp_path / "other").secret != first.secret


def test_in_memory_serve_gets_a_fresh_secret_and_a_hint(tmp_path: Path) -> None:
    with err_console.capture() as captured:
        source = token_secret(None, "seed")
    assert source.origin == "generated" and source.path is not None
    assert stat.S_IMODE(source.path.stat().st_mode) == 0o600
    assert source.secret != DEV_SECRET.encode() and source.secret != token_secret(None, "seed").secret
    text = " ".join(captured.get().split())
    assert "warning" in text and SECRET_ENV in text and f"--secret-file {source.path}" in text
    assert source.secret.decode() not in text  # the secret itself is never printed
    source.path.unlink()


def test_tokens_command_uses_the_same_secret(tmp_path: Path) -> None:
    secret = resolve_secret(tmp_path).secret
    drive = Drive.from_manifest(load_manifest(resolve_corpus("seed")))
    expected = {i.subject: i.token for i in TokenRegistry(drive, secret).all()}
    for args in (["--data-dir", str(tmp_path)], ["--secret-file", str(tmp_path / "token-secret")]):
        r = CliRunner().invoke(app, ["tokens", "--corpus", "seed", "--json", *args])
        assert r.exit_code == 0, r.output
        got = {row["user_id"]: row["token"] for row in json.loads(r.stdout)}
        assert got == expected
    missing = CliRunner().invoke(app, ["tokens", "--corpus", "seed", "--data-dir", str(tmp_path / "none")])
    assert missing.exit_code != 0


@pytest.mark.slow
def test_served_admin_token_is_not_the_public_one(tmp_path: Path) -> None:
    """A real ``drivebench serve --data-dir`` without the variable: the development admin token is refused,
    the token computed from the data dir's secret works, the same across a restart, and serve warned."""
    srv = ServerProc(tmp_path / "data")
    srv.start(env={SECRET_ENV: ""})
    try:
        public = {"Authorization": f"Bearer {make_token('xingchen-seed', ADMIN_SERVICE, DEV_SECRET.encode())}"}
        public_seed = {"Authorization": f"Bearer {make_token('seed', ADMIN_SERVICE, DEV_SECRET.encode())}"}
        for headers in (public, public_seed):
            assert httpx.get(f"{srv.url}/_sim/stats", headers=headers, timeout=30).status_code == 401
        assert httpx.get(f"{srv.url}/healthz", timeout=30).json() == {"status": "ok"}  # no name, no counts
        name = srv.corpus
        secret = (tmp_path / "data" / "token-secret").read_text().strip().encode()
        admin = {"Authorization": f"Bearer {make_token(name, ADMIN_SERVICE, secret)}"}
        assert httpx.get(f"{srv.url}/_sim/stats", headers=admin, timeout=30).status_code == 200
        srv.stop()
        srv.start(env={SECRET_ENV: ""})
        assert httpx.get(f"{srv.url}/_sim/stats", headers=admin, timeout=30).status_code == 200
    finally:
        srv.stop()
    log = " ".join(srv.log_path.read_text(errors="replace").split())
    assert "warning" in log and "drivebench tokens --corpus seed --data-dir" in log
    # the start line names every entry point a newcomer needs, on the port it really listens on
    assert f"docs {srv.url}/docs · console {srv.url}/ui/ · MCP {srv.url}/mcp/" in log
