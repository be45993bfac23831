"""``drivebench audit``: security audits of a corpus.

``audit oversharing CORPUS``: exit 0 nothing flagged; 1 at least one document flagged; 2 usage error.
``audit plant CORPUS --out DIR``: a copy of the corpus with the documented planted overshares.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from drivebench.cli.common import console, err_console, resolve_corpus_option, status
from drivebench.cli.eval_common import usage_error

app = typer.Typer(no_args_is_help=True)


@app.command("oversharing")
def oversharing(
    corpus: str = typer.Argument(..., help="Corpus (built-in name or directory)."),
    level: str = typer.Option(
        "confidential", "--level", help="Audit documents at or above: public, internal, confidential, secret."
    ),
    threshold: int = typer.Option(
        15,
        "--threshold",
        min=0,
        help="Flag when more users outside the owning department preview through broad subjects.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    out: Path | None = typer.Option(None, "--out", help="Write oversharing.json and oversharing.html here."),
    limit: int = typer.Option(30, "--limit", min=1, help="Rows in the terminal table."),
) -> None:
    """Who may preview each sensitive document and through which grant chain; flagged documents first.

    Exit codes: 0 nothing flagged; 1 a document was flagged; 2 usage error.
    """
    from drivebench.evaluator.audit.oversharing import audit_oversharing
    from drivebench.evaluator.audit.report import chain_text, flag_text, write_html
    from drivebench.formats.corpus import SECRET_LEVELS, load_manifest

    if level not in SECRET_LEVELS:
        usage_error(f"--level {level!r}: use one of {', '.join(SECRET_LEVELS)}")
    manifest = load_manifest(resolve_corpus_option(corpus))
    with status(f"auditing {len(manifest.documents)} documents: who may preview what …"):  # a spinner while it runs
        result = audit_oversharing(manifest, level, threshold)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "oversharing.json").write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        write_html(result, out / "oversharing.html")
        err_console.print(f"wrote {out / 'oversharing.json'} and {out / 'oversharing.html'}")
    if json_out:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        table = Table(title=f"oversharing: {result['corpus']} (level >= {level}, threshold {threshold})")
        for col in ("risk", "doc", "path", "level", "previewers", "outside", "grant chains", "flags"):
            table.add_column(col, overflow="fold")
        for d in result["documents"][:limit]:
            table.add_row(
                str(d["risk"]),
                d["doc_id"],
                d["path"],
                d["secret_level"],
                str(d["previewers"]),
                str(d["previewers_outside_department"]),
                chain_text(d["grant_chains"], 3),
                f"[red]{flag_text(d['flags'])}[/]" if d["flags"] else "",
            )
        from drivebench.evaluator.report.terminal import fit_table

        console.print(fit_table(table, console))  # a document per block when the columns do not fit the terminal
    c = result["counts"]
    by_flag = ", ".join(f"{flag} {n}" for flag, n in c["by_flag"].items())
    err_console.print(f"{c['documents']} documents audited, {c['flagged']} flagged ({by_flag})")
    raise typer.Exit(1 if c["flagged"] else 0)


@app.command("plant")
def plant(
    corpus: str = typer.Argument(..., help="Corpus (built-in name or directory)."),
    out: Path = typer.Option(..., "--out", help="Directory for the copy with the planted overshares."),
) -> None:
    """Copy a corpus with the documented planted overshares (evaluator/audit/planted_overshares.json)."""
    from drivebench.corpora.plants import write_planted_corpus

    try:
        applied = write_planted_corpus(resolve_corpus_option(corpus), out)
    except (ValueError, StopIteration) as exc:
        usage_error(f"cannot plant into {corpus}: {exc}")
    for a in applied:
        err_console.print(f"planted {a['plant']}: {a['doc_id']} ({a['expect']})")
    err_console.print(f"wrote {out} (planted_overshares.json lists what the audit must find)")
