"""One ``eval run`` reads its corpus once: corpus.json (the catalog, the leak oracle, the eval set's fit, the id
map and the corpus version all come from one loaded corpus) and facts.jsonl; and it parses its eval set once (the
CLI and the Python API run one path)."""

from __future__ import annotations

import builtins
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.formats import evalset as evalset_format
from drivebench.formats.corpus import EVALSET_NAME, MANIFEST_NAME
from drivebench.testing import ServedSimulator

COUNTED = (MANIFEST_NAME, "facts.jsonl")


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every opening of corpus.json or facts.jsonl (by ``open``, ``Path.open``/``read_text``/``read_bytes``)."""
    reads: Counter[str] = Counter()
    real_open, real_path_open = builtins.open, Path.open

    def counted(file: Any) -> None:
        name = Path(str(file)).name if isinstance(file, str | Path) else ""
        if name in COUNTED:
            reads[name] += 1

    def open_(file: Any, *args: Any, **kwargs: Any) -> io.IOBase:
        counted(file)
        return real_open(file, *args, **kwargs)

    def path_open(self: Path, *args: Any, **kwargs: Any) -> io.IOBase:
        counted(self)
        return real_path_open(self, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(Path, "open", path_open)  # read_text and read_bytes open through it
    return reads


def test_one_eval_run_reads_corpus_json_once_and_parses_the_eval_set_once(
    drivebench_server: ServedSimulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    args = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token, "--k", "1,10"]
    args += ["--evalset", str(sim.corpus_dir / EVALSET_NAME), "--corpus", str(sim.corpus_dir)]
    args += ["--out", str(tmp_path / "run"), "--history", "none"]
    reads = _count_reads(monkeypatch)
    parsed: list[Path] = []
    parse = evalset_format.load_evalset

    def counted_parse(path: Path) -> Any:
        parsed.append(path)
        return parse(path)

    monkeypatch.setattr(evalset_format, "load_evalset", counted_parse)
    done = CliRunner().invoke(app, args)
    assert done.exit_code in (0, 1), done.output  # measured: a leak or a gate may fail it, never a usage error
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert reads[MANIFEST_NAME] == 1, reads
    assert reads["facts.jsonl"] <= 1, reads
    assert parsed == [sim.corpus_dir / EVALSET_NAME]
