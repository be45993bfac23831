"""The config file: defaults for any ``drivebench`` command's options, in ``drivebench.toml`` or in the
``[tool.drivebench]`` table of ``pyproject.toml``.

Precedence: command line > environment > file > built-in defaults. The file is loaded by the CLI's root callback
into Click's ``ctx.default_map``, which Click consults after the command line and the environment variables
(``DRIVEBENCH_<COMMAND>_<OPTION>``, e.g. ``DRIVEBENCH_SERVE_PORT``, plus the named ones like
``DRIVEBENCH_TOKEN``) and before the built-in default.

Layout: a table per command (``[serve]``, ``[demo]``, ``[eval.run]``, ``[corpus.build]``, ...) whose keys are the
command's option names (``data-dir`` or ``data_dir``). A key outside any command table (``corpus = "seed"`` at
the top, or in ``[eval]``) applies to every command below it that has that option. Relative paths are relative
to the file. An unknown command or option is an error naming the file and line.

Which file: ``--config PATH`` (or ``DRIVEBENCH_CONFIG``; ``none`` turns the file off), else the nearest
``drivebench.toml``, or ``pyproject.toml`` holding ``[tool.drivebench]``, in the current directory or a parent.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivebench.cli.clickcompat import ClickException, Command, Context, Parameter
from drivebench.errors import DrivebenchError

CONFIG_ENV = "DRIVEBENCH_CONFIG"
CONFIG_NAME = "drivebench.toml"


@dataclass
class ConfigFile:
    path: Path | None
    table: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    prefix: tuple[str, ...] = ()  # ("tool", "drivebench") inside pyproject.toml

    def line_of(self, section: tuple[str, ...], key: str) -> int | None:
        """The line of ``key`` in table ``section`` (best effort: TOML parsers give no positions)."""
        header = ".".join((*self.prefix, *section))
        in_section = not header
        key_re = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*=""")
        head_re = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*$")
        table = f"{header}.{key}" if header else key  # the key may itself be a table: [serv], [eval.rn]
        for number, raw in enumerate(self.text.splitlines(), 1):
            heading = head_re.match(raw)
            if heading:
                name = heading.group(1).replace(" ", "")
                if name == table or name.startswith(f"{table}."):
                    return number
                in_section = name == header
                continue
            if in_section and key_re.match(raw):
                return number
        return None


def find_config(start: Path | None = None) -> Path | None:
    """The nearest drivebench.toml, or pyproject.toml with [tool.drivebench], from ``start`` upwards."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _pyproject_has_table(pyproject):
            return pyproject
    return None


def _pyproject_has_table(path: Path) -> bool:
    try:
        return "drivebench" in tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def load_config(explicit: str | None) -> ConfigFile:
    """Read the config file in force (see the module docstring); a bad file is a DrivebenchError."""
    if explicit is not None and explicit.strip().lower() in ("none", "off", ""):
        return ConfigFile(None)
    path = Path(explicit).expanduser() if explicit else find_config()
    if path is None:
        return ConfigFile(None)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DrivebenchError(
            "config file not found",
            hint=f"check --config / {CONFIG_ENV}, or use --config none to run without one",
            path=path,
        ) from None
    except OSError as exc:
        raise DrivebenchError(
            f"cannot read the config file: {exc.strerror or exc}",
            hint="check the path and that this user may read it, or use --config none",
            path=path,
        ) from None
    except UnicodeDecodeError:
        raise DrivebenchError("the config file is not UTF-8 text", hint="save it as UTF-8 TOML", path=path) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _line_from_message(str(exc))
        raise DrivebenchError(
            f"not valid TOML: {str(exc).split(' (at line')[0]}",
            hint="see docs/configuration.md for the format",
            path=path,
            line=line,
        ) from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("drivebench")
        if table is None:
            raise DrivebenchError("pyproject.toml has no [tool.drivebench] table", path=path)
        return ConfigFile(path, table, text, ("tool", "drivebench"))
    return ConfigFile(path, data, text)


def _line_from_message(message: str) -> int | None:
    found = re.search(r"at line (\d+)", message)
    return int(found.group(1)) if found else None


def _params(command: Command) -> dict[str, Parameter]:
    """A command's parameters by name, reachable as ``data_dir`` and ``data-dir``."""
    out: dict[str, Parameter] = {}
    for param in command.params:
        if param.name and not getattr(param, "hidden", False) and param.name not in ("help",):
            out[param.name] = param
            out[param.name.replace("_", "-")] = param
    return out


def _subcommands(command: Command) -> dict[str, Command] | None:
    """A group's commands by name, None for a leaf command (the group class depends on Typer's version: it is
    known by its ``commands``)."""
    commands = getattr(command, "commands", None)
    return commands if isinstance(commands, dict) else None


def _leaves(command: Command) -> list[Command]:
    subcommands = _subcommands(command)
    if subcommands is not None:
        return [leaf for sub in subcommands.values() for leaf in _leaves(sub)]
    return [command]


def build_default_map(ctx: Context, config: ConfigFile) -> dict[str, Any]:
    """``config`` as Click's nested ``default_map`` for the group ``ctx.command``; values are checked (type,
    choice) here so a bad one names the file and line."""
    if config.path is None:
        return {}
    return _map_group(ctx, ctx.command, config.table, (), {}, config)


def _map_group(
    ctx: Context,
    group: Command,
    table: dict[str, Any],
    section: tuple[str, ...],
    inherited: dict[str, tuple[Any, tuple[str, ...]]],
    config: ConfigFile,
) -> dict[str, Any]:
    commands = _subcommands(group)
    assert commands is not None
    shared = dict(inherited)
    subtables: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if key in commands and isinstance(value, dict):
            subtables[key] = value
        elif any(key in _params(leaf) for leaf in _leaves(group)):
            shared[key] = (value, section)
        else:
            where = " ".join(("drivebench", *section)).strip()
            known = sorted(commands)
            raise DrivebenchError(
                f"unknown key {key!r} in [{'.'.join((*config.prefix, *section)) or 'top level'}]",
                hint=f"`{where}` has the commands {', '.join(known)}; a key must be one of their option names",
                path=config.path,
                line=config.line_of(section, key),
            )
    out: dict[str, Any] = {}
    for name, command in commands.items():
        table_here = subtables.get(name, {})
        if _subcommands(command) is not None:
            sub = _map_group(ctx, command, table_here, (*section, name), shared, config)
        else:
            sub = _map_command(ctx, command, table_here, (*section, name), shared, config)
        if sub:
            out[name] = sub
    return out


def _map_command(
    ctx: Context,
    command: Command,
    table: dict[str, Any],
    section: tuple[str, ...],
    shared: dict[str, tuple[Any, tuple[str, ...]]],
    config: ConfigFile,
) -> dict[str, Any]:
    params = _params(command)
    entries: dict[str, tuple[Any, tuple[str, ...]]] = {k: v for k, v in shared.items() if k in params}
    for key, value in table.items():
        if key not in params:
            options = sorted({p.name for p in params.values() if p.name})
            raise DrivebenchError(
                f"unknown option {key!r} for `drivebench {' '.join(section)}`",
                hint=f"its options: {', '.join(options)}",
                path=config.path,
                line=config.line_of(section, key),
            )
        entries[key] = (value, section)
    out: dict[str, Any] = {}
    for key, (value, where) in entries.items():
        param = params[key]
        value = _prepare(param, value, config)
        try:
            param.process_value(ctx, value)  # the same conversion and checks as on the command line
        except ClickException as exc:
            raise DrivebenchError(
                f"{key} = {value!r}: {exc.message}",
                hint=f"`drivebench {' '.join(section)} --help` says what --{key.replace('_', '-')} takes",
                path=config.path,
                line=config.line_of(where, key),
            ) from None
        out[param.name or key] = value
    return out


def _is_path(param: Parameter) -> bool:
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)  # typer >= 0.25
    if annotation is not None:
        return annotation is Path or annotation == list[Path]
    return type(getattr(param, "type", None)).__name__ == "Path"  # pragma: no cover - Click's own types


def _prepare(param: Parameter, value: Any, config: ConfigFile) -> Any:
    """Lists for repeatable options; paths relative to the config file's folder."""
    if param.multiple and not isinstance(value, list):
        value = [value]
    if _is_path(param) and config.path is not None:
        base = config.path.parent

        def resolve(v: Any) -> Any:
            return str(base / os.path.expanduser(v)) if isinstance(v, str) and not Path(v).is_absolute() else v

        value = [resolve(v) for v in value] if isinstance(value, list) else resolve(value)
    return value
