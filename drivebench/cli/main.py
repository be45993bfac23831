"""The ``drivebench`` command."""

from __future__ import annotations

import typer

from drivebench.cli import audit as audit_cli  # issue #17
from drivebench.cli import corpus, demo, evaluate, reports, serve, tokens
from drivebench.cli import probe as probe_cli

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
app.command("probe")(probe_cli.probe)  # issue #17: leak probes
app.add_typer(audit_cli.app, name="audit", help="Security audits of a corpus (issue #17).")


def main() -> None:  # pragma: no cover - console entry
    app()
