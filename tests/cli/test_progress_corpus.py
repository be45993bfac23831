"""Progress on the corpus commands: `corpus build` counts the files it writes, `export-beir`
shows a bar with counts and an ETA, on a pseudo-terminal; a pipe and --quiet get no bar frames."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.clirun import DRIVEBENCH, invoke, run_on_pty
from tests.support.terminal import ANSI, BAR, ESCAPES, terminal_env

pytestmark = pytest.mark.slow


def _frames(raw: str) -> list[str]:
    return [f for f in re.split(r"[\r\n]", ESCAPES.sub("", raw)) if f.strip()]


def test_corpus_build_counts_files_on_a_terminal_and_not_in_a_pipe(tmp_path: Path) -> None:
    code, raw = run_on_pty([DRIVEBENCH, "corpus", "build", "seed", "--out", str(tmp_path / "tty")], terminal_env())
    frames = _frames(raw)
    assert code == 0, frames[-10:]
    counts = [int(m[1]) for f in frames if (m := re.search(r"building seed@1 (\d+) files written \d+:\d\d:\d\d", f))]
    assert counts and counts == sorted(counts) and counts[-1] > 0, frames[-10:]  # the count grows
    done = [f for f in frames if re.search(r"building seed@1: (\d+) files written in [\d.]+ s", f)]
    assert done, frames[-10:]
    assert int(re.search(r": (\d+) files", done[0])[1]) >= counts[-1]  # type: ignore[index]

    piped = subprocess.run(
        [DRIVEBENCH, "corpus", "build", "seed", "--out", str(tmp_path / "pipe")],
        capture_output=True,
        text=True,
        timeout=300,
        env=terminal_env(),
    )
    assert piped.returncode == 0, piped.stderr
    assert "files written" not in piped.stderr and "\r" not in piped.stderr and not ANSI.search(piped.stderr)
    assert re.search(r"(built|copied from the cache): seed@1 in", piped.stdout), piped.stdout
    # the same corpus either way
    assert (tmp_path / "tty" / "corpus.json").read_bytes() == (tmp_path / "pipe" / "corpus.json").read_bytes()


def test_export_beir_shows_a_bar_with_counts_and_eta(tmp_path: Path) -> None:
    code, raw = run_on_pty([DRIVEBENCH, "corpus", "export-beir", "seed", "--out", str(tmp_path / "b")], terminal_env())
    frames = _frames(raw)
    assert code == 0, frames[-10:]
    bars = [f for f in frames if "export-beir: extracting documents" in f and BAR in f]
    final = re.search(r"(\d+)/(\d+) .*eta", bars[-1]) if bars else None
    assert final and final[1] == final[2] and int(final[1]) > 0, frames[-10:]

    code, raw = run_on_pty(
        [DRIVEBENCH, "--quiet", "corpus", "export-beir", "seed", "--out", str(tmp_path / "q")], terminal_env()
    )
    assert code == 0 and not [f for f in _frames(raw) if BAR in f or "eta" in f]
    piped = subprocess.run(
        [DRIVEBENCH, "corpus", "export-beir", "seed", "--out", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        timeout=300,
        env=terminal_env(),
    )
    assert piped.returncode == 0 and BAR not in piped.stderr and "eta" not in piped.stderr
    assert re.search(r"exported [\d,]+ documents, [\d,]+ queries", piped.stdout), piped.stdout
    assert "{" not in piped.stdout and "'" not in piped.stdout  # a sentence, not a Python dict


def test_corpus_build_out_copies_the_cached_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``corpus build NAME --out DIR`` copies the cache's build of the same version, seed, scale and sources
    instead of building again: the same bytes, said as such. In-process (the copy is the point, not the process):
    each command resolves the cache afresh from DRIVEBENCH_CACHE."""
    from drivebench.corpora.checksums import tree_checksums

    cache = str(tmp_path / "cache")

    def build(*args: str) -> str:
        code, out, err = invoke(["corpus", "build", "seed", *args], tmp_path, monkeypatch, DRIVEBENCH_CACHE=cache)
        assert code == 0, out + err
        return out

    assert "built: seed@1" in build("--out", str(tmp_path / "a"))
    assert "built: seed@1" in build()  # into the cache
    copied = build("--out", str(tmp_path / "b"))
    assert "copied from the cache: seed@1" in copied, copied
    assert tree_checksums(tmp_path / "a") == tree_checksums(tmp_path / "b")
    assert "built: seed@1" in build("--seed", "3", "--out", str(tmp_path / "c"))  # another key is built
