"""A corpus holding hostile files ingests the rest; each hostile file is rejected with a recorded reason.

Uses the seed corpus plus six hostile documents written into a copy of it; the simulator runs with the
documented ``hash`` test embedder (this tests ingestion, not retrieval quality).
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.formats.corpus import MANIFEST_NAME
from drivebench.simulator.backend import SimConfig, Simulator


def _zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.txt", b"\0" * (64 << 20))
    return buf.getvalue()


def _traversal_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../../etc/passwd", "root:x:0:0")
        zf.writestr("ok.md", "# fine")
    return buf.getvalue()


HOSTILE: dict[str, tuple[str, bytes, str]] = {
    # doc_id: (file name, bytes, expected reason)
    "h-bomb": ("bomb.zip", _zip_bomb(), "zip-bomb"),
    "h-traversal": ("traversal.zip", _traversal_zip(), "path-traversal"),
    "h-corrupt-pdf": ("broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ntrunc", "corrupt-pdf"),
    "h-random-docx": ("random.docx", bytes(range(256)) * 8, "corrupt-docx"),
    "h-empty": ("empty.md", b"", "empty-file"),
    "h-pdf-as-docx": ("really-a-pdf.docx", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "type-mismatch"),
}


@pytest.fixture(scope="module")
def hostile_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = resolve_corpus("seed")
    dst = tmp_path_factory.mktemp("hostile") / "corpus"
    shutil.copytree(src, dst)
    manifest = json.loads((dst / MANIFEST_NAME).read_text())
    for doc_id, (name, data, _) in HOSTILE.items():
        rel = f"files/{doc_id}/v1{Path(name).suffix}"
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_bytes(data)
        when = manifest["clock"]["start"]
        manifest["documents"].append(
            {
                "doc_id": doc_id,
                "name": name,
                "folder": "/company",
                "file_type": Path(name).suffix.lstrip("."),
                "created_at": when,
                "versions": [{"version_id": f"{doc_id}-v1", "version": 1, "file": rel, "created_at": when}],
            }
        )
    (dst / MANIFEST_NAME).write_text(json.dumps(manifest, ensure_ascii=False))
    return dst


def test_hostile_files_rejected_rest_ingested(hostile_corpus: Path) -> None:
    sim = Simulator(Drive.from_corpus(hostile_corpus), SimConfig(embedder="hash", use_cache=False))
    report = sim.ingest_all()
    reasons = {r.doc_id: r.reason for r in report.rejected}
    assert reasons == {doc_id: reason for doc_id, (_, _, reason) in HOSTILE.items()}
    assert all(r.message for r in report.rejected)
    good = [d for d in sim.drive.documents if d not in HOSTILE]
    indexed_docs = {sim.store.doc_ids[i] for ids in sim.store.by_version.values() for i in ids}
    assert indexed_docs == set(good)
    meta = sim.index_metadata()
    assert {r["reason"] for r in meta["rejected"]} == {reason for _, _, reason in HOSTILE.values()}
    assert meta["extract"]["dxf"] == "entities+titleblock"
    # and the drive still answers
    principal = sim.engine.user_principal(sorted(sim.drive.users)[0])
    assert sim.recall(principal, "员工手册", 5).hits
