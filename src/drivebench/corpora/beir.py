"""BEIR and TREC interchange.

Export (corpus -> BEIR layout): ``corpus.jsonl`` (``_id``, ``title``, ``text`` = the extracted text of the
head version, ``metadata``), ``queries.jsonl`` (``_id``, ``text``, ``metadata`` with the principal, tags and
``as_of``), ``qrels/test.tsv`` (``query-id corpus-id score`` with a header) and ``qrels.trec``
(``qid 0 docid grade``, for trec_eval).

Import (BEIR layout -> corpus): each BEIR document becomes a Markdown document in ``/beir``, readable by
everyone (BEIR has no permissions), asked by one user ``beir-reader``; qrels with score > 0 become gold
with that grade. The imported corpus then runs through the simulator and the evaluator like any other.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from drivebench.extract import ExtractionError, extract
from drivebench.formats.corpus import (
    EVALSET_NAME,
    Clock,
    Department,
    Document,
    Folder,
    Grant,
    Manifest,
    Subject,
    User,
    Version,
    load_manifest,
    write_manifest,
)
from drivebench.formats.evalset import EvalQuery, GoldDoc, load_evalset, write_jsonl

IMPORT_USER = "beir-reader"


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def export_beir(corpus_dir: Path, out: Path, *, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """``progress(done, total)`` after each document extracted (the slow part)."""
    corpus_dir, out = Path(corpus_dir), Path(out)
    m = load_manifest(corpus_dir)
    docs = []
    for i, d in enumerate(m.documents, 1):
        if progress is not None:
            progress(i - 1, len(m.documents))
        head = d.versions[-1]
        try:
            text = extract((corpus_dir / head.file).read_bytes(), d.name).text
        except ExtractionError as exc:
            text = f"[not extractable: {exc.reason}]"
        meta: dict[str, Any] = {
            "file_type": d.file_type,
            "folder": d.folder,
            "secret_level": d.secret_level,
            "version_id": head.version_id,
        }
        docs.append({"_id": d.doc_id, "title": d.title or d.name, "text": text, "metadata": meta})
        if progress is not None:
            progress(i, len(m.documents))
    _jsonl(out / "corpus.jsonl", docs)
    queries = load_evalset(corpus_dir / EVALSET_NAME) if (corpus_dir / EVALSET_NAME).is_file() else []
    rows = []
    for q in queries:
        meta = {"tags": q.tags}
        for key in ("user_id", "user_role", "department"):
            if getattr(q, key):
                meta[key] = getattr(q, key)
        if q.as_of is not None:
            meta["as_of"] = q.as_of.isoformat()
        rows.append({"_id": q.query_id, "text": q.query, "metadata": meta})
    _jsonl(out / "queries.jsonl", rows)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    n_qrels = 0
    with (
        (out / "qrels" / "test.tsv").open("w", encoding="utf-8", newline="") as tsv,
        (out / "qrels.trec").open("w", encoding="utf-8") as trec,
    ):
        writer = csv.writer(tsv, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        for q in queries:
            for g in {g.doc_id: g for g in q.gold}.values():
                writer.writerow([q.query_id, g.doc_id, g.grade])
                trec.write(f"{q.query_id} 0 {g.doc_id} {g.grade}\n")
                n_qrels += 1
    return {"documents": len(docs), "queries": len(rows), "qrels": n_qrels}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            obj = json.loads(line)
            if not isinstance(obj, dict) or "_id" not in obj:
                raise ValueError(f"{path}:{lineno}: each line must be an object with _id")
            rows.append(obj)
    return rows


def _read_qrels(beir_dir: Path, split: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with (beir_dir / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        for i, row in enumerate(csv.reader(fh, delimiter="\t")):
            if i == 0 and row and row[0] == "query-id":
                continue
            if len(row) >= 3 and int(row[2]) > 0:
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def import_beir(beir_dir: Path, out: Path, *, name: str = "beir", split: str = "test") -> Manifest:
    beir_dir, out = Path(beir_dir), Path(out)
    docs = _read_jsonl(beir_dir / "corpus.jsonl")
    queries = {q["_id"]: q for q in _read_jsonl(beir_dir / "queries.jsonl")}
    qrels = _read_qrels(beir_dir, split)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    documents = []
    for i, row in enumerate(docs):
        doc_id = str(row["_id"])
        rel = f"files/{i:06d}/v1.md"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        title = str(row.get("title") or doc_id)
        (out / rel).write_text(f"# {title}\n\n{row.get('text', '')}\n", encoding="utf-8")
        version = Version(version_id=f"{doc_id}-v1", version=1, file=rel, created_at=when)
        documents.append(
            Document(
                doc_id=doc_id,
                name=f"{i:06d}.md",
                folder="/beir",
                file_type="md",
                secret_level="public",
                title=title,
                created_at=when,
                versions=[version],
            )
        )
    manifest = Manifest(
        name=name,
        language="und",
        description=f"imported from the BEIR layout at {beir_dir.name}",
        clock=Clock(start=when, now=when),
        departments=[Department(id="all", name="All")],
        users=[User(user_id=IMPORT_USER, name="BEIR reader", department="all", roles=["reader"], clearance="public")],
        folders=[Folder(path="/"), Folder(path="/beir", kind="shared")],
        documents=documents,
        grants=[Grant(grant_id="beir-all", path="/beir", subject=Subject(kind="everyone"), actions=["download"])],
    )
    write_manifest(manifest, out)
    known = {d.doc_id for d in documents}
    evalset = [
        EvalQuery(
            query_id=qid,
            query=str(queries[qid]["text"]),
            user_id=IMPORT_USER,
            gold=[GoldDoc(doc_id=d, grade=g) for d, g in sorted(rels.items()) if d in known],
            tags={"kind": "single", "source": "beir"},
        )
        for qid, rels in sorted(qrels.items())
        if qid in queries
    ]
    write_jsonl(out / EVALSET_NAME, evalset)
    return manifest
