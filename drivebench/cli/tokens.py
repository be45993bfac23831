"""``drivebench tokens``."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from drivebench.cli.common import console
from drivebench.cli.options import CorpusOpt


def tokens(
    corpus: str = CorpusOpt,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """Print the bearer tokens of a corpus: one per user, the evaluation token and the admin token."""
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.corpora.format import load_manifest
    from drivebench.simulator.drive.state import Drive
    from drivebench.simulator.tokens import TokenRegistry

    drive = Drive.from_manifest(load_manifest(resolve_corpus(corpus)))
    rows = []
    for info in TokenRegistry(drive).all():
        user = drive.users.get(info.subject)
        rows.append(
            {
                "user_id": info.subject,
                "roles": list(user.roles) if user else [],
                "department": user.department if user else None,
                "token": info.token,
                "scopes": list(info.scopes),
            }
        )
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    table = Table(title=f"tokens for {drive.name}")
    for col in ("user_id", "roles", "department", "scopes", "token"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["user_id"], ",".join(r["roles"]), r["department"] or "", ",".join(r["scopes"]), r["token"])
    console.print(table)
