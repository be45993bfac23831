"""The ``drivebench`` command."""

from __future__ import annotations

import typer

from drivebench.cli import corpus, demo, evaluate, reports, serve, tokens

app = typer.Typer(
    name="drivebench",
    help="A permission-aware enterprise-drive simulator and a RAG recall evaluator.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
app.command("serve")(serve.serve)
app.command("tokens")(tokens.tokens)
app.command("demo")(demo.demo)
app.add_typer(evaluate.app, name="eval", help="Run and score evaluation sets.")
reports.register(evaluate.app)  # eval report/trend/compare/history/export-trec (issue #6)
app.add_typer(corpus.app, name="corpus", help="Build, validate and describe corpora.")


def main() -> None:  # pragma: no cover - console entry
    app()
