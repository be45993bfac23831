"""The manual: docs/ builds as a site with ``mkdocs build --strict`` (no broken link, anchor or nav entry), README.md
stays a short guide, no page carries a hand-typed table of measured timings (those live in the generated
benchmark reports), and every ``drivebench`` command line in a shell block of README.md or docs/ names commands
and options the CLI has."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from drivebench.cli.main import app
from tests.support.docs import DOCS, REPO, code_blocks, page_text, section

# Pages written by hand that the site shows (the benchmark reports are generated: they are allowed figures).
HAND_WRITTEN = [REPO / "README.md", REPO / "src/drivebench/corpora/README.md", *sorted(DOCS.rglob("*.md"))]
TIMING = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|s|µs|us|x|×|min|req/s|requests/s|queries/s|chunks/s|pairs/s)(?![\w/])"
)


def test_the_site_builds_with_strict_checks(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    site = tmp_path / "site"
    for page in ("index.html", "quick-start/index.html", "corpus-format/index.html", "reports/bench_growth/index.html"):
        assert (site / page).is_file(), page


def test_readme_is_a_short_guide() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, len(lines)
    for heading in ("Quick start", "A five-minute tour", "Where to go next", "Map of the folders"):
        assert section("README.md", heading)


UNIT_HEADER = re.compile(r"(?<![\w/])(?:ms|s|µs|us|seconds|req/s|requests/s|queries/s|chunks/s|pairs/s)(?![\w/])")
NUMBER = re.compile(r"^[~≈]?[\d,]+(?:\.\d+)?(?:\s*[/+→-]\s*[\d,]+(?:\.\d+)?)*(?:\s*\(.*\))?$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def timing_cells(text: str) -> list[str]:
    """Cells of Markdown tables that hold measured time or speed: a number with a unit of time or speed, or a
    bare number in a column whose header names such a unit (code spans left out)."""
    found: list[str] = []
    fenced, header, timed_columns = False, None, set()
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not re.match(r"^\s*\|.*\|\s*$", line):
            header = None
            continue
        if re.match(r"^\s*\|[\s:|-]+\|\s*$", line):  # the separator: the row before it was the header
            timed_columns = {i for i, c in enumerate(_cells(header or "")) if UNIT_HEADER.search(c)}
            continue
        if header is None:
            header, timed_columns = line, set()
            continue
        for i, cell in enumerate(_cells(line)):
            plain = re.sub(r"`[^`]*`", "", cell)
            if TIMING.search(plain) or (i in timed_columns and NUMBER.match(plain.strip("* "))):
                found.append(cell)
    return found


def test_timing_cells_are_recognised() -> None:
    rows = "| corpus | p50 ms |\n|---|---:|\n| acme | 44.97 / 51.79 ms |\n| x | 1.60x |\n| y | 327.5 req/s |\n"
    assert timing_cells(rows) == ["44.97 / 51.79 ms", "1.60x", "327.5 req/s"]
    assert timing_cells("| page | 1280x800 and `--timeout 30 s` |\n|---|---|\n| a | 32 MiB |\n") == []
    assert timing_cells("```\n| 12 ms |\n```\n") == []
    assert timing_cells("| chunks | flat p50 ms | recall |\n|---:|---:|---:|\n| 10,000 | 1.16 | 0.993 |\n") == ["1.16"]


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_has_a_hand_typed_table_of_timings(path: Path) -> None:
    cells = timing_cells(path.read_text(encoding="utf-8"))
    assert not cells, f"{path}: measured figures belong in a benchmark report (benchmarks/report.py): {cells[:5]}"


# ------------------------------------------------------------------------------------- command lines vs the CLI

ROOT = typer.main.get_command(app)
COMMAND_START = re.compile(
    r"(?:^|\$\(|[|;&]\s*|-m\s+)\s*(?:[A-Z_][A-Z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S+)\s+)*drivebench(?=\s|$)"
)


def shell_lines(block: str) -> list[str]:
    """Logical lines of a shell block: comments cut, backslash continuations and indented lines joined."""
    out: list[str] = []
    for raw in block.replace("\\\n", " ").splitlines():
        line = raw.split("  #")[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if raw[:1].isspace() and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


def invocations(line: str) -> list[str]:
    """The text of each ``drivebench`` command on a shell line, up to the end of its command (a pipe, ``;``,
    ``&`` or the ``)`` of a ``$(...)`` outside brackets and quotes)."""
    found = []
    for match in COMMAND_START.finditer(line):
        rest, depth, quote, end = line[match.end() :], 0, "", None
        for i, ch in enumerate(rest):
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}" and depth:
                depth -= 1
            elif ch in "|;&)" and not depth:
                end = i
                break
        found.append(rest[:end].strip())
    return found


def check_invocation(text: str) -> list[str]:
    """What in ``drivebench TEXT`` the CLI does not have: an unknown subcommand or option."""
    words = text.split()
    command, path = ROOT, []
    while words and words[0] in getattr(command, "commands", {}):  # a group (typer's own click: no isinstance)
        path.append(words[0])
        command = command.commands[words.pop(0)]
    if hasattr(command, "commands") and words and re.fullmatch(r"[a-z][a-z-]*", words[0]):
        return [f"unknown command {' '.join([*path, words[0]])!r}"]
    known = {"--help"}
    for cmd in (ROOT, command):
        for param in cmd.params:
            known.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    options = re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)
    return [f"{' '.join(path) or 'drivebench'}: unknown option {o}" for o in options if o not in known]


def documented_command_lines() -> list[tuple[str, str]]:
    pages = ["README.md", *sorted(p.name for p in DOCS.glob("*.md"))]
    found = []
    for page in pages:
        title = next(line[2:] for line in page_text(page).splitlines() if line.startswith("# "))
        for block in code_blocks(page, title, "bash"):
            for line in shell_lines(block):
                found += [(page, text) for text in invocations(line)]
    return found


def test_invocations_are_found_where_shell_starts_a_command() -> None:
    line = (
        'export T="$(drivebench tokens --json | python3 -c "x")"; drivebench serve --port 1 & docker exec drivebench x'
    )
    assert invocations(line) == ["tokens --json", "serve --port 1"]
    assert invocations("python -m drivebench --help") == ["--help"]
    assert check_invocation("eval run (--target URL | --target-profile FILE) [--k 1,3]") == []
    assert check_invocation("eval rum --k 1") == ["unknown command 'eval rum'"]
    assert check_invocation("serve --no-access-log --bogus") == ["serve: unknown option --bogus"]


def test_every_documented_command_line_matches_the_cli() -> None:
    lines = documented_command_lines()
    pages = {page for page, _ in lines}
    assert {"README.md", "commands.md", "ci.md", "security-review.md", "corpora.md"} <= pages, pages
    assert len(lines) >= 40, len(lines)
    problems = [f"{page}: drivebench {text}: {p}" for page, text in lines for p in check_invocation(text)]
    assert not problems, "\n".join(problems)


def test_the_recall_api_page_shows_the_vendor_call_the_curl_test_sends() -> None:
    from tests.support.vendor_server import VENDOR_BODY

    (block,) = code_blocks("recall-api.md", "The vendor's call, verbatim", "bash")
    assert f"-d '{VENDOR_BODY}'" in block and "Content-Type" not in block


# ------------------------------------------------------------------------------------- the hook and the helper


def test_links_to_repository_files_outside_docs_point_into_the_site() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from mkdocs_hooks import rewrite_links
    finally:
        sys.path.remove(str(REPO / "scripts"))
    page = "See [growth](../benchmarks/results/bench_growth.md#by-scale), [it](../README.md) and [x](ci.md).\n"
    assert rewrite_links(page, "benchmarks.md") == (
        "See [growth](reports/bench_growth.md#by-scale), [it](quick-start.md) and [x](ci.md).\n"
    )
    readme = "[CI](docs/ci.md), [format](src/drivebench/corpora/README.md), [m](Makefile), [w](https://x.org/a.md)\n"
    assert rewrite_links(readme, "quick-start.md") == (
        "[CI](ci.md), [format](corpus-format.md), [m](Makefile), [w](https://x.org/a.md)\n"
    )
    assert rewrite_links("```\n[a](../README.md)\n```\n", "index.md") == "```\n[a](../README.md)\n```\n"


def test_sections_and_code_blocks_skip_comment_lines_inside_fences(tmp_path: Path) -> None:
    from tests.support import docs

    page = "# T\n\n## A\n\n```toml\n# not a heading\nx = 1\n```\n\n### A.1\n\n```bash\necho\n```\n\n## B\n\n```bash\nno\n```\n"
    (tmp_path / "t.md").write_text(page, encoding="utf-8")
    old = docs.DOCS
    docs.DOCS = tmp_path
    try:
        assert docs.code_blocks("t.md", "A") == ["# not a heading\nx = 1\n", "echo\n"]
        assert docs.code_blocks("t.md", "A", "bash") == ["echo\n"]
        assert docs.code_blocks("t.md", "T", "bash") == ["echo\n", "no\n"]
        assert "no" not in docs.section("t.md", "A.1")
        with pytest.raises(LookupError):
            docs.section("t.md", "C")
    finally:
        docs.DOCS = old
