"""A terminal for the progress-bar tests: the environment of a 120x40 xterm with colour, Rich's bar glyph, and
patterns for ANSI escapes."""

from __future__ import annotations

import re

from tests.support.clirun import clean_env

BAR = "━"  # Rich's bar glyph
ANSI = re.compile(r"\x1b\[")
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def terminal_env() -> dict[str, str]:
    env = clean_env(TERM="xterm-256color", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    return env
