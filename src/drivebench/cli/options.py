"""Options shared by several commands."""

from __future__ import annotations

from typing import Any

import typer

from drivebench.corpora.builtin import DEFAULT_CORPUS
from drivebench.extract.base import ExtractConfig
from drivebench.search.index.embedders import DEFAULT_EMBEDDER, canonical_name
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE, PIPELINES
from drivebench.search.retrieval.rerank import DEFAULT_RERANK, RERANKERS, check_rerank

CorpusOpt = typer.Option(
    DEFAULT_CORPUS, "--corpus", "-c", help="A built-in corpus name (seed, acme-zh, acme-en) or a corpus directory."
)


def _check_pipeline(value: str) -> str:
    if value not in PIPELINES:
        raise typer.BadParameter(f"unknown pipeline {value!r}; known: {', '.join(PIPELINES)}")
    return value


PipelineOpt = typer.Option(
    DEFAULT_PIPELINE,
    "--pipeline",
    callback=_check_pipeline,
    help="Retrieval pipeline: deep (default: hybrid plus bridge-code follow-up queries), hybrid (one fused "
    "round), dense, bm25, hierarchical (document first) or prf (RM3 + Rocchio feedback).",
)


def _check_rerank(value: str | None) -> str | None:
    try:
        return check_rerank(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


RerankOpt = typer.Option(
    DEFAULT_RERANK,
    "--rerank",
    callback=_check_rerank,
    help=f"A learned reranker after the pipeline: {', '.join(RERANKERS)}, none, or auto (the default: "
    "ltr-first-round with the e5 embedder it was trained with, none with another). After deep, ltr reorders the "
    "merged result and ltr-first-round deep's first round, which keeps its multi-hop completeness. See "
    "docs/embedders.md.",
    show_default=False,
)


def _check_embedder(value: str) -> str:
    try:
        canonical_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


EmbedderOpt = typer.Option(
    DEFAULT_EMBEDDER,
    "--embedder",
    callback=_check_embedder,
    help="Embedding backend: e5 (multilingual, default), minilm (English), st:NAME_OR_PATH (any "
    "sentence-transformers model) or hash (test backend).",
)


def parse_ks(value: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter(f"--k takes comma-separated integers, got {value!r}") from None
    if not ks or ks[0] < 1 or ks[-1] > 100:
        raise typer.BadParameter("--k values must be between 1 and 100")
    return ks


ExtractOpt = typer.Option(
    [],
    "--extract",
    help="Per-type extraction strategy TYPE=STRATEGY, repeatable (e.g. dxf=filename-only, pdf=layout).",
)


def parse_extract(pairs: list[str]) -> ExtractConfig:
    """``["dxf=filename-only"]`` -> an ExtractConfig; unknown types or strategies are a clear error."""
    try:
        return ExtractConfig.from_pairs(pairs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


LABEL_MAX = 100


def _check_label(value: str | None) -> str | None:
    """A run label: one line of at most ``LABEL_MAX`` characters; surrounding blanks are dropped."""
    if value is None:
        return None
    label = value.strip()
    if not label or len(label) > LABEL_MAX or any(ch in label for ch in "\r\n\t") or not label.isprintable():
        raise typer.BadParameter(f"--label takes one line of 1 to {LABEL_MAX} printable characters, got {value!r}")
    return label


LabelOpt = typer.Option(
    None,
    "--label",
    callback=_check_label,
    help="A name for this run (e.g. 'nightly', 'bge-m3 trial'): stored in metrics.json run_info.label and the "
    "history; `eval trend` draws one line per target, corpus version and label.",
)


def _check_answer_citation(value: str) -> str:
    from drivebench.simulator.answer.levers import parse_citation

    try:
        parse_citation(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value.strip().lower()


# the answer generator's levers (simulator.answer.levers): SimConfig.answer_citation / _length / _passages
AnswerCitationOpt = typer.Option(
    "always",
    "--answer-citation",
    callback=_check_answer_citation,
    help="How simulated answers cite what they quote: always (default), some or some:F (each quoted document "
    "cited with probability F, 0.5 by default; deterministic per query and document) or wrong (each statement "
    "cites another recalled document).",
)
AnswerLengthOpt = typer.Option(
    0,
    "--answer-length",
    min=0,
    max=50,
    help="At most this many sentences per simulated answer (0, the default: the built-in rule, up to 3 from the "
    "top passage and 1 from each other passage read).",
)
AnswerPassagesOpt = typer.Option(
    3, "--answer-passages", min=1, max=50, help="How many of the recall's top documents a simulated answer reads."
)


def answer_config(citation: str, length: int, passages: int) -> dict[str, Any]:
    """The SimConfig keyword arguments of the answer levers."""
    return {"answer_citation": citation, "answer_length": length, "answer_passages": passages}
