"""Markdown, HTML and terminal reports: every metric and stratum shows up, charts are right, the
HTML is self-contained and escapes what it prints."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report import charts
from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.outputs import load_metrics, write_reports
from drivebench.evaluator.report.sample import sample_inputs, sample_result
from drivebench.evaluator.report.terminal import print_details, strata_table
from drivebench.evaluator.scoring import score
from drivebench.evaluator.strata import STRATA


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return sample_result(seed=1)


@pytest.fixture(scope="module")
def html(result: dict[str, Any]) -> str:
    return render_html(result)


@pytest.fixture(scope="module")
def md(result: dict[str, Any]) -> str:
    return render_markdown(result)


class _Dom(HTMLParser):
    """Ids, svg elements, bar rects and tag balance of a page."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "rect", "line", "path"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.svgs: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self._svg: str | None = None
        self.bars: dict[str, list[dict[str, Any]]] = {}
        self._bar: dict[str, Any] | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "svg":
            self._svg = str(a.get("id"))
            self.svgs.append(self._svg)
        if tag == "rect" and a.get("class") == "bar" and self._svg:
            self._bar = {"height": float(a["height"] or 0), "width": float(a["width"] or 0), "title": ""}
            self.bars.setdefault(self._svg, []).append(self._bar)
        if tag == "title":
            self._in_title = True
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag == "rect":
            self._bar = None
        if tag == "svg":
            self._svg = None
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}>, open: {self.stack[-3:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self._in_title and self._bar is not None:
            self._bar["title"] += data


def _dom(page: str) -> _Dom:
    d = _Dom()
    d.feed(page)
    d.close()
    return d


def expected_chart_ids(result: dict[str, Any]) -> set[str]:
    return {
        "chart-hit-rate",
        "chart-multi-hop",
        "chart-leaks",
        "chart-citations",
        *(f"chart-strata-{s}" for s in result["strata"]),
    }


# --- content -------------------------------------------------------------------------------------


def test_sample_exercises_every_section(result: dict[str, Any]) -> None:
    """The synthetic run has what the report tests rely on: leaks, citations, 2- and 3-hop chains."""
    assert result["leaks"]["documents"], "no leaks"
    assert result["citations"] is not None
    assert set(result["metrics"]["multi_hop_completeness"]) == {"2", "3"}
    assert set(result["strata"]) == {*STRATA, "phrasing"}  # phrasing: a default tag stratum, the sample has it
    assert result["strata"]["phrasing"]["cross_language"]["small"] is True
    assert result["counts"]["errors"] == 1 and result["counts"]["missing_from_run"] == 1


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_every_metric_and_stratum_is_reported(fmt: str, result: dict[str, Any], md: str, html: str) -> None:
    page = md if fmt == "md" else html
    for name in result["metrics"]:
        assert name in page, f"metric {name} missing from {fmt}"
    for stratum, groups in result["strata"].items():
        assert stratum in page, f"stratum {stratum} missing from {fmt}"
        for value, g in groups.items():
            cell = f"| {value} | {g['n']} |" if fmt == "md" else f'<td class="text">{value}</td><td>{g["n"]}</td>'
            assert cell in page, f"{stratum}={value} (n={g['n']}) missing from {fmt}"
    for key in ("target", "evalset_hash", "snapshot", "started_at"):
        assert str(result["run_info"][key]) in page
    assert result["format"] in page


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_numbers_and_intervals_match_the_metrics(fmt: str, result: dict[str, Any], md: str, html: str) -> None:
    page = md if fmt == "md" else html
    for k in result["config"]["ks"]:
        value, (lo, hi) = result["metrics"][f"hit_rate@{k}"], result["ci"][f"hit_rate@{k}"]
        assert f"{value:.3f}" in page
        assert f"[{lo:.3f}, {hi:.3f}]" in page
    k = c.main_k(result)
    for stratum, groups in result["strata"].items():
        for value, g in groups.items():
            row = next(r for r in c.strata_rows(result, stratum) if r[0] == value)
            expected = "—" if g[f"hit_rate@{k}"] is None else f"{g[f'hit_rate@{k}']:.3f}"
            assert row[2] == expected


def test_markdown_sections_and_tables(md: str, result: dict[str, Any]) -> None:
    for heading in ("## Hit Rate@K", "## Multi-hop completeness", "## Strata", "## Permission leaks",
                    "## Citation diagnosis", "## All metrics", "## Counts"):  # fmt: skip
        assert heading in md
    for line in md.splitlines():
        if line.startswith("|"):
            assert line.endswith("|"), line
    m = c.citation_matrix(result)
    assert m is not None
    assert f"{m['retrieved_not_cited']} (generation gap)" in md
    assert f"{m['neither']} (retrieval gap)" in md
    for lv, n_docs, n_leaks in c.leak_level_rows(result):
        assert f"| {lv} | {n_docs} | {n_leaks} |" in md


def test_leak_rows_count_documents_by_level(result: dict[str, Any]) -> None:
    rows = {lv: (int(d), int(n)) for lv, d, n in c.leak_level_rows(result)}
    docs = result["leaks"]["documents"]
    for lv, (n_docs, n_leaks) in rows.items():
        assert n_docs == sum(1 for d in docs if d["secret_level"] == lv)
        assert n_leaks == sum(d["queries"] for d in docs if d["secret_level"] == lv)
    assert sum(n for _, n in rows.values()) == sum(d["queries"] for d in docs)


def test_hop_rows_give_counts_and_positions(result: dict[str, Any]) -> None:
    rows = {r[0]: r for r in c.hop_rows(result)}
    n3 = sum(1 for q in result["per_query"] if q["hops"] == 3)
    assert rows["3"][1] == str(n3)
    assert rows["3"][2] == f"{result['metrics']['multi_hop_completeness']['3']:.3f}"
    assert rows["3"][4].count("#") == 3 and rows["2"][4].count("#") == 2


# --- HTML structure, charts, self-containment ------------------------------------------------------


def test_html_has_every_chart_and_is_balanced(html: str, result: dict[str, Any]) -> None:
    dom = _dom(html)
    assert not dom.errors, dom.errors[:5]
    assert not dom.stack, f"unclosed: {dom.stack}"
    assert set(dom.svgs) == expected_chart_ids(result)
    assert len(dom.ids) == len(set(dom.ids)), "duplicate ids"


def test_html_is_self_contained(html: str) -> None:
    """No external URL in src/href, no @import, no url(), no script, no stylesheet link; a CSP
    forbids any load."""
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", html, re.I)
    assert not re.search(r"@import", html, re.I)
    assert not re.search(r"url\s*\(", html, re.I)
    assert not re.search(r"<\s*(?:script|link|iframe|object|embed|img)\b", html, re.I)
    assert re.search(r"""<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;""", html)
    tags = _dom(html).tags
    assert all(not a.get("src") for _, a in tags)
    assert all(not a.get("href") for _, a in tags)


def test_bars_are_proportional_to_values(result: dict[str, Any]) -> None:
    dom = _dom(charts.hit_rate_chart(result))
    bars = dom.bars["chart-hit-rate"]
    assert len(bars) == 3 * len(result["config"]["ks"])
    ratios = []
    for bar in bars:
        m = re.search(r": (\d\.\d{3})", bar["title"])
        assert m, bar
        value = float(m.group(1))
        if value > 0:
            ratios.append(bar["height"] / value)
    assert max(ratios) - min(ratios) < 1.0, "bar height not proportional to the value"
    hit = [b for b in bars if b["title"].startswith("Hit Rate")]
    for bar, k in zip(hit, result["config"]["ks"], strict=True):
        assert f"{result['metrics'][f'hit_rate@{k}']:.3f}" in bar["title"]
        lo, hi = result["ci"][f"hit_rate@{k}"]
        assert f"95% CI {lo:.3f}–{hi:.3f}" in bar["title"]
    svg = charts.hit_rate_chart(result)
    assert svg.count('class="ci"') == sum(1 for k in result["config"]["ks"] for f in ("hit_rate", "recall", "ndcg")
                                          if result["ci"].get(f"{f}@{k}"))  # fmt: skip


def test_strata_and_leak_charts_have_one_bar_per_value(result: dict[str, Any]) -> None:
    k = c.main_k(result)
    for stratum, groups in result["strata"].items():
        dom = _dom(charts.strata_chart(result, stratum))
        bars = dom.bars.get(f"chart-strata-{stratum}", [])
        expected = sum(1 for g in groups.values() for kk in (1, k) if g.get(f"hit_rate@{kk}") is not None)
        assert len(bars) == expected, stratum
    leak_bars = _dom(charts.leak_chart(result)).bars["chart-leaks"]
    assert len(leak_bars) == len(c.leak_level_rows(result))
    widest = max(leak_bars, key=lambda b: b["width"])
    top_level = max(c.leak_level_rows(result), key=lambda r: int(r[1]))
    assert widest["title"].startswith(f"{top_level[0]}:")


def test_citation_matrix_cells(result: dict[str, Any]) -> None:
    svg = charts.citation_chart(result)
    m = c.citation_matrix(result)
    assert m is not None
    assert svg.count('class="cell"') == 4
    for key, _, caption in c.CITATION_CELLS:
        assert f">{m[key]}</text>" in svg
        assert caption.split()[0] in svg


def test_report_without_oracle_answers_chains_or_strata() -> None:
    """A bare run: placeholders instead of leak/citation/multi-hop charts, same ids, no crash."""
    queries, run, _ = sample_inputs(seed=2, n_queries=12)
    bare = [q.model_copy(update={"hops": None}) for q in queries]
    runs = [r.model_copy(update={"answer": None}) for r in run]
    result = score(bare, runs, bootstrap=False)
    assert result["leaks"] is None and result["citations"] is None
    page = render_html(result)
    dom = _dom(page)
    assert {"chart-hit-rate", "chart-multi-hop", "chart-leaks", "chart-citations"} <= set(dom.svgs)
    assert "Permission leaks: not measured: no leak oracle" in page
    assert "nothing to diagnose" in page
    assert "no multi-hop questions" in page
    text = render_markdown(result)
    assert "Permission leaks: not measured: no leak oracle" in text and "No multi-hop questions" in text
    minimal = {"format": "drivebench-metrics/1", "metrics": {"hit_rate@1": 0.5}}
    assert "hit_rate@1" in render_html(minimal) and "0.500" in render_markdown(minimal)


def test_hostile_values_are_escaped(result: dict[str, Any]) -> None:
    evil = copy.deepcopy(result)
    bad = '<script>alert("x")</script>|'
    evil["strata"]["department"][bad] = dict(next(iter(evil["strata"]["department"].values())))
    evil["run_info"]["target"] = '"><img src=x onerror=alert(1)>'
    evil["leaks"]["documents"].append({"doc_id": "<b>d</b>", "queries": 1, "secret_level": "<i>s</i>"})
    page = render_html(evil)
    assert "<script>" not in page and "<img" not in page and "<b>d</b>" not in page
    assert "&lt;script&gt;" in page
    assert not _dom(page).errors
    text = render_markdown(evil)
    row = next(line for line in text.splitlines() if "alert" in line and line.startswith("| <script>"))
    assert "\\|" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == len(c.strata_header(result)) + 1


# --- terminal ---------------------------------------------------------------------------------------


def test_terminal_details(result: dict[str, Any]) -> None:
    con = Console(record=True, width=200)
    print_details(result, con, strata=True)
    out = con.export_text()
    assert "Multi-hop completeness by hop count" in out
    assert "Permission leaks" in out and "generation gap" in out and "retrieval gap" in out
    for stratum, groups in result["strata"].items():
        assert stratum in out
        for value in groups:
            assert value in out
    for lv, _, _ in c.leak_level_rows(result):
        assert lv in out
    con2 = Console(record=True, width=200)
    con2.print(strata_table(result, "role"))
    role_out = con2.export_text()
    for value, g in result["strata"]["role"].items():
        assert re.search(rf"{value}\s+│\s+{g['n']}\s", role_out)


# --- files and CLI ------------------------------------------------------------------------------------


def test_write_and_load(tmp_path: Path, result: dict[str, Any]) -> None:
    (tmp_path / "metrics.json").write_text(json.dumps(result), encoding="utf-8")
    loaded = load_metrics(tmp_path)
    assert loaded == json.loads(json.dumps(result))
    md_path, html_path = write_reports(loaded, tmp_path)
    assert md_path.read_text(encoding="utf-8") == render_markdown(loaded)
    assert html_path.read_text(encoding="utf-8") == render_html(loaded)
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a drivebench metrics\.json"):
        load_metrics(tmp_path / "bad.json")


def test_cli_eval_report(tmp_path: Path, result: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from drivebench.cli.main import app

    (tmp_path / "metrics.json").write_text(json.dumps(result), encoding="utf-8")
    done = CliRunner().invoke(app, ["eval", "report", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "Strata" in done.output and "Permission leaks" in done.output
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == render_markdown(result)
    assert "<svg" in (tmp_path / "report.html").read_text(encoding="utf-8")
    missing = CliRunner().invoke(app, ["eval", "report", str(tmp_path / "nope")])
    assert missing.exit_code != 0
