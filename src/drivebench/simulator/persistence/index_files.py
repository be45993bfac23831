"""The search index on disk: FAISS vectors plus chunk metadata, written atomically and tagged with
the metadata version they match.

Layout under ``<data-dir>/index``::

    CURRENT                      the name of the live snapshot directory (replaced atomically)
    snap-<seq>-<id>/
        vectors.faiss            faiss.write_index of the IndexIDMap2(IndexFlatIP)
        chunks.json              texts, part labels, doc/version ids, ordinals, dead chunk ids
        manifest.json            the tag (generation + meta_seq), embedder, config fingerprint,
                                 sha256 of the two files above, extraction rejections

A snapshot is written into a temporary directory (each file fsynced), renamed into place, the
parent fsynced, and only then does ``CURRENT`` move to it (temp file + fsync + rename + fsync). A
crash at any point leaves ``CURRENT`` on a complete snapshot (or absent). Loading checks the
checksums, the generation (the drive's state was not replaced since), the tag (not ahead of the
metadata) and the configuration (same embedder, extraction and chunking); on any mismatch the caller
rebuilds. When the tag is behind the metadata, the caller replays the change feed from the tag.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import faiss
import numpy as np

from drivebench.formats.files import fsync_dir, write_atomic
from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.ingest import Rejection

log = logging.getLogger("drivebench.persistence")
FORMAT = "drivebench-index/1"


@dataclass
class IndexSnapshot:
    """A consistent copy of a ``ChunkStore`` taken under its lock (cheap: lists and one byte buffer)."""

    vectors: np.ndarray  # faiss.serialize_index bytes
    texts: list[str]
    parts: list[str]
    doc_ids: list[str]
    version_ids: list[str]
    ordinals: list[int]
    dead: list[int]
    generation: str
    meta_seq: int
    embedder: str
    dim: int
    config: str
    rejections: list[Rejection] = field(default_factory=list)

    @classmethod
    def capture(cls, store: ChunkStore, **tag: Any) -> IndexSnapshot:
        with store.lock:
            return cls(
                vectors=faiss.serialize_index(store.index),
                texts=list(store.texts),
                parts=list(store.parts),
                doc_ids=list(store.doc_ids),
                version_ids=list(store.version_ids),
                ordinals=list(store.ordinals),
                dead=np.flatnonzero(~store.alive).tolist(),
                **tag,
            )


@dataclass
class LoadedIndex:
    store: ChunkStore
    meta_seq: int
    rejections: list[Rejection]
    path: Path


def config_fingerprint(embedder: str, dim: int, extract: dict[str, Any], chunking: dict[str, Any]) -> str:
    body = json.dumps({"embedder": embedder, "dim": dim, "extract": extract, "chunking": chunking}, sort_keys=True)
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()[:32]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


class IndexFiles:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def current(self) -> Path | None:
        pointer = self.root / "CURRENT"
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return self.root / name if name else None

    def manifest(self) -> dict[str, Any] | None:
        cur = self.current
        if cur is None:
            return None
        try:
            return json.loads((cur / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def save(self, snap: IndexSnapshot) -> Path:
        vectors = np.asarray(snap.vectors, dtype=np.uint8).tobytes()
        chunks = json.dumps(
            {
                "texts": snap.texts,
                "parts": snap.parts,
                "doc_ids": snap.doc_ids,
                "version_ids": snap.version_ids,
                "ordinals": snap.ordinals,
                "dead": snap.dead,
            },
            ensure_ascii=False,
        ).encode("utf-8")
        manifest = {
            "format": FORMAT,
            "generation": snap.generation,
            "meta_seq": snap.meta_seq,
            "embedder": snap.embedder,
            "dim": snap.dim,
            "config": snap.config,
            "n_chunks": len(snap.texts),
            "n_alive": len(snap.texts) - len(snap.dead),
            "files": {"vectors.faiss": _sha(vectors), "chunks.json": _sha(chunks)},
            "rejections": [asdict(r) for r in snap.rejections],
        }
        name = f"snap-{snap.meta_seq:09d}-{uuid.uuid4().hex[:8]}"
        tmp = self.root / f".tmp-{name}"
        tmp.mkdir()
        try:
            _write_synced(tmp / "vectors.faiss", vectors)
            _write_synced(tmp / "chunks.json", chunks)
            _write_synced(tmp / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=1).encode())
            fsync_dir(tmp)
            os.replace(tmp, self.root / name)
            fsync_dir(self.root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        write_atomic(self.root / "CURRENT", name.encode())
        self._prune(keep=name)
        return self.root / name

    def _prune(self, keep: str) -> None:
        for p in self.root.iterdir():
            if p.is_dir() and p.name != keep and (p.name.startswith("snap-") or p.name.startswith(".tmp-")):
                shutil.rmtree(p, ignore_errors=True)

    def clear(self) -> None:
        (self.root / "CURRENT").unlink(missing_ok=True)
        fsync_dir(self.root)
        self._prune(keep="")

    def load(self, *, generation: str | None, max_seq: int, embedder: str, dim: int, config: str) -> LoadedIndex | None:
        """The stored index if it is whole and matches; None (with a logged reason) otherwise."""
        cur = self.current
        if cur is None:
            return None
        try:
            manifest = json.loads((cur / "manifest.json").read_text(encoding="utf-8"))
            expected = {"format": FORMAT, "generation": generation, "embedder": embedder, "dim": dim, "config": config}
            for key, value in expected.items():
                if manifest.get(key) != value:
                    log.warning("index %s: %s is %r, expected %r: rebuilding", cur.name, key, manifest.get(key), value)
                    return None
            if int(manifest["meta_seq"]) > max_seq:
                log.warning(
                    "index %s is ahead of the metadata (%s > %s): rebuilding", cur.name, manifest["meta_seq"], max_seq
                )
                return None
            vectors = (cur / "vectors.faiss").read_bytes()
            chunks_raw = (cur / "chunks.json").read_bytes()
            if (
                _sha(vectors) != manifest["files"]["vectors.faiss"]
                or _sha(chunks_raw) != manifest["files"]["chunks.json"]
            ):
                log.warning("index %s: checksum mismatch: rebuilding", cur.name)
                return None
            chunks = json.loads(chunks_raw)
            index = faiss.deserialize_index(np.frombuffer(vectors, dtype=np.uint8))
            store = ChunkStore(dim)
            n = len(chunks["texts"])
            if not all(len(chunks[k]) == n for k in ("parts", "doc_ids", "version_ids", "ordinals")):
                log.warning("index %s: ragged chunk metadata: rebuilding", cur.name)
                return None
            alive = np.ones(n, dtype=bool)
            alive[np.asarray(chunks["dead"], dtype=np.int64)] = False
            if int(index.ntotal) != int(alive.sum()) or index.d != dim:
                log.warning("index %s: %s vectors for %s live chunks: rebuilding", cur.name, index.ntotal, alive.sum())
                return None
            store.index = cast(faiss.IndexIDMap2, index)  # what ChunkStore.save serialised
            store.texts, store.parts = chunks["texts"], chunks["parts"]
            store.doc_ids, store.version_ids = chunks["doc_ids"], chunks["version_ids"]
            store.ordinals = [int(x) for x in chunks["ordinals"]]
            store.alive = alive
            by_version: dict[str, list[int]] = {}
            for i in np.flatnonzero(alive).tolist():
                by_version.setdefault(store.version_ids[i], []).append(i)
            store.by_version = dict(by_version)
            store.lexical.add(store.texts)  # positional: row i is chunk i, dead rows included (as before)
            store.lexical.compact()  # a bulk load leaves no spare capacity (the index was read whole)
            rejections = [Rejection(**r) for r in manifest.get("rejections", [])]
            return LoadedIndex(store, int(manifest["meta_seq"]), rejections, cur)
        except Exception as exc:  # a damaged snapshot is rebuilt, never trusted
            log.warning("index %s unreadable (%s: %s): rebuilding", cur.name, type(exc).__name__, exc)
            return None
