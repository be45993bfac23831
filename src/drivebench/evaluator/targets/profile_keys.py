"""The table of every target-profile key in docs/evaluating.md, generated from the profile's own pydantic models
(``targets.profile``: each key's default and description), so that the page cannot drift from the code: a test
checks the page holds exactly what ``key_table()`` renders.

    python -m drivebench.evaluator.targets.profile_keys docs/evaluating.md   # rewrite the table in the page
    python -m drivebench.evaluator.targets.profile_keys                      # print it
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from drivebench.evaluator.targets.profile import OkWhen, TargetProfile

COMMAND = "python -m drivebench.evaluator.targets.profile_keys docs/evaluating.md"
BEGIN = f"<!-- the profile keys: generated from evaluator/targets/profile.py by `{COMMAND}`; do not edit -->"
END = "<!-- end of the generated profile keys -->"
HEADER = ("Key", "Default", "What it is")
NESTED_TABLES = {"body": "[request.body]"}  # fields written as TOML tables of their own


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, dict) and not value:
        return "`{}`"
    if isinstance(value, dict):
        return "see the text"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def key_rows() -> list[tuple[str, str, str]]:
    """``(key, default, description)`` for every key of every table, in the models' order; an inline table
    (``ok_when``) is followed by its own keys."""
    rows: list[tuple[str, str, str]] = []
    for table, section in TargetProfile.model_fields.items():
        model = section.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue  # not a TOML table (``source``: the file the profile was read from)
        for name, field in model.model_fields.items():
            key = NESTED_TABLES.get(name, f"[{table}] {name}")
            rows.append((f"`{key}`", _default(field), field.description or ""))
            if name == "ok_when":
                for sub, sub_field in OkWhen.model_fields.items():
                    rows.append((f"`[{table}] {name}.{sub}`", _default(sub_field), sub_field.description or ""))
    missing = [key for key, _, text in rows if not text]
    if missing:  # every key is documented: a new field without a description fails here (and in its test)
        raise ValueError(f"profile keys without a description: {', '.join(missing)}")
    return rows


def key_table() -> str:
    """The Markdown table of ``key_rows()``, between the markers the page keeps it in."""
    lines = [BEGIN, "", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in key_rows()]
    return "\n".join([*lines, "", END])


def rewrite(page: Path) -> bool:
    """Replace the generated table in ``page`` (between the markers); True when the page changed."""
    text = page.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{page}: no generated profile-key table (the lines {BEGIN!r} ... {END!r})")
    new = text[:start] + key_table() + text[end + len(END) :]
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    if not argv:
        print(key_table())
        return 0
    try:
        changed = rewrite(Path(argv[0]))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{argv[0]}: {'table rewritten' if changed else 'already current'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
