"""Rebuild the packaged passage vectors of the built-in corpora (``make vector-packs``).

For each corpus in ``drivebench.corpora.vectors.PACKED_CORPORA``: build it at its default seed and scale,
extract and chunk every version as the simulator does, encode every passage with the default embedder
(through the embedding cache, never through an old pack) and write ``corpora/vectors/<corpus>.<embedder>.npz``.
Prints what it wrote; ``--check`` writes nothing and exits 1 when a pack is missing or does not cover its
corpus.
"""

from __future__ import annotations

import argparse
import sys
import time

from drivebench.corpora.vectors import PACKED_CORPORA, pack_path
from drivebench.experiments.vector_packs import corpus_passages
from drivebench.search.index.embedders import DEFAULT_EMBEDDER, get_embedder
from drivebench.search.index.vector_packs import read_pack, text_digest, write_pack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report coverage; exit 1 if a pack is stale")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    args = parser.parse_args(argv)
    from drivebench.search.index.embedding_cache import EmbeddingCache, default_cache_dir

    embedder = get_embedder(args.embedder)
    stale = 0
    for corpus in PACKED_CORPORA:
        started = time.perf_counter()
        texts = corpus_passages(corpus)
        path = pack_path(corpus, embedder.name)
        if args.check:
            try:
                pack = read_pack(path)
                missing = sum(pack.find(text_digest(t)) < 0 for t in texts)
                right = pack.fingerprint == embedder.fingerprint
            except (ValueError, FileNotFoundError) as exc:
                print(f"{corpus}: {exc}")
                stale += 1
                continue
            ok = right and missing == 0
            stale += not ok
            print(
                f"{corpus}: {len(texts)} passages, {missing} not in {path.name}; fingerprint {'ok' if right else 'differs'}"
            )
            continue
        cache = EmbeddingCache(default_cache_dir() / "embeddings.sqlite3")  # no packs: only the model's vectors
        vectors = cache.encode(embedder, texts)
        from importlib import metadata

        source = f"{corpus} at its default seed and scale; {embedder.fingerprint}; drivebench {metadata.version('drivebench')}"
        n = write_pack(path, embedder.fingerprint, texts, vectors, source)
        print(
            f"{corpus}: wrote {path} ({n} passages, {cache.encoded} encoded now, {path.stat().st_size / 1e6:.1f} MB)"
            f" in {time.perf_counter() - started:.1f} s"
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
