"""``corpus export-drive`` is all or nothing: it refuses two files at one path before writing anything, builds
the export in a temporary directory beside the target and renames it into place only when complete, removes
it on any failure (a full disk, an interruption), and replaces an existing target only with ``--force``."""

from __future__ import annotations

import csv
import errno
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora import export_drive as export_module
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.export_drive import ExportRefused, export_drive
from drivebench.formats.corpus import (
    Clock,
    Department,
    Document,
    Folder,
    Manifest,
    User,
    Version,
    load_manifest,
    write_manifest,
)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _doc(doc_id: str, name: str, folder: str, versions: int = 1, trashed_at: datetime | None = None) -> Document:
    ext = name.rsplit(".", 1)[-1]
    return Document(
        doc_id=doc_id,
        name=name,
        folder=folder,
        file_type=ext,
        created_at=T0,
        versions=[
            Version(
                version_id=f"{doc_id}-v{n}", version=n, file=f"files/{doc_id}/v{n}.{ext}", created_at=T0 + timedelta(n)
            )
            for n in range(1, versions + 1)
        ],
        trashed_at=trashed_at,
    )


def tiny_corpus(root: Path, docs: list[Document]) -> Path:
    """A hand-made corpus: two folders, one user, ``docs`` with distinct bytes per version."""
    m = Manifest(
        name="tiny",
        language="en",
        clock=Clock(start=T0, now=NOW),
        departments=[Department(id="ops", name="Ops")],
        users=[User(user_id="u1", name="Ann", department="ops", roles=["staff"])],
        folders=[Folder(path="/"), Folder(path="/reports", owner_department="ops")],
        documents=docs,
        grants=[],
    )
    root.mkdir(parents=True)
    for d in docs:
        for v in d.versions:
            (root / v.file).parent.mkdir(parents=True, exist_ok=True)
            (root / v.file).write_text(f"{d.doc_id} version {v.version}\n", encoding="utf-8")
    write_manifest(m, root)
    return root


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


GOOD = [
    _doc("d1", "plan.md", "/reports", versions=3),
    _doc("d2", "plan.md", "/reports", versions=2, trashed_at=NOW - timedelta(days=1)),  # in the trash: no path
    _doc("d3", "plan.md", "/"),
    _doc("d4", "notes", "/reports", versions=2),  # no extension: older versions are notes.v1
]


def test_a_small_corpus_exports_completely(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "parent" / "export"
    counts = export_drive(corpus, out)
    assert counts["files"] == 8 and counts["documents"] == 4 and counts["trashed"] == 1
    assert _files_under(out / "drive") == [
        "plan.md",
        "reports/notes",
        "reports/notes.v1",
        "reports/plan.md",
        "reports/plan.v1.md",
        "reports/plan.v2.md",
    ]
    assert _files_under(out / "trash") == ["d2/plan.md", "d2/plan.v1.md"]
    versions = _rows(out / "versions.csv")
    assert len(versions) == 8
    for row in versions:  # every version's file is in the export, with that version's bytes
        assert (out / row["file"]).read_text(encoding="utf-8") == f"{row['doc_id']} version {row['version']}\n"
    docs = {r["doc_id"]: r for r in _rows(out / "documents.csv")}
    assert docs["d2"]["path"] == "/reports/plan.md" and docs["d2"]["trashed_at"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["export"]  # no partial directory left behind
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask  # as mkdir makes it, not mkdtemp's 0700


# everything an export holds, sorted
EXPORT_ENTRIES = ["departments.csv", "documents.csv", "drive", "folders.csv", "grants.csv", "id_map.csv"]
EXPORT_ENTRIES += ["projects.csv", "trash", "users.csv", "versions.csv"]


def _fail_after(n: int, exc: BaseException, real: Callable[..., object]) -> Callable[..., object]:
    calls = {"n": 0}

    def wrapped(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] > n:
            raise exc
        return real(*args, **kwargs)

    return wrapped


FAILURES = {
    "disk full copying the 4th file": ("copyfile", 3, OSError(errno.ENOSPC, "No space left on device")),
    "disk full writing the 3rd CSV": ("_write_csv", 2, OSError(errno.ENOSPC, "No space left on device")),
    "Ctrl-C copying the 2nd file": ("copyfile", 1, KeyboardInterrupt()),
}


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_a_failure_midway_leaves_no_target_and_no_temporary_directory(
    failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where, after, exc = FAILURES[failure]
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    parent = tmp_path / "parent"
    parent.mkdir()
    if where == "copyfile":
        monkeypatch.setattr(export_module.shutil, "copyfile", _fail_after(after, exc, shutil.copyfile))
    else:
        monkeypatch.setattr(export_module, "_write_csv", _fail_after(after, exc, export_module._write_csv))
    with pytest.raises(type(exc)) as raised:
        export_drive(corpus, parent / "export")
    if isinstance(exc, OSError):
        assert raised.value.errno == errno.ENOSPC
    assert list(parent.iterdir()) == []  # neither the target nor a .export.partial-* directory


def test_a_failed_forced_replacement_keeps_the_earlier_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "parent" / "export"
    export_drive(corpus, out)
    before = {p: (out / p).read_bytes() for p in _files_under(out)}
    monkeypatch.setattr(
        export_module.shutil, "copyfile", _fail_after(2, OSError(errno.ENOSPC, "full"), shutil.copyfile)
    )
    with pytest.raises(OSError):
        export_drive(corpus, out, force=True)
    assert {p: (out / p).read_bytes() for p in _files_under(out)} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["export"]


def test_an_existing_target_is_refused_and_force_replaces_it_whole(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "export"
    export_drive(corpus, out)
    (out / "drive" / "left-over.txt").write_text("from an earlier export", encoding="utf-8")
    with pytest.raises(ExportRefused, match="already exists"):
        export_drive(corpus, out)
    assert (out / "drive" / "left-over.txt").is_file()  # refused: untouched
    export_drive(corpus, out, force=True)
    assert not (out / "drive" / "left-over.txt").exists()  # replaced, not merged
    assert len(_files_under(out / "drive")) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "export"]
    other = tmp_path / "not-an-export"
    other.mkdir()
    (other / "thesis.tex").write_text("mine", encoding="utf-8")
    with pytest.raises(ExportRefused, match="not an earlier export"):
        export_drive(corpus, other, force=True)  # --force replaces only an export
    assert (other / "thesis.tex").read_text(encoding="utf-8") == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert export_drive(corpus, empty)["files"] == 8  # an empty directory holds nothing to lose


CLASHES = {
    "two live documents": (
        [_doc("d1", "plan.md", "/reports"), _doc("d7", "plan.md", "/reports", versions=2)],
        ["/reports/plan.md: d1, d7", "held by two or more live documents"],
    ),
    "an older version's name is another's file": (
        [_doc("d1", "plan.md", "/reports", versions=2), _doc("d7", "plan.v1.md", "/reports")],
        ["/reports/plan.v1.md", "d1 (version 1 of plan.md)", "d7 (current file)"],
    ),
    "names differing only in case": (
        [_doc("d1", "Plan.md", "/reports"), _doc("d7", "plan.md", "/reports")],
        ["/reports/Plan.md = /reports/plan.md", "d1 (current file)", "d7 (current file)"],
    ),
    "a file where a folder is": ([_doc("d7", "reports", "/")], ["/reports: d7 (current file) is where a folder is"]),
    "a name that climbs out of the export": (
        [_doc("d7", "../../escaped.md", "/reports")],
        ["documents whose name is not a file name", "d7"],
    ),
    "a version file outside the corpus": (
        [
            _doc("d1", "plan.md", "/reports").model_copy(
                update={"versions": [Version(version_id="d1-v1", version=1, file="../secret.md", created_at=T0)]}
            )
        ],
        ["documents with a version file outside the corpus directory: d1"],
    ),
    "a trashed document's id that climbs out": (
        [_doc("../d7", "plan.md", "/reports", trashed_at=NOW)],
        ["trashed documents whose id is not a folder name", "../d7"],
    ),
}


@pytest.mark.parametrize("clash", list(CLASHES), ids=list(CLASHES))
def test_two_files_at_one_path_are_refused_before_anything_is_written(
    clash: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, expected = CLASHES[clash]
    corpus = tiny_corpus(tmp_path / "corpus", docs)
    parent = tmp_path / "parent"
    parent.mkdir()
    written: list[object] = []
    monkeypatch.setattr(export_module.shutil, "copyfile", lambda *a, **k: written.append(a))
    monkeypatch.setattr(export_module.tempfile, "mkdtemp", lambda *a, **k: written.append(a))
    with pytest.raises(ExportRefused) as refused:
        export_drive(corpus, parent / "export")
    for text in expected:
        assert text in str(refused.value)
    assert "nothing was written" in str(refused.value)
    assert written == [] and list(parent.iterdir()) == []


def test_a_trashed_document_at_a_live_documents_path_is_not_a_clash(tmp_path: Path) -> None:
    docs = [_doc("d1", "plan.md", "/reports"), _doc("d7", "plan.md", "/reports", trashed_at=NOW - timedelta(1))]
    out = tmp_path / "export"
    export_drive(tiny_corpus(tmp_path / "corpus", docs), out)
    assert (out / "drive/reports/plan.md").read_text(encoding="utf-8") == "d1 version 1\n"
    assert (out / "trash/d7/plan.md").read_text(encoding="utf-8") == "d7 version 1\n"


def test_cli_refuses_duplicate_paths_with_an_error_and_exit_1(tmp_path: Path) -> None:
    corpus = tiny_corpus(
        tmp_path / "corpus", [_doc("d1", "plan.md", "/reports"), _doc("d7", "plan.md", "/reports", versions=2)]
    )
    out = tmp_path / "export"
    done = CliRunner().invoke(app, ["corpus", "export-drive", str(corpus), "--out", str(out)])
    assert done.exit_code == 1, done.output
    assert isinstance(done.exception, SystemExit)  # a clean exit, not an exception escaping
    assert "Traceback" not in done.output
    assert "error: cannot export" in done.output and "/reports/plan.md: d1, d7" in done.output
    assert not out.exists()


def test_an_existing_directory_is_filled_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out .`` or a mount point: the directory itself stays (a shell inside it still sees the export, and
    a mount point cannot be renamed); a failure leaves it as it was."""
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "export"
    out.mkdir()
    inode = out.stat().st_ino
    monkeypatch.chdir(out)
    real = shutil.copyfile  # export_module.shutil is shutil: patched below for everyone
    monkeypatch.setattr(export_module.shutil, "copyfile", _fail_after(2, KeyboardInterrupt(), real))
    with pytest.raises(KeyboardInterrupt):
        export_drive(corpus, ".")
    assert list(out.iterdir()) == []
    monkeypatch.setattr(export_module.shutil, "copyfile", real)
    export_drive(corpus, ".")
    (out / "drive" / "left-over.txt").write_text("old", encoding="utf-8")
    export_drive(corpus, ".", force=True)
    assert sorted(p.name for p in Path(".").iterdir()) == EXPORT_ENTRIES  # no left-over, no hidden directory
    assert out.stat().st_ino == inode and len(_files_under(Path("drive"))) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "export"]


def test_cli_existing_target_and_force(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "export"
    args = ["corpus", "export-drive", str(corpus), "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    (out / "drive" / "left-over.txt").write_text("old", encoding="utf-8")
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 1 and "already exists" in again.output and "--force" in again.output
    forced = CliRunner().invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert not (out / "drive" / "left-over.txt").exists()


def test_cli_disk_full_is_an_error_naming_the_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tiny_corpus(tmp_path / "corpus", GOOD)
    out = tmp_path / "export"
    monkeypatch.setattr(
        export_module.shutil,
        "copyfile",
        _fail_after(1, OSError(errno.ENOSPC, "No space left on device"), shutil.copyfile),
    )
    done = CliRunner().invoke(app, ["corpus", "export-drive", str(corpus), "--out", str(out)])
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert "was not written" in done.output and "No space left on device" in done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


# Paths two live documents share in the frozen default acme@2 builds (as measured; they must not change)
FROZEN_DUPLICATE_PATHS = {"acme-zh@2": 19, "acme-en@2": 22}


@pytest.mark.parametrize("name", list(FROZEN_DUPLICATE_PATHS))
def test_frozen_acme_v2_is_refused_whole(name: str, tmp_path: Path) -> None:
    """It used to fail after writing 222 files and leave them; now it names every shared path and writes none."""
    corpus = resolve_corpus(name)
    m = load_manifest(corpus)
    with pytest.raises(ExportRefused) as refused:
        export_drive(corpus, tmp_path / "export")
    lines = [line.strip() for line in str(refused.value).splitlines() if line.startswith("  ")]
    assert len(lines) == FROZEN_DUPLICATE_PATHS[name]
    live = [d for d in m.documents if d.trashed_at is None]
    for line in lines:
        path, ids = line.rsplit(": ", 1)
        holders = sorted(d.doc_id for d in live if f"{d.folder.rstrip('/')}/{d.name}" == path)
        assert holders == sorted(ids.split(", ")) and len(holders) == 2
    assert list(tmp_path.iterdir()) == []
