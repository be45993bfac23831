"""MkDocs hook (``hooks:`` in mkdocs.yml): pages that live outside ``docs/`` join the site, and a link between
repository files works both where the file lies in the repository and in the built site.

Outside ``docs/`` are the README (the quick start), the corpus format (``src/drivebench/corpora/README.md``,
beside the code it describes) and the benchmark reports (``benchmarks/results/*.md``, written by
``benchmarks/report.py``). A page links to any of them by its repository path relative to the page, e.g.
``../benchmarks/results/bench_growth.md`` from ``docs/benchmarks.md``; before MkDocs renders a page, such links
are rewritten to the page's place in the site. Links that resolve to nothing are left alone, so that
``mkdocs build --strict`` reports them.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parents[1]
# repository path -> path in the site, for single files outside docs/
OUTSIDE = {
    "README.md": "quick-start.md",
    "src/drivebench/corpora/README.md": "corpus-format.md",
}
REPORTS_DIR, REPORTS_SITE = "benchmarks/results", "reports"  # every *.md there; reached from the benchmarks page
_LINK = re.compile(r"(\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^\s*(```|~~~)")


def site_path(repo_path: str) -> str | None:
    """Where the repository file ``repo_path`` is in the site, or None when it is not part of the site."""
    if repo_path.startswith("docs/"):
        return repo_path.removeprefix("docs/")
    if repo_path in OUTSIDE:
        return OUTSIDE[repo_path]
    folder, name = posixpath.split(repo_path)
    if folder == REPORTS_DIR and name.endswith(".md"):
        return f"{REPORTS_SITE}/{name}"
    return None


def repo_path(site: str) -> str:
    """The repository path of the page at ``site`` (the inverse of ``site_path``)."""
    for repo, where in OUTSIDE.items():
        if where == site:
            return repo
    if site.startswith(f"{REPORTS_SITE}/"):
        return f"{REPORTS_DIR}/{site.removeprefix(REPORTS_SITE + '/')}"
    return f"docs/{site}"


def on_files(files: Files, config: Any) -> Files:
    for repo, where in OUTSIDE.items():
        files.append(File.generated(config, where, abs_src_path=str(ROOT / repo)))
    for report in sorted((ROOT / REPORTS_DIR).glob("*.md")):
        where = f"{REPORTS_SITE}/{report.name}"
        files.append(File.generated(config, where, abs_src_path=str(report), inclusion=InclusionLevel.NOT_IN_NAV))
    return files


def rewrite_links(markdown: str, page_site_path: str) -> str:
    """Links of the page at ``page_site_path`` given as repository paths, pointed at their place in the site."""
    here = posixpath.dirname(repo_path(page_site_path))
    site_here = posixpath.dirname(page_site_path)

    def fix(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("/", "#")):
            return match.group(0)  # a URL, an absolute path or an anchor on this page
        path, hash_, anchor = target.partition("#")
        where = site_path(posixpath.normpath(posixpath.join(here, path)))
        if where is None:
            return match.group(0)
        new = posixpath.relpath(where, site_here or ".")
        return f"{match.group(1)}{new}{hash_}{anchor}{match.group(3)}"

    out, fenced = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        out.append(line if fenced or _FENCE.match(line) else _LINK.sub(fix, line))
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return rewrite_links(markdown, page.file.src_uri)
