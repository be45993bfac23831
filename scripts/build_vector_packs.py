"""Rebuild the packaged vectors of the built-in corpora (``make vector-packs``).

For each corpus in ``drivebench.corpora.vectors.PACKED_CORPORA``: build it at its default seed and scale,
extract and chunk every version as the simulator does, encode every passage with the default embedder
(through the embedding cache, never through an old pack) and write ``corpora/vectors/<corpus>.<embedder>.npz``;
encode every question of its eval set as a query and write ``<corpus>.<embedder>.query.npz``.
Prints what it wrote; ``--check`` writes nothing and exits 1 when a pack is missing or does not cover its
corpus or eval set.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import metadata

from drivebench.corpora.vectors import PACKED_CORPORA, pack_path
from drivebench.experiments.vector_packs import corpus_passages, corpus_queries
from drivebench.search.index.embedders import DEFAULT_EMBEDDER, get_embedder
from drivebench.search.index.vector_packs import read_pack, text_digest, write_pack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report coverage; exit 1 if a pack is stale")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--kind", choices=("passage", "query", "all"), default="all", help="which packs (default: all)")
    args = parser.parse_args(argv)
    from drivebench.search.index.embedding_cache import EmbeddingCache, default_cache_dir

    embedder = get_embedder(args.embedder)
    stale = 0
    for corpus, kind in [(c, k) for c in PACKED_CORPORA for k in ("passage", "query") if args.kind in (k, "all")]:
        started = time.perf_counter()
        texts = corpus_passages(corpus) if kind == "passage" else corpus_queries(corpus)
        path = pack_path(corpus, embedder.name, kind)
        if args.check:
            try:
                pack = read_pack(path)
                missing = sum(pack.find(text_digest(t)) < 0 for t in texts)
                right = pack.fingerprint == embedder.fingerprint and pack.kind == kind
            except (ValueError, FileNotFoundError) as exc:
                print(f"{corpus}: {exc}")
                stale += 1
                continue
            ok = right and missing == 0 and len(pack) == len(texts)
            stale += not ok
            print(
                f"{corpus}: {len(texts)} {kind} texts, {missing} not in {path.name} ({len(pack)} packed);"
                f" fingerprint and kind {'ok' if right else 'differ'}"
            )
            continue
        if kind == "query":  # questions are few and asked once each: no cache, the model's vectors directly
            vectors = embedder.encode(texts, kind="query")
            source = f"{corpus}'s eval-set questions at its default seed and scale; {embedder.fingerprint}; drivebench {metadata.version('drivebench')}"
            n = write_pack(path, embedder.fingerprint, texts, vectors, source, kind="query")
            print(f"{corpus}: wrote {path} ({n} questions) in {time.perf_counter() - started:.1f} s")
            continue
        cache = EmbeddingCache(default_cache_dir() / "embeddings.sqlite3")  # no packs: only the model's vectors
        vectors = cache.encode(embedder, texts)
        source = f"{corpus} at its default seed and scale; {embedder.fingerprint}; drivebench {metadata.version('drivebench')}"
        n = write_pack(path, embedder.fingerprint, texts, vectors, source)
        print(
            f"{corpus}: wrote {path} ({n} passages, {cache.encoded} encoded now, {path.stat().st_size / 1e6:.1f} MB)"
            f" in {time.perf_counter() - started:.1f} s"
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
