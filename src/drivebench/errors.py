"""Errors for humans: what went wrong in one line, where (``file:line``) when there is a where, and a hint.

``DrivebenchError`` is the shared type for input a person can fix (a bad eval-set line, an unknown corpus, a port
in use, a missing token, an unreadable file, a bad config file). The CLI's one handler (``drivebench.cli.main``)
prints any exception through ``describe``, exits 2 for input errors, and shows a traceback only with ``--debug``.

``describe`` also renders exceptions that are not ``DrivebenchError`` but carry the same information, by
attribute: ``message``, ``hint``, ``path``/``file``/``filename``, ``line``/``lineno``; and the standard ones a
person causes (a file that cannot be read, text that is not UTF-8, JSON or TOML that does not parse, a value
pydantic refuses).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

FILE_LINE = re.compile(r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+): (?P<rest>.+)$")
INPUT_ERROR_EXIT = 2  # usage or input error (the evaluator's exit codes: 0 ok, 1 gate failed, 3 run failed)
INTERNAL_ERROR_EXIT = 70  # an unexpected exception: a bug (sysexits EX_SOFTWARE); --debug shows the traceback


class DrivebenchError(Exception):
    """An error in what a person gave drivebench, with where it is and what to do about it."""

    exit_code = INPUT_ERROR_EXIT

    def __init__(
        self, message: str, *, hint: str | None = None, path: str | Path | None = None, line: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.path = str(path) if path is not None else None
        self.line = line


@dataclass(frozen=True)
class Described:
    message: str
    hint: str | None
    where: str | None  # "file:line", "file" or None
    exit_code: int

    def lines(self) -> list[str]:
        first = f"error: {self.where}: {self.message}" if self.where else f"error: {self.message}"
        return [first] + ([f"hint: {self.hint}"] if self.hint else [])


def one_line(text: str) -> str:
    """Multi-line messages (pydantic's, for one) folded into a single line."""
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return re.sub(r"\s+", " ", "; ".join(parts))


def _where(path: object, line: object) -> str | None:
    if not path:
        return None
    return f"{path}:{line}" if isinstance(line, int) and line > 0 else str(path)


def _attr(exc: BaseException, *names: str) -> object:
    for name in names:
        value = getattr(exc, name, None)
        if value not in (None, ""):
            return value
    return None


def describe(exc: BaseException, debug_hint: bool = True) -> Described:
    """How to tell a person about ``exc``; exit code 2 for input errors, 70 for anything else (a bug)."""
    more = " (--debug shows the traceback)" if debug_hint else ""
    if isinstance(exc, DrivebenchError):
        return Described(one_line(exc.message), exc.hint, _where(exc.path, exc.line), exc.exit_code)
    if isinstance(exc, UnicodeDecodeError):
        return Described(
            f"not UTF-8 text: byte {exc.object[exc.start : exc.start + 1]!r} at offset {exc.start}",
            "save the file as UTF-8 (JSONL, TOML and CSV inputs are read as UTF-8)",
            None,
            INPUT_ERROR_EXIT,
        )
    if isinstance(exc, json.JSONDecodeError):
        return Described(f"not JSON: {exc.msg} (column {exc.colno})", None, _where(None, exc.lineno), INPUT_ERROR_EXIT)
    if isinstance(exc, tomllib.TOMLDecodeError):
        return Described(f"not valid TOML: {one_line(str(exc))}", None, None, INPUT_ERROR_EXIT)
    if isinstance(exc, OSError) and exc.filename is not None:
        reason = exc.strerror or type(exc).__name__
        return Described(
            f"cannot read {exc.filename}: {reason}",
            "check the path and that this user may read it",
            None,
            INPUT_ERROR_EXIT,
        )
    hint = _attr(exc, "hint")
    where = _where(_attr(exc, "path", "file", "filename"), _attr(exc, "line", "lineno"))
    message = one_line(str(_attr(exc, "message") or (exc.args[0] if len(exc.args) == 1 else exc) or type(exc).__name__))
    located = FILE_LINE.match(message)
    if where is None and located:  # "path:12: message", the evaluator's loaders' style
        where, message = f"{located['path']}:{located['line']}", located["rest"]
        if hint is None:
            hint = (
                f"fix line {located['line']}; docs/evaluation-files.md gives the eval-set and run formats"
                if located["path"].endswith(".jsonl")
                else f"fix line {located['line']} of that file"
            )
    if hint is None and isinstance(exc, KeyError) and "corpus" in message:
        hint = "built-in corpora: seed, acme-zh, acme-en; or pass a corpus directory (`drivebench corpus build`)"
    if hint is not None or where is not None:  # an error type that says where and what to do: an input error
        return Described(message, str(hint) if hint else None, where, INPUT_ERROR_EXIT)
    from pydantic import ValidationError

    if isinstance(exc, ValidationError | ValueError | KeyError):  # a value a person gave was refused
        return Described(message, "--help lists what each option takes" + more, None, INPUT_ERROR_EXIT)
    return Described(
        f"internal error: {type(exc).__name__}: {message}",
        "this is a bug in drivebench; rerun with --debug and report the traceback",
        None,
        INTERNAL_ERROR_EXIT,
    )
