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
from drivebench.evaluator.schema import EvalQuery, RunRecord

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
