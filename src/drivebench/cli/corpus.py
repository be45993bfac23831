"""``drivebench corpus build|validate|stats|audit|export-beir|import-beir|export-drive``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from drivebench.cli.common import console, err_console

app = typer.Typer(no_args_is_help=True)


def _scale(value: str | None) -> str | int | None:
    if value is None:
        return None
    if value.isdigit():
        return int(value)
    if value not in ("small", "default", "large"):
        raise typer.BadParameter("--scale is small, default, large or a document count")
    return value


@app.command("build")
def build(
    name: str = typer.Argument(
        ..., help="Built-in corpus NAME or NAME@VERSION: seed, acme-zh, acme-en (bare = newest), acme-zh@1, …"
    ),
    seed: int | None = typer.Option(None, "--seed", help="Generator seed (the same seed gives the same corpus)."),
    scale: str | None = typer.Option(None, "--scale", help="small, default, large or a document count."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default: the corpus cache)."),
) -> None:
    """Build a built-in corpus into a directory."""
    import time

    from drivebench.corpora.builtin import build_corpus, cached_build, lookup_builtin, resolve_corpus

    try:
        label = lookup_builtin(name).label
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0])) from None
    started = time.perf_counter()
    copied = out is not None and cached_build(label, seed=seed, scale=_scale(scale)) is not None
    from drivebench.cli.common import build_progress
    from drivebench.corpora.builtin import corpus_cache_root

    # the build counts the files it writes
    with build_progress(f"building {label}", [Path(out).parent if out else corpus_cache_root()]):
        path = (
            build_corpus(label, out, seed=seed, scale=_scale(scale))
            if out
            else resolve_corpus(label, seed=seed, scale=_scale(scale))
        )
    how = "copied from the cache" if copied else "built"
    console.print(f"{how}: {label} in {time.perf_counter() - started:.1f} s → {path}")


@app.command("validate")
def validate(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    min_gold_per_type: int = typer.Option(0, help="Require every file type to be the gold of this many queries."),
) -> None:
    """Check schema and references: gold exists and is visible to its asker, hops, forbidden, coverage."""
    from drivebench.cli.common import resolve_with_progress, status
    from drivebench.corpora.validate import validate_corpus

    try:
        corpus_dir = resolve_with_progress(path)
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
    with status(f"validating {corpus_dir.name} …"):
        problems = validate_corpus(corpus_dir, min_gold_per_type=min_gold_per_type)
    errors = [p for p in problems if p.level == "error"]
    for p in problems:
        (err_console if p.level == "error" else console).print(str(p), markup=False)
    if errors:
        err_console.print(f"[red]{len(errors)} error(s)[/] in {corpus_dir}")
        raise typer.Exit(1)
    console.print(f"[green]valid[/]: {corpus_dir} ({len(problems)} warning(s))")


@app.command("stats")
def stats(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Counts of documents, types, versions, users, queries by kind and hops, gold by type."""
    from drivebench.corpora.stats import corpus_stats

    try:
        from drivebench.cli.common import resolve_with_progress

        data = corpus_stats(resolve_with_progress(path))
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return
    table = Table(title=f"corpus {data['name']}")
    table.add_column("statistic", overflow="fold")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        table.add_row(key, json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value))
    console.print(table)


@app.command("audit")
def audit(
    path: str = typer.Argument(..., help="A corpus directory or built-in name (NAME or NAME@VERSION)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as JSON."),
    embedder: str | None = typer.Option(
        None, "--embedder", help="Embedding backend for dense and hybrid (default: the registry's default)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when an acceptance check fails."),
    pipelines: str = typer.Option("bm25,dense,hybrid", "--pipelines", help="Comma-separated pipelines to run."),
) -> None:
    """Difficulty report of the eval set: title-only BM25, BM25/dense/hybrid Hit@1/Hit@10/MRR@10 per kind and
    phrasing, chain shortcut rates (the asker's view; the whole corpus by BM25 and by dense), the eval set's
    composition, the gold lint (contradicting and missing gold), missing-gold candidates, near-duplicate pairs,
    acceptance checks (--strict: exit 1 when one fails)."""
    from drivebench.cli.common import progress_bar, quiet_libraries
    from drivebench.experiments.corpus_audit import audit_corpus
    from drivebench.search.retrieval.pipelines import PIPELINES

    chosen = tuple(p.strip() for p in pipelines.split(",") if p.strip())
    if not chosen or any(p not in PIPELINES for p in chosen):
        raise typer.BadParameter(f"--pipelines takes a comma-separated subset of {', '.join(PIPELINES)}")
    quiet_libraries()
    from drivebench.cli.common import resolve_with_progress

    try:
        corpus_dir = resolve_with_progress(path)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0])) from None
    with progress_bar() as bar:
        task = bar.add_task("audit: 3 pipelines + title-only BM25 per query", total=None)
        report = audit_corpus(
            corpus_dir,
            embedder=embedder,
            pipelines=chosen,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    failed = [c for c in report["acceptance"] if not c["ok"]]
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        _print_audit(report)
    if strict and failed:
        raise typer.Exit(1)


def _fmt(value: object) -> str:
    return "not measured" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _print_audit(report: dict[str, Any]) -> None:
    label = report["corpus_version"] or report["corpus"]
    console.print(
        f"audit of {label}: {report['queries']} queries ({report['scored_queries']} with gold), "
        f"embedder {report['embedder']}, median visible documents {_fmt(report['visible_documents_median'])}"
    )
    table = Table(title="Hit@1 / Hit@10 / MRR@10 (whole set, then per kind and phrasing)")
    for col in ("system", "slice", "n", "Hit@1", "Hit@10", "MRR@10"):
        table.add_column(col, justify="right" if col in ("n", "Hit@1", "Hit@10", "MRR@10") else "left")
    title = report["title_only"]
    systems = {"title-only bm25": {"all": title, "by_kind": title["by_kind"], "by_phrasing": title["by_phrasing"]}}
    systems.update(report["pipelines"])
    for name, data in systems.items():
        slices = [("all", data["all"])]
        slices += [(f"kind={k}", v) for k, v in data["by_kind"].items()]
        slices += [(f"phrasing={k}", v) for k, v in data["by_phrasing"].items()]
        for slice_name, v in slices:
            table.add_row(name, slice_name, str(v["n"]), _fmt(v["hit@1"]), _fmt(v["hit@10"]), _fmt(v["mrr@10"]))
        table.add_section()
    console.print(table)
    chains = report["chains"]
    console.print(
        f"chain shortcut rate, asker's view: {_fmt(chains['shortcut_rate'])} ({chains['shortcuts']} of "
        f"{chains['multi_hop_queries']} multi-hop queries have a hop k >= 2 in BM25's top 3 over the question alone, "
        "among what the asker may see)"
    )
    whole = report["chain_shortcuts_whole_corpus"]
    console.print(
        f"chain shortcut rate, whole corpus (no permission filter): BM25 {_fmt(whole['bm25']['shortcut_rate'])} "
        f"({whole['bm25']['shortcuts']}), dense {_fmt(whole['dense']['shortcut_rate'])} ({whole['dense']['shortcuts']})"
        f" of {whole['multi_hop_queries']}"
    )
    _print_composition(report["composition"])
    lint = report["gold_lint"]
    reasons = ", ".join(f"{k} {v}" for k, v in lint["not_linted_by_reason"].items()) or "none"
    console.print(
        f"gold lint: {lint['linted']} queries linted, {lint['not_linted']} not linted ({reasons}), "
        f"{lint['permission_only']} permission-only skipped; contradictions {_fmt(lint['contradictions'])} "
        f"(in {_fmt(lint['queries_with_contradictions'])} queries), missing gold {_fmt(lint['missing_gold'])} "
        f"(in {_fmt(lint['queries_with_missing_gold'])} queries)"
    )
    for c in lint["contradiction_examples"][:10]:
        console.print(
            f"  contradiction {c['query_id']}: {c['doc_id']} says {c['role']} = {c['value']} (gold: {c['answer']})",
            markup=False,
        )
    for m in lint["missing_gold_examples"][:10]:
        console.print(f"  missing gold {m['query_id']}: {m['doc_id']} gives {', '.join(m['facts'])}", markup=False)
    console.print(
        f"missing-gold candidates: {report['missing_gold']['count']} (in {report['missing_gold']['queries']} queries); "
        f"answer facts not in the pinned gold version: {report['answer_facts_missing']['count']}; "
        f"near-duplicate document pairs: {report['near_duplicates']['count']}"
    )
    gen = report.get("generation")
    if gen:
        console.print(
            "generator report: " + ", ".join(f"{k}={v}" for k, v in gen.items() if not isinstance(v, dict | list))
        )
    checks = Table(title="acceptance")
    for col in ("check", "value", "threshold", "ok"):
        checks.add_column(col)
    for c in report["acceptance"]:
        checks.add_row(c["check"], _fmt(c["value"]), c["threshold"], "[green]ok[/]" if c["ok"] else "[red]FAIL[/]")
    console.print(checks)


def _print_composition(comp: dict[str, Any]) -> None:
    table = Table(title="composition of the eval set")
    table.add_column("figure")
    table.add_column("value", justify="right")
    hops = ", ".join(f"{h} hops {n}" for h, n in comp["by_hops"].items())
    types = ", ".join(f"{t} {n}" for t, n in comp["gold_documents_by_file_type"].items())
    rows = [
        ("questions", comp["questions"]),
        ("multi-hop questions", f"{comp['multi_hop']} ({hops})"),
        ("permission questions (forbidden non-empty)", comp["permission"]),
        (
            "  forbidden document in unfiltered BM25's top 5",
            f"{_fmt(comp['permission_strong_match'])} (share {_fmt(comp['permission_strong_match_share'])})",
        ),
        (
            "versioned live documents",
            f"{comp['versioned_documents']} of {comp['live_documents']} (share {_fmt(comp['versioned_share'])})",
        ),
        ("version questions", comp["version_questions"]),
        ("gold documents per file type", types),
        ("duplicate live paths", comp["duplicate_live_paths"]),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)


@app.command("export-beir")
def export_beir_cmd(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    out: Path = typer.Option(
        ..., "--out", help="Directory for corpus.jsonl, queries.jsonl, qrels/test.tsv, qrels.trec."
    ),
) -> None:
    """Export a corpus and its eval set in the BEIR layout (plus TREC qrels)."""
    from drivebench.cli.common import counting_bar, resolve_with_progress
    from drivebench.corpora.beir import export_beir

    corpus_dir = resolve_with_progress(path)
    bar, step = counting_bar("export-beir: extracting documents")  # progress with counts and ETA
    with bar:
        counts = export_beir(corpus_dir, out, progress=step)
    console.print(f"exported {_counted(counts)} → {out}", highlight=False)


def _counted(counts: dict[str, int]) -> str:
    """``{'documents': 29, 'queries': 55}`` as ``29 documents, 55 queries``: what a person reads."""
    return ", ".join(f"{n:,} {what.replace('_', ' ')}" for what, n in counts.items())


@app.command("import-beir")
def import_beir_cmd(
    beir_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A BEIR dataset directory."),
    out: Path = typer.Option(..., "--out", help="Corpus directory to write."),
    name: str = typer.Option("beir", "--name"),
    split: str = typer.Option("test", "--split", help="Which qrels/<split>.tsv to use."),
) -> None:
    """Import a BEIR dataset as a drivebench corpus (everything readable by one reader: BEIR has no permissions)."""
    from drivebench.cli.common import status
    from drivebench.corpora.beir import import_beir

    with status(f"importing {beir_dir} …"):  # a spinner while it runs
        manifest = import_beir(beir_dir, out, name=name, split=split)
    console.print(f"imported {len(manifest.documents)} documents → {out}")


@app.command("export-drive")
def export_drive_cmd(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    out: Path = typer.Option(..., "--out", help="Directory for drive/ and the CSVs (users, departments, grants, ...)."),
    force: bool = typer.Option(
        False, "--force", help="Replace an earlier export at --out, once the new one is complete (never merged)."
    ),
) -> None:
    """Export the folder tree (current files, older versions beside them, trashed documents under trash/) and
    users/departments/grants CSVs, to load the synthetic enterprise into a test space of a real drive (evaluate
    with match = "path"). All or nothing: refused before writing when two files would share a path."""
    from drivebench.cli.common import resolve_with_progress, status
    from drivebench.corpora.export_drive import ExportRefused, export_drive

    try:
        corpus_dir = resolve_with_progress(path)
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        with status(f"exporting {corpus_dir.name} to {out} …"):  # a spinner while it runs
            counts = export_drive(corpus_dir, out, force=force)
    except ExportRefused as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except (OSError, ValueError) as exc:  # a missing file, a full disk, a manifest that does not parse
        err_console.print(
            f"error: export-drive failed, {out} was not written: {exc}", markup=False, highlight=False, soft_wrap=True
        )
        raise typer.Exit(1) from None
    console.print(f"exported {_counted(counts)} → {out}", highlight=False)
