"""``drivebench corpus build|validate|stats|export-beir|import-beir|export-drive``."""

from __future__ import annotations

import json
from pathlib import Path

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
    name: str = typer.Argument(..., help="Built-in corpus: seed, acme-zh or acme-en."),
    seed: int | None = typer.Option(None, "--seed", help="Generator seed (the same seed gives the same corpus)."),
    scale: str | None = typer.Option(None, "--scale", help="small, default, large or a document count."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default: the corpus cache)."),
) -> None:
    """Build a built-in corpus into a directory."""
    import time

    from drivebench.corpora.builtin import BUILTINS, build_corpus, resolve_corpus

    if name not in BUILTINS:
        raise typer.BadParameter(f"unknown corpus {name!r}; built-in: {', '.join(BUILTINS)}")
    started = time.perf_counter()
    with err_console.status(f"building {name} …"):
        path = (
            build_corpus(name, out, seed=seed, scale=_scale(scale))
            if out
            else resolve_corpus(name, seed=seed, scale=_scale(scale))
        )
    console.print(f"built {name} in {time.perf_counter() - started:.1f} s → {path}")


@app.command("validate")
def validate(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    min_gold_per_type: int = typer.Option(0, help="Require every file type to be the gold of this many queries."),
) -> None:
    """Check schema and references: gold exists and is visible to its asker, hops, forbidden, coverage."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.corpora.validate import validate_corpus

    try:
        corpus_dir = resolve_corpus(path)
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
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
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.corpora.stats import corpus_stats

    try:
        data = corpus_stats(resolve_corpus(path))
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return
    table = Table(title=f"corpus {data['name']}")
    table.add_column("statistic")
    table.add_column("value")
    for key, value in data.items():
        table.add_row(key, json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value))
    console.print(table)


@app.command("export-beir")
def export_beir_cmd(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    out: Path = typer.Option(
        ..., "--out", help="Directory for corpus.jsonl, queries.jsonl, qrels/test.tsv, qrels.trec."
    ),
) -> None:
    """Export a corpus and its eval set in the BEIR layout (plus TREC qrels)."""
    from drivebench.corpora.beir import export_beir
    from drivebench.corpora.builtin import resolve_corpus

    counts = export_beir(resolve_corpus(path), out)
    console.print(f"exported {counts} → {out}")


@app.command("import-beir")
def import_beir_cmd(
    beir_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A BEIR dataset directory."),
    out: Path = typer.Option(..., "--out", help="Corpus directory to write."),
    name: str = typer.Option("beir", "--name"),
    split: str = typer.Option("test", "--split", help="Which qrels/<split>.tsv to use."),
) -> None:
    """Import a BEIR dataset as a drivebench corpus (everything readable by one reader: BEIR has no permissions)."""
    from drivebench.corpora.beir import import_beir

    manifest = import_beir(beir_dir, out, name=name, split=split)
    console.print(f"imported {len(manifest.documents)} documents → {out}")


@app.command("export-drive")
def export_drive_cmd(
    path: str = typer.Argument(..., help="A corpus directory or built-in name."),
    out: Path = typer.Option(..., "--out", help="Directory for drive/ and the CSVs (users, departments, grants, ...)."),
) -> None:
    """Export the folder tree (current files, older versions beside them) and users/departments/grants
    CSVs, to load the synthetic enterprise into a test space of a real drive (evaluate with match = "path")."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.corpora.export_drive import export_drive

    try:
        counts = export_drive(resolve_corpus(path), out)
    except (KeyError, OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    console.print(f"exported {counts} → {out}")
