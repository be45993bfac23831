"""``eval score``: score a run file offline (JSONL or TREC) against an eval set or TREC qrels, with the corpus's
policies as the leak oracle when ``--corpus`` is given, then judge and print it as ``eval run`` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from drivebench.cli.common import console, err_console, progress_bar, resolve_corpus_option, status
from drivebench.cli.eval_common import (
    check_by,
    id_mapper,
    load_evalset_or_exit,
    one_line,
    parse_gates,
    scoring_bar,
    usage_error,
)
from drivebench.cli.eval_verdict import finish_with_gates, judge_gates
from drivebench.cli.options import parse_ks

if TYPE_CHECKING:
    from drivebench.evaluator.loaded_corpus import LoadedCorpus


def score_run(
    *,
    evalset: Path | None,
    qrels: Path | None,
    run_file: Path,
    k: str,
    json_out: str | None,
    corpus: str | None,
    match: str | None,
    max_error_rate: float,
    gates_given: list[str],
    junit: Path | None,
    junit_misses: bool,
    allow_no_oracle: bool,
    allow_leaks: bool,
    by: list[str],
    label: str | None,
) -> NoReturn:
    from drivebench.evaluator.evaluate import judge, with_status_first
    from drivebench.evaluator.failed_queries import attach
    from drivebench.evaluator.report.terminal import print_details, print_summary

    out_console = err_console if json_out == "-" else console
    ks = parse_ks(k)
    gates = parse_gates(gates_given)
    queries = _queries(evalset, qrels)
    check_by(queries, by)
    path = run_file / "run.jsonl" if run_file.is_dir() else run_file
    records = _records(path)
    loaded = _corpus(corpus, queries)
    if match is not None or loaded is not None:
        mapper = id_mapper(
            match or "doc_id",
            loaded.corpus_dir if loaded else None,
            manifest=loaded.manifest if loaded else None,
        )
        records, _ = mapper.map_records(records)
    oracle: Any = "evalset"
    if loaded is not None:
        with status("loading the corpus's policies (leak oracle) …"):
            oracle = loaded.oracle()
    result = _score(queries, records, ks, oracle, by, loaded)
    names = loaded.catalog if loaded is not None else None
    attach(result, queries, records, ks, names, oracle)  # JUnit names the missed and leaking queries' documents
    judge(result, max_error_rate)
    result["run_info"] = {"run": str(path), "evalset": str(evalset or qrels), **({"label": label} if label else {})}
    judge_gates(result, gates, allow_no_oracle, allow_leaks)  # before the JSON and the summary
    result = with_status_first(result)
    if json_out is not None and json_out != "-":
        from drivebench.evaluator.evaluate import write_metrics

        write_metrics(result, Path(json_out))
        err_console.print(f"wrote {json_out}")
        json_out = None
    print_summary(result, out_console)
    print_details(result, out_console)
    if json_out == "-":
        print(json.dumps(with_status_first(result), ensure_ascii=False, indent=1))
    finish_with_gates(result, gates, junit, None, out_console, None, allow_no_oracle, allow_leaks, junit_misses)


def _queries(evalset: Path | None, qrels: Path | None) -> list[Any]:
    from drivebench.evaluator.trec import read_qrels

    if (evalset is None) == (qrels is None):
        usage_error("give exactly one of --evalset or --qrels")
    if evalset is not None:
        return load_evalset_or_exit(evalset).queries
    assert qrels is not None
    try:
        return read_qrels(qrels)
    except (OSError, ValueError) as exc:
        usage_error(one_line(exc))


def _records(path: Path) -> list[Any]:
    from drivebench.evaluator.trec import is_trec_run, read_trec_run
    from drivebench.formats.evalset import load_run

    try:
        return read_trec_run(path) if is_trec_run(path) else load_run(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        usage_error(one_line(exc))


def _corpus(corpus: str | None, queries: list[Any]) -> LoadedCorpus | None:
    """``--corpus`` read once; an eval set of another corpus or a malformed facts.jsonl is a usage error."""
    if corpus is None:
        return None
    from drivebench.api import check_fits
    from drivebench.evaluator.loaded_corpus import LoadedCorpus

    corpus_dir = resolve_corpus_option(corpus)
    try:
        loaded = LoadedCorpus.load(corpus_dir, corpus)
    except ValueError as exc:  # what answers are checked against for answer leaks
        usage_error(one_line(exc))
    check_fits(queries, loaded)  # an eval set of another corpus: a usage error
    return loaded


def _score(
    queries: list[Any], records: list[Any], ks: list[int], oracle: Any, by: list[str], loaded: LoadedCorpus | None
) -> dict[str, Any]:
    """``scoring.score`` with a bar: the leak oracle's Casbin decisions take seconds."""
    from drivebench.evaluator.oracle_progress import ProgressOracle
    from drivebench.evaluator.scoring import score

    n = len(queries)
    with progress_bar() as bar:
        step = scoring_bar(bar)
        step(0, n)
        if not isinstance(oracle, str):
            oracle = ProgressOracle(oracle, lambda done: step(min(done, n), n))
        facts = loaded.facts if loaded is not None else None
        reason = loaded.no_facts_reason if loaded is not None else None
        if reason:
            result = score(queries, records, ks, oracle=oracle, by=by, facts=facts, no_facts_reason=reason)
        else:
            result = score(queries, records, ks, oracle=oracle, by=by, facts=facts)
        step(n, n)
    return result
