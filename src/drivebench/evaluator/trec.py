"""Export an eval set and a run in TREC format, to cross-check drivebench's numbers with trec_eval.

``run.trec``, one line per returned result::

    qid Q0 docid rank score tag

``qrels.txt``, one line per gold document::

    qid 0 docid grade

How the export keeps trec_eval's numbers equal to ours:

* **Order.** trec_eval re-sorts each query's results by score (ties broken by docid), while
  drivebench scores the list *as returned*. The exported score is therefore synthetic and strictly
  decreasing with rank (``n - rank + 1`` for a list of ``n`` results), so trec_eval's sort
  reproduces the returned order exactly. The system's own score is not exported.
* **Repeated documents.** drivebench counts a document once, at its first rank, but a later copy
  (another chunk of the same file) still takes its slot. trec_eval forbids a docid twice per query,
  so a repeat is exported as ``docid#dupN`` (N = its rank): a non-relevant placeholder that keeps
  every later result at its rank.
* **Errored and missing queries** get no lines (drivebench ignores an errored record's results and
  scores it as an empty ranking). trec_eval averages only over queries present in the run unless
  it is given ``-c``; run ``trec_eval -c`` to average over every judged query, like drivebench.
* **Queries without gold** get no qrels lines, so trec_eval skips them, as drivebench does for
  gold-based metrics.
* Gold graded ``g`` is exported as relevance ``g`` (the first entry of a duplicated gold doc wins).
  A gold document's pinned ``version_id`` is not part of the docid: TREC judges documents.
* Whitespace or ``%`` inside an id is percent-encoded (``%20``, ``%25``): TREC files are split on
  whitespace.

The correspondence: ``success_K`` = ``hit_rate@K``, ``recall_K`` = ``recall@K``,
``ndcg_cut_K`` = ``ndcg@K`` (trec_eval's gain is the grade, as ours), and ``recip_rank`` equals
``mrr@K`` when K covers the whole list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from drivebench.evaluator.metrics._common import grade_map
from drivebench.evaluator.metrics._run import align
from drivebench.formats.evalset import EvalQuery, RunRecord

RUN_FILE = "run.trec"
QRELS_FILE = "qrels.txt"
DEFAULT_TAG = "drivebench"

_UNSAFE = re.compile(r"[\s%]")


def trec_id(text: str) -> str:
    """An id safe in a whitespace-separated TREC file (``%`` and whitespace percent-encoded)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), text)


def run_lines(queries: Sequence[EvalQuery], run: Iterable[RunRecord], tag: str = DEFAULT_TAG) -> list[str]:
    """``run.trec`` lines, in eval-set order then rank order."""
    if not tag or _UNSAFE.search(tag):
        raise ValueError(f"run tag must be non-empty without whitespace, got {tag!r}")
    al = align(queries, run)
    lines: list[str] = []
    for q, hits in zip(al.queries, al.hits, strict=True):
        n = len(hits)
        seen: set[str] = set()
        qid = trec_id(q.query_id)
        for rank, hit in enumerate(hits, 1):
            doc = trec_id(hit.doc_id)
            if hit.doc_id in seen:
                doc = f"{doc}#dup{rank}"
            seen.add(hit.doc_id)
            lines.append(f"{qid} Q0 {doc} {rank} {n - rank + 1} {tag}")
    return lines


def qrels_lines(queries: Sequence[EvalQuery]) -> list[str]:
    """``qrels.txt`` lines: every gold document of every query with its grade."""
    lines: list[str] = []
    for q in queries:
        qid = trec_id(q.query_id)
        for doc, grade in grade_map([(g.doc_id, g.grade) for g in q.gold]).items():
            lines.append(f"{qid} 0 {trec_id(doc)} {int(grade)}")
    return lines


def export_trec(
    queries: Sequence[EvalQuery], run: Iterable[RunRecord], out_dir: str | Path, tag: str = DEFAULT_TAG
) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.txt`` into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = out / RUN_FILE, out / QRELS_FILE
    run_path.write_text("".join(line + "\n" for line in run_lines(queries, run, tag)), encoding="utf-8")
    qrels_path.write_text("".join(line + "\n" for line in qrels_lines(queries)), encoding="utf-8")
    return run_path, qrels_path


# --- reading TREC files back (``eval score --run run.trec --qrels qrels.txt``) ---------------------

_PCT = re.compile(r"(%[0-9A-Fa-f]{2})+")
_DUP = re.compile(r"#dup\d+$")


def untrec_id(text: str) -> str:
    """The inverse of ``trec_id`` (percent-decoding)."""
    return _PCT.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace"), text)


def is_trec_run(path: str | Path) -> bool:
    """True when the first non-empty line looks like ``qid Q0 docid rank score tag``."""
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                parts = line.split()
                return not line.lstrip().startswith("{") and len(parts) == 6
    return False


def read_trec_run(path: str | Path) -> list[RunRecord]:
    """A TREC run file as run records, one per query in file order of first appearance.

    Results are ordered as trec_eval orders them: by score, descending; ties by rank, then by line
    order. A ``docid#dupN`` placeholder (``export_trec``) is the document repeated: it keeps its
    slot. ValueError with ``file:line`` for a malformed line.
    """
    from drivebench.formats.evalset import RunHit

    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 6:
                raise ValueError(
                    f"{path}:{lineno}: a TREC run line has 6 fields (qid Q0 docid rank score tag), got {len(parts)}"
                )
            qid, _, doc, rank, score, _tag = parts
            try:
                r, s = int(rank), float(score)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: rank must be an integer and score a number") from None
            rows.setdefault(untrec_id(qid), []).append((-s, r, lineno, untrec_id(_DUP.sub("", doc))))
    records = []
    for qid, hits in rows.items():
        hits.sort()
        records.append(
            RunRecord(
                query_id=qid,
                results=[RunHit(doc_id=d, score=-s, rank=i) for i, (s, _, _, d) in enumerate(hits, 1)],
            )
        )
    return records


QRELS_PRINCIPAL = "(qrels: no principal)"


def read_qrels(path: str | Path) -> list[EvalQuery]:
    """A TREC qrels file (``qid 0 docid grade``) as eval queries: grade > 0 is gold. The queries have
    no text and no principal, so permission metrics are not measured on them."""
    from drivebench.formats.evalset import GoldDoc

    gold: dict[str, list[GoldDoc]] = {}
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 4:
                raise ValueError(f"{path}:{lineno}: a qrels line has 4 fields (qid 0 docid grade), got {len(parts)}")
            try:
                grade = int(parts[3])
            except ValueError:
                raise ValueError(f"{path}:{lineno}: grade {parts[3]!r} is not an integer") from None
            qid = untrec_id(parts[0])
            gold.setdefault(qid, [])
            if grade > 0:
                gold[qid].append(GoldDoc(doc_id=untrec_id(parts[2]), grade=grade))
    return [EvalQuery(query_id=q, query=q, user_role=QRELS_PRINCIPAL, gold=g) for q, g in gold.items()]
