"""SHA-256 checksums of a corpus directory: ``tree_checksums(dir) -> {relative path: hex digest}``.

Used to prove that a frozen generator version (``acme-zh@1``) still writes the same bytes: the list is
committed (``tests/corpora/data/acme_v1_checksums.json``) and a test compares a fresh build with it.
``python -m drivebench.corpora.checksums NAME[@VERSION] ... > list.json`` writes such a list.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path


def tree_checksums(corpus_dir: Path) -> dict[str, str]:
    """Every file under ``corpus_dir`` (POSIX relative path, sorted) and the SHA-256 of its bytes."""
    root = Path(corpus_dir)
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def tree_digest(checksums: dict[str, str]) -> str:
    """One SHA-256 over the sorted (path, digest) list: equal iff every path and every file is equal."""
    h = hashlib.sha256()
    for path in sorted(checksums):
        h.update(f"{path}\0{checksums[path]}\n".encode())
    return h.hexdigest()


def build_checksums(name: str, seed: int | None = None, scale: str | int | None = None) -> dict[str, object]:
    """Build ``name`` into a temporary directory and return its checksum record."""
    from drivebench.corpora.builtin import build_corpus

    with tempfile.TemporaryDirectory() as tmp:
        out = build_corpus(name, Path(tmp) / "corpus", seed=seed, scale=scale)
        files = tree_checksums(out)
    return {"seed": seed, "scale": scale, "digest": tree_digest(files), "files": files}


def main(argv: list[str]) -> None:
    record = {name: build_checksums(name) for name in argv}
    json.dump(record, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
