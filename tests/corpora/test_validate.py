"""`corpus validate` passes on the built-in seed corpus and names what is wrong in broken copies."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.validate import validate_corpus
from drivebench.formats.corpus import EVALSET_NAME, MANIFEST_NAME


@pytest.fixture(scope="module")
def seed_dir() -> Path:
    return resolve_corpus("seed")


def _copy(seed_dir: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "corpus"
    shutil.copytree(seed_dir, dst)
    return dst


def _edit_evalset(corpus: Path, fn: Callable[[list[dict]], None]) -> None:
    path = corpus / EVALSET_NAME
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    fn(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_seed_is_valid(seed_dir: Path) -> None:
    errors = [p for p in validate_corpus(seed_dir, min_gold_per_type=1) if p.level == "error"]
    assert errors == []


def test_cli_validate_exit_codes(seed_dir: Path, tmp_path: Path) -> None:
    ok = CliRunner().invoke(app, ["corpus", "validate", str(seed_dir)])
    assert ok.exit_code == 0 and "valid" in ok.output
    broken = _copy(seed_dir, tmp_path)
    _edit_evalset(broken, lambda rows: rows[0]["gold"].append({"doc_id": "d9999"}))
    bad = CliRunner().invoke(app, ["corpus", "validate", str(broken)])
    assert bad.exit_code == 1
    assert "d9999 does not exist" in bad.output


def _messages(corpus: Path) -> list[str]:
    return [str(p) for p in validate_corpus(corpus) if p.level == "error"]


def test_nonexistent_gold(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)
    _edit_evalset(c, lambda rows: rows[0]["gold"].append({"doc_id": "d9999"}))
    assert any("gold document d9999 does not exist" in m for m in _messages(c))


def test_forbidden_that_is_visible(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)

    def forbid_own_gold(rows: list[dict]) -> None:
        row = next(r for r in rows if r["gold"] and not r.get("forbidden"))
        row["forbidden"] = [row["gold"][0]["doc_id"]]
        row["gold"] = []
        forbid_own_gold.target = row["query_id"]  # type: ignore[attr-defined]

    _edit_evalset(c, forbid_own_gold)
    msgs = _messages(c)
    assert any(forbid_own_gold.target in m and "IS previewable" in m for m in msgs), msgs  # type: ignore[attr-defined]


def test_gold_invisible_to_asker(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)

    def move_forbidden_to_gold(rows: list[dict]) -> None:
        row = next(r for r in rows if r.get("forbidden"))
        row["gold"] = [{"doc_id": row["forbidden"][0]}]
        row["forbidden"] = []

    _edit_evalset(c, move_forbidden_to_gold)
    assert any("not previewable by the asker" in m for m in _messages(c))


def test_hops_must_be_gold_and_distinct(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)

    def break_hops(rows: list[dict]) -> None:
        row = next(r for r in rows if r.get("hops"))
        row["hops"] = [row["hops"][0], row["hops"][0], "d0001"]

    _edit_evalset(c, break_hops)
    msgs = _messages(c)
    assert any("hops repeat a document" in m for m in msgs)


def test_wrong_pinned_version(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)

    def repin(rows: list[dict]) -> None:
        row = next(
            r for r in rows if any(g.get("version_id", "").endswith("-v2") for g in r["gold"]) and not r.get("as_of")
        )
        for g in row["gold"]:
            if g.get("version_id", "").endswith("-v2"):
                g["version_id"] = g["version_id"][:-1] + "1"

    _edit_evalset(c, repin)
    assert any("was not current" in m for m in _messages(c))


def test_missing_file_and_bad_reference(seed_dir: Path, tmp_path: Path) -> None:
    c = _copy(seed_dir, tmp_path)
    victim = sorted((c / "files").rglob("*.*"))[0]
    victim.unlink()
    assert any("is missing" in m for m in _messages(c))
    manifest = json.loads((c / MANIFEST_NAME).read_text())
    manifest["users"][0]["department"] = "no-such-dept"
    (c / MANIFEST_NAME).write_text(json.dumps(manifest, ensure_ascii=False))
    assert any("unknown department no-such-dept" in m for m in _messages(c))


def test_type_coverage_threshold(seed_dir: Path) -> None:
    msgs = [str(p) for p in validate_corpus(seed_dir, min_gold_per_type=1000)]
    assert any("type coverage" in m and "< 1000" in m for m in msgs)
