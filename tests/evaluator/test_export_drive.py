"""``drivebench corpus export-drive``: files at their drive paths, versions beside, CSVs that re-create the
enterprise, and ids that map back with ``match = "path"`` or the exported ``id_map.csv``."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora.builtin import resolve_corpus
from drivebench.evaluator.idmap import IdMapper
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import RunHit, RunRecord


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_export_drive_writes_files_and_csvs_that_map_back(tmp_path: Path) -> None:
    corpus = resolve_corpus("seed")
    m = load_manifest(corpus)
    out = tmp_path / "export"
    done = CliRunner().invoke(app, ["corpus", "export-drive", "seed", "--out", str(out)])
    assert done.exit_code == 0, done.output
    drive = out / "drive"
    n_versions = sum(len(d.versions) for d in m.documents)
    assert sum(1 for p in drive.rglob("*") if p.is_file()) == n_versions
    for d in m.documents:
        current = drive / d.folder.lstrip("/") / d.name
        assert current.read_bytes() == (corpus / d.versions[-1].file).read_bytes(), d.doc_id
        for v in d.versions[:-1]:
            stem, _, ext = d.name.rpartition(".")
            older = drive / d.folder.lstrip("/") / f"{stem}.v{v.version}.{ext}"
            assert older.read_bytes() == (corpus / v.file).read_bytes(), older
    grants = _rows(out / "grants.csv")
    assert len(grants) == len(m.grants)
    by_id = {g.grant_id: g for g in m.grants}
    for row in grants:
        g = by_id[row["grant_id"]]
        assert row["actions"].split("|") == list(g.actions) and row["effect"] == g.effect
        assert row["subject_kind"] == g.subject.kind and (row["subject_id"] or None) == g.subject.id
        assert row["target"] == ("folder" if g.path else "document")
    assert {r["user_id"] for r in _rows(out / "users.csv")} == {u.user_id for u in m.users}
    assert {r["id"] for r in _rows(out / "departments.csv")} == {d.id for d in m.departments}
    # a drive loaded from the export answers with paths: both mappings give the corpus's ids back
    hits = [RunHit(doc_id=f"{d.folder.rstrip('/')}/{d.name}", version_id=str(len(d.versions))) for d in m.documents]
    rec = RunRecord(query_id="q", results=hits)
    want = [(d.doc_id, d.versions[-1].version_id) for d in m.documents]
    for mapper in (IdMapper("path", manifest=m), IdMapper(str(out / "id_map.csv"), manifest=m)):
        (mapped,), stats = mapper.map_records([rec])
        assert [(h.doc_id, h.version_id) for h in mapped.results] == want
        assert stats.unmapped == 0 and stats.unmapped_versions == 0
