"""The Click that Typer runs on: Typer >= 0.25 vendors it as ``typer._click`` (its classes are not the ``click``
package's); older Typers use the ``click`` package."""

from __future__ import annotations

try:
    from typer import _click as click
except ImportError:  # pragma: no cover - typer < 0.25
    import click  # type: ignore[no-redef]  # older Typers: the click package under the same name

ClickException = click.exceptions.ClickException
UsageError = click.exceptions.UsageError
MissingParameter = click.exceptions.MissingParameter
Context = click.Context
Command = click.Command
Parameter = click.core.Parameter

__all__ = ["ClickException", "Command", "Context", "MissingParameter", "Parameter", "UsageError", "click"]
