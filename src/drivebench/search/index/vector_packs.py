"""Packaged passage vectors: what the default embedder computed for the built-in corpora, shipped so the first
run does not spend minutes re-computing them, and checked against the embedder before any is used.

A pack is one ``.npz`` file in ``corpora/vectors/`` (``drivebench.corpora.vectors``) with

* ``fingerprint``: the embedder fingerprint it was computed with (``embedders``); a pack is consulted only by
  an embedder with exactly this fingerprint (same package version, weights file and encoding configuration);
* ``digests``: ``uint8[N, 32]``, sha256 of each passage text, sorted (the embedding cache's key, without the
  fingerprint);
* ``vectors``: ``float32[N, dim]``, the embedder's passage vectors, byte-for-byte what it returned;
* ``source``: a line saying which corpora, scale and package made it (for humans);
* ``kind``: ``passage`` (absent in older packs: passage) or ``query``: what the vectors embed. The embedders
  encode a query and a passage of the same text differently (e5's ``query: `` and ``passage: `` prefixes), so a
  lookup names its kind and reads only packs of that kind: a query vector never serves as a passage vector.
  The query packs hold the built-in corpora's eval-set questions (what ``corpus audit`` and ``demo`` ask).

Trust, not faith: before the first vector of a pack is served in a process, the real embedder re-encodes
``VERIFY_SAMPLE`` of the requested passages that the pack holds and every one must match
(cosine >= ``MIN_COSINE``). A pack that fails, cannot be read or has the wrong shape is dropped for the rest
of the process with one line on stderr, and its passages are encoded as if it did not exist: a pack can make
a run faster, never different. ``DRIVEBENCH_VECTOR_PACKS=0`` turns packs off; a path lists other directories.
``make vector-packs`` (``scripts/build_vector_packs.py``) rebuilds them, and a test fails when the built-in
corpora have passages a pack does not cover.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ENV = "DRIVEBENCH_VECTOR_PACKS"
VERIFY_SAMPLE = 3  # passages re-encoded before a pack is trusted (about 0.2 s with e5 here)
KINDS = ("passage", "query")
MIN_COSINE = 0.999  # the same engine on another CPU may differ in the last bits; a wrong pack is far off


def default_pack_dirs(builtin: list[Path] | None = None) -> list[Path]:
    """``builtin`` (the simulator passes the built-in corpora's packs, ``drivebench.corpora.vectors``), unless
    DRIVEBENCH_VECTOR_PACKS says otherwise: off, or a path list."""
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() in {"0", "off", "no", "false"}:
        return []
    if setting and setting.lower() not in {"1", "on", "yes", "true"}:
        return [Path(p) for p in setting.split(os.pathsep) if p]
    return list(builtin or [])


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


@dataclass
class VectorPack:
    path: Path
    fingerprint: str
    digests: np.ndarray  # uint8 [N, 32], sorted lexicographically
    vectors: np.ndarray  # float32 [N, dim]
    source: str = ""
    kind: str = "passage"  # one of KINDS
    _keys: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._keys = np.ascontiguousarray(self.digests).view("S32").ravel()

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def find(self, digest: bytes) -> int:
        """Row of ``digest`` in the pack, or -1."""
        row = int(np.searchsorted(self._keys, digest))
        # compare the raw row: numpy's bytes scalars drop trailing NUL bytes (1 digest in 256 ends in one)
        return row if row < len(self._keys) and self.digests[row].tobytes() == digest else -1


def write_pack(
    path: Path, fingerprint: str, texts: Iterable[str], vectors: np.ndarray, source: str, kind: str = "passage"
) -> int:
    """Write the pack of ``texts`` -> ``vectors`` of ``kind`` (duplicates kept once); returns the number of texts."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    rows: dict[bytes, np.ndarray] = {}
    for text, vector in zip(texts, vectors, strict=True):
        rows.setdefault(text_digest(text), np.asarray(vector, dtype=np.float32))
    order = sorted(rows)
    digests = np.frombuffer(b"".join(order), dtype=np.uint8).reshape(len(order), 32)
    stacked = np.stack([rows[d] for d in order]) if order else np.zeros((0, 0), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:  # np.savez_compressed(path) would append .npz to any other suffix
        np.savez_compressed(
            fh,
            fingerprint=np.array(fingerprint),
            digests=digests,
            vectors=stacked,
            source=np.array(source),
            kind=np.array(kind),
        )
    return len(order)


def read_fingerprint(path: Path) -> str:
    """A pack's fingerprint, without reading its arrays; raises ValueError when it is not a pack."""
    return read_header(path)[0]


def read_header(path: Path) -> tuple[str, str]:
    """A pack's fingerprint and kind, without reading its arrays; raises ValueError when it is not a pack."""
    try:
        with np.load(path, allow_pickle=False) as data:
            fingerprint = str(data["fingerprint"])
            kind = str(data["kind"]) if "kind" in data else "passage"
    except Exception as exc:  # zip, pickle refusal, missing array: all mean "not a pack"
        raise ValueError(f"{path}: not a vector pack ({type(exc).__name__}: {exc})") from exc
    if kind not in KINDS:
        raise ValueError(f"{path}: not a vector pack (kind {kind!r})")
    return fingerprint, kind


def read_pack(path: Path) -> VectorPack:
    """Read and check the shape of one pack; raises ValueError when it is not a well-formed pack."""
    try:
        with np.load(path, allow_pickle=False) as data:
            fingerprint = str(data["fingerprint"])
            digests = np.asarray(data["digests"], dtype=np.uint8)
            vectors = np.asarray(data["vectors"], dtype=np.float32)
            source = str(data["source"]) if "source" in data else ""
            kind = str(data["kind"]) if "kind" in data else "passage"
    except Exception as exc:  # zip, pickle refusal, missing array: all mean "not a pack"
        raise ValueError(f"{path}: not a vector pack ({type(exc).__name__}: {exc})") from exc
    if digests.ndim != 2 or digests.shape[1] != 32 or vectors.ndim != 2 or len(digests) != len(vectors):
        raise ValueError(f"{path}: not a vector pack (digests {digests.shape}, vectors {vectors.shape})")
    if len(digests) > 1 and not bool(np.all(digests[:-1].view("S32").ravel() < digests[1:].view("S32").ravel())):
        raise ValueError(f"{path}: not a vector pack (digests not sorted and unique)")
    if not np.all(np.isfinite(vectors)):
        raise ValueError(f"{path}: not a vector pack (non-finite vectors)")
    if kind not in KINDS:
        raise ValueError(f"{path}: not a vector pack (kind {kind!r})")
    return VectorPack(path, fingerprint, digests, vectors, source, kind)


def _warn(message: str) -> None:
    print(f"drivebench: {message}", file=sys.stderr)


class VectorPacks:
    """The packs of some directories, looked up by (fingerprint, kind, text); each verified once before first use."""

    def __init__(self, directories: list[Path] | None = None, warn: Callable[[str], None] = _warn) -> None:
        self._dirs = default_pack_dirs() if directories is None else directories  # None: only the env's
        self._warn = warn
        self._lock = threading.Lock()
        self._packs: dict[tuple[str, str], list[VectorPack]] | None = (
            None  # by (fingerprint, kind), read on first lookup
        )
        self._state: dict[Path, bool] = {}  # path -> verified (True) or rejected (False)
        self.served = 0  # passage vectors served from packs in this process (shown by ingestion, counted by tests)
        self.served_queries = 0  # query vectors served from packs in this process

    def _load(self, fingerprint: str, kind: str) -> list[VectorPack]:
        """The readable packs of ``fingerprint`` and ``kind``. A pack of another embedder or kind is never read
        beyond its header (its vectors would be resident memory for nothing)."""
        if self._packs is None:
            self._packs = {}
        if (fingerprint, kind) not in self._packs:
            packs: list[VectorPack] = []
            for directory in self._dirs:
                for path in sorted(directory.glob("*.npz")) if directory.is_dir() else []:
                    try:
                        if read_header(path) == (fingerprint, kind):
                            packs.append(read_pack(path))
                    except ValueError as exc:
                        self._warn(f"ignoring {exc}")
            self._packs[fingerprint, kind] = packs
        return self._packs[fingerprint, kind]

    def release(self) -> None:
        """Drop the packs' arrays (after a bulk load has taken what it needs); they are read again, without
        a second verification, if a later passage asks for them."""
        with self._lock:
            self._packs = None

    def lookup(
        self, fingerprint: str, texts: list[str], encode: Callable[[list[str]], np.ndarray], kind: str = "passage"
    ) -> dict[str, np.ndarray]:
        """Vectors for those of ``texts`` a verified pack of ``fingerprint`` and ``kind`` holds. ``encode`` is the
        real embedder's encoder of that kind, used to verify a pack the first time it would serve."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        if not texts:
            return {}
        with self._lock:
            packs = [p for p in self._load(fingerprint, kind) if self._state.get(p.path, True)]
        found: dict[str, np.ndarray] = {}
        for pack in packs:
            rows = {t: r for t in texts if t not in found and (r := pack.find(text_digest(t))) >= 0}
            if not rows or not self._trusted(pack, rows, encode):
                continue
            found.update((t, pack.vectors[r].copy()) for t, r in rows.items())
        if kind == "passage":
            self.served += len(found)
        else:
            self.served_queries += len(found)
        return found

    def _trusted(self, pack: VectorPack, rows: dict[str, int], encode: Callable[[list[str]], np.ndarray]) -> bool:
        with self._lock:
            state = self._state.get(pack.path)
            if state is not None:
                return state
            sample = sorted(rows, key=lambda t: text_digest(t))[:VERIFY_SAMPLE]
            try:
                fresh = np.asarray(encode(sample), dtype=np.float32)
                stored = pack.vectors[[rows[t] for t in sample]]
                cosine = np.sum(fresh * stored, axis=1) / (
                    np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1) + 1e-12
                )
                ok = bool(fresh.shape == stored.shape and np.all(cosine >= MIN_COSINE))
                detail = f"cosine {float(np.min(cosine)):.4f} < {MIN_COSINE}" if not ok else ""
            except Exception as exc:  # an embedder that cannot verify cannot vouch for the pack
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            if not ok:
                self._warn(f"ignoring vector pack {pack.path.name}: the embedder does not reproduce it ({detail})")
            self._state[pack.path] = ok
            return ok
