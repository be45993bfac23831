"""``drivebench audit``: security audits of a corpus (placeholder, filled below)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)
