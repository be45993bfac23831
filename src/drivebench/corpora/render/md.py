"""Markdown writer: ``# title``, ``## heading`` per section, paragraphs, a pipe table, notes as a quote.

A paragraph line starting with ``#``, ``>`` or ``|`` gets a backslash so it stays a paragraph."""

from __future__ import annotations

import re

from drivebench.corpora.render.spec import DocSpec


def _cell(value: str) -> str:
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(rows: list[list[str]]) -> list[str]:
    width = max(len(r) for r in rows)
    padded = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(_cell(c) for c in padded[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in padded[1:]]
    return lines


_BLOCK_START = re.compile(r"^(\s{0,3})([#>|])")


def _para(text: str) -> str:
    """Escape a leading ``#``, ``>`` or ``|`` on each line so a paragraph is not read as markup."""
    return "\n".join(_BLOCK_START.sub(r"\1\\\2", line) for line in text.split("\n"))


def render_md(spec: DocSpec) -> bytes:
    lines: list[str] = [f"# {spec.title}", ""]
    if spec.author:
        lines += [f"*{spec.author}*", ""]
    if spec.title_block:
        lines += [f"- {k}: {v}" for k, v in spec.title_block.items()] + [""]
    for section in spec.sections:
        lines += [f"## {section.heading}", ""]
        for para in section.paragraphs:
            lines += [_para(para), ""]
        if section.table:
            lines += [*_table(section.table), ""]
        if section.notes:
            lines += [f"> {line}" for line in section.notes.splitlines()] + [""]
    return ("\n".join(lines).rstrip("\n") + "\n").encode("utf-8")
