"""``drivebench tokens``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

import typer
from rich.table import Table

from drivebench.cli.common import console, err_console, resolve_corpus_option
from drivebench.cli.options import CorpusOpt


class TokenRow(TypedDict):
    """One user's token as listed (and as written with --json)."""

    user_id: str
    roles: list[str]
    department: str | None
    token: str
    scopes: list[str]


def tokens(
    corpus: str = CorpusOpt,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", file_okay=False, help="The server's --data-dir: use the token secret kept there."
    ),
    secret_file: Path | None = typer.Option(
        None, "--secret-file", dir_okay=False, help="A file holding the token secret (what `serve` printed)."
    ),
) -> None:
    """Print the bearer tokens of a corpus: one per user, the evaluation token and the admin token.

    The secret, as `serve` chooses it: --secret-file, else DRIVEBENCH_TOKEN_SECRET, else the one in
    --data-dir; with none of them, the development secret (tokens of in-process simulators only)."""
    from drivebench.drive.state import Drive
    from drivebench.drive.tokens import SECRET_ENV, TokenRegistry, read_secret_file, resolve_secret
    from drivebench.formats.corpus import load_manifest

    try:
        if secret_file is not None:
            secret = read_secret_file(secret_file)
        else:
            if data_dir is not None and not os.environ.get(SECRET_ENV) and not (data_dir / "token-secret").exists():
                raise typer.BadParameter(f"{data_dir} holds no token secret (start `serve --data-dir` once)")
            source = resolve_secret(data_dir, generate=False)
            secret = source.secret
            if source.origin == "development":
                err_console.print(
                    f"[yellow]warning:[/] no --secret-file, {SECRET_ENV} or --data-dir: these are the development "
                    "secret's tokens, valid only for in-process simulators (`serve` uses a random secret)"
                )
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    drive = Drive.from_manifest(load_manifest(resolve_corpus_option(corpus)))  # a build shows progress
    rows: list[TokenRow] = []
    for info in TokenRegistry(drive, secret).all():
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
    longest = max((len(r["token"]) for r in rows), default=0)
    if console.width < longest + 60:  # too narrow for a table with whole tokens (a CI log): one block per user
        console.print(f"tokens for {drive.name}", highlight=False)
        for r in rows:
            about = ", ".join(x for x in (",".join(r["roles"]), r["department"] or "", ",".join(r["scopes"])) if x)
            console.print(f"{r['user_id']} ({about})", highlight=False, soft_wrap=True)
            console.print(f"  {r['token']}", highlight=False, soft_wrap=True)  # whole, on a line of its own
        return
    table = Table(title=f"tokens for {drive.name}")
    for col in ("user_id", "roles", "department", "scopes"):
        table.add_column(col, overflow="fold")
    table.add_column("token", no_wrap=True, min_width=longest)  # a token is copied: never cut
    for r in rows:
        table.add_row(r["user_id"], ",".join(r["roles"]), r["department"] or "", ",".join(r["scopes"]), r["token"])
    console.print(table)
