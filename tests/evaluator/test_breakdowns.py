"""Breakdowns you choose: ``--by TAG`` adds a stratum per eval-set tag, ``phrasing``/``style``/``noise`` come by
default when the set has them, an unknown tag is a usage error, and a group under 5 queries is flagged ``small``
in metrics.json and marked in every report (markdown, HTML, terminal)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from drivebench.api import evaluate
from drivebench.cli.main import app
from drivebench.evaluator.options import EvalOptions
from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.terminal import strata_overview_table, strata_table
from drivebench.evaluator.scoring import score
from drivebench.evaluator.strata import STRATA, UnknownTagError, tag_strata
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import EvalQuery, RunRecord, load_evalset, write_jsonl
from drivebench.testing import ServedSimulator

SMALL_CROSS = 3  # queries phrased cross_language in the tagged seed set: a group too small to read


def tagged_seed(queries: list[EvalQuery]) -> list[EvalQuery]:
    """The seed eval set (which has no phrasing) with ``tags.phrasing``: 3 cross_language, the rest alternating."""
    out = []
    for i, q in enumerate(queries):
        phrasing = "cross_language" if i < SMALL_CROSS else ("paraphrase", "known_item")[i % 2]
        out.append(q.model_copy(update={"tags": {**q.tags, "phrasing": phrasing}}))
    return out


@pytest.fixture(scope="module")
def run_dir(drivebench_server: ServedSimulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ``eval run --by phrasing --by lang`` against the served seed simulator."""
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    d = tmp_path_factory.mktemp("by")
    evalset = write_jsonl(d / "evalset.jsonl", tagged_seed(load_evalset(sim.corpus_dir / EVALSET_NAME)))
    args = ["eval", "run", "--target", drivebench_server.url, "--token", sim.tokens.eval_token]
    args += ["--evalset", str(evalset), "--out", str(d / "run"), "--by", "phrasing", "--by", "lang"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    return d / "run"


@pytest.fixture(scope="module")
def result(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))


def _mean(rows: list[dict[str, Any]], metric: str) -> float | None:
    """A per-query mean as scoring takes it: queries the metric excludes (null, e.g. no gold) left out."""
    values = [r[metric] for r in rows if r[metric] is not None]
    return sum(values) / len(values) if values else None


def test_by_phrasing_gives_a_stratum_in_metrics_json(result: dict[str, Any], run_dir: Path) -> None:
    queries = load_evalset(run_dir.parent / "evalset.jsonl")
    assert result["status"]["state"] == "ok" and result["errors"]["answered"] == len(queries)
    assert result["config"]["strata"] == {"tags": ["phrasing", "lang"], "small_below": 5}
    assert list(result["strata"]) == [*STRATA, "phrasing", "lang"]
    phrasing = result["strata"]["phrasing"]
    wanted = {v: [q.query_id for q in queries if q.tags["phrasing"] == v] for v in phrasing}
    assert {v: g["n"] for v, g in phrasing.items()} == {v: len(ids) for v, ids in wanted.items()}
    assert phrasing["cross_language"]["n"] == SMALL_CROSS
    rows = {r["query_id"]: r for r in result["per_query"]}
    for value, ids in wanted.items():  # each group's figures are its own queries' figures, not the whole set's
        for metric in ("hit_rate@10", "mrr@10"):
            assert phrasing[value][metric] == pytest.approx(_mean([rows[i] for i in ids], metric))
    assert {g["n"] for g in result["strata"]["lang"].values()} and sum(
        g["n"] for g in result["strata"]["lang"].values()
    ) == len(queries)
    assert set(result["strata"]["lang"]) == {q.tags["lang"] for q in queries}


def test_a_group_of_3_is_flagged_small_in_metrics_json(result: dict[str, Any]) -> None:
    for stratum, groups in result["strata"].items():
        for value, g in groups.items():
            assert g["small"] is (g["n"] < 5), f"{stratum}={value} n={g['n']}"
    assert result["strata"]["phrasing"]["cross_language"]["small"] is True
    assert result["strata"]["phrasing"]["paraphrase"]["small"] is False


def _md_row(md: str, value: str) -> str:
    section = md[md.index("### Phrasing (`phrasing`)") :]
    return next(line for line in section.splitlines() if line.startswith(f"| {value} |"))


def test_report_md_has_the_phrasing_table_with_the_small_group_marked(result: dict[str, Any], run_dir: Path) -> None:
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert md == render_markdown(result)  # the file eval run wrote is the rendering of its metrics.json
    assert "### Phrasing (`phrasing`)" in md and "(`lang`)" in md
    assert c.SMALL_NOTE in md
    small = _md_row(md, "cross_language")
    assert small.startswith(f"| cross_language | {SMALL_CROSS} |") and small.endswith(f"| {c.SMALL_MARK} |")
    big = _md_row(md, "paraphrase")
    assert c.SMALL_MARK not in big and big.endswith("|  |")
    n = result["strata"]["phrasing"]["paraphrase"]["n"]
    hit = result["strata"]["phrasing"]["paraphrase"]["hit_rate@10"]
    assert big.startswith(f"| paraphrase | {n} | {hit:.3f} |")


def test_report_html_greys_and_marks_the_small_group(result: dict[str, Any], run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert page == render_html(result)
    table = re.search(r'<table id="table-strata-phrasing">.*?</table>', page, re.S)
    assert table is not None
    small = re.search(r'<tr class="small"><td class="text">cross_language</td><td>3</td>.*?</tr>', table[0])
    mark = f"<td>{escape(c.SMALL_MARK)}</td></tr>"
    assert small is not None and small[0].endswith(mark)
    big = re.search(r'<tr><td class="text">paraphrase</td>.*?</tr>', table[0])
    assert big is not None and big[0].endswith("<td></td></tr>")
    assert "tr.small td { color:var(--muted)" in page  # the class greys the row
    chart = re.search(r'<svg[^>]*id="chart-strata-phrasing".*?</svg>', page, re.S)
    assert chart is not None and f"n={SMALL_CROSS}, too few to read" in chart[0]


def _lines(renderable: Any) -> list[str]:
    con = Console(record=True, width=220, force_terminal=True, color_system="standard")
    con.print(renderable)
    return con.export_text(styles=True).splitlines()


def test_terminal_tables_dim_and_mark_the_small_group(result: dict[str, Any]) -> None:
    for table in (strata_table(result, "phrasing"), strata_overview_table(result)):
        lines = _lines(table)
        small = next(line for line in lines if "cross_language" in line)
        big = next(line for line in lines if "paraphrase" in line)
        assert c.SMALL_MARK in small and "\x1b[2m" in small  # marked and dim
        assert c.SMALL_MARK not in big and "\x1b[2m" not in big


def test_an_unknown_by_tag_is_exit_2_naming_the_sets_tags(run_dir: Path) -> None:
    evalset = run_dir.parent / "evalset.jsonl"
    run = run_dir / "run.jsonl"
    cases = [
        ["eval", "run", "--target", "http://127.0.0.1:9", "--token", "t", "--evalset", str(evalset)],  # nothing sent
        ["eval", "score", "--evalset", str(evalset), "--run", str(run)],
    ]
    for args in cases:
        done = CliRunner().invoke(app, [*args, "--by", "phrasing", "--by", "mood"])
        assert done.exit_code == 2, done.output
        text = " ".join(done.output.split())
        assert "error: --by: cannot break down by 'mood'" in text and "Traceback" not in done.output
        assert "the eval set's tags: access, department, file_type, kind, lang" in text


def test_eval_score_by_gives_the_same_strata_as_eval_run(result: dict[str, Any], run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored.json"
    args = ["eval", "score", "--evalset", str(run_dir.parent / "evalset.jsonl"), "--run", str(run_dir)]
    done = CliRunner().invoke(app, [*args, "--by", "lang", "--json", str(out)])
    assert done.exit_code == 0, done.output
    scored = json.loads(out.read_text(encoding="utf-8"))
    assert scored["config"]["strata"]["tags"] == ["phrasing", "lang"]  # phrasing by default, lang asked for
    for stratum in ("phrasing", "lang", "kind"):
        assert {v: (g["n"], g["small"], g["hit_rate@10"]) for v, g in scored["strata"][stratum].items()} == {
            v: (g["n"], g["small"], g["hit_rate@10"]) for v, g in result["strata"][stratum].items()
        }


# --- without a server: the API, defaults, edge cases ----------------------------------------------------------


def q(qid: str, **tags: str) -> EvalQuery:
    return EvalQuery(query_id=qid, query="budget", user_role="engineer", gold=[{"doc_id": "d1"}], tags=tags)


def test_api_evaluate_by_and_an_unknown_tag_before_any_call() -> None:
    queries = [q(f"q{i}", phrasing="cross_language" if i < 4 else "known_item", team="a") for i in range(9)]
    calls: list[str] = []

    def recall(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[dict[str, Any]]:
        calls.append(query)
        return [{"doc_id": "d1"}] if len(calls) % 2 else [{"doc_id": "d2"}]

    with pytest.raises(UnknownTagError, match=r"'mood'.*the eval set's tags: phrasing, team"):
        evaluate(recall, queries, EvalOptions(by=["mood"], preflight=False))
    assert calls == []  # the error comes before the first query is sent
    ev = evaluate(recall, queries, EvalOptions(by=["team"], preflight=False))
    strata = ev.result["strata"]
    assert ev.result["config"]["strata"]["tags"] == ["phrasing", "team"]
    assert (strata["phrasing"]["cross_language"]["n"], strata["phrasing"]["cross_language"]["small"]) == (4, True)
    assert (strata["phrasing"]["known_item"]["n"], strata["phrasing"]["known_item"]["small"]) == (5, False)
    assert strata["team"] == {"a": {**strata["team"]["a"], "n": 9, "small": False}}
    assert len(calls) == 9


def test_defaults_only_when_carried_absent_is_unknown_and_builtins_add_nothing() -> None:
    queries = [q("a", style="code", noise="typo"), q("b", style="name"), q("c")]
    assert tag_strata(queries) == ["style", "noise"]  # no phrasing in this set: no phrasing stratum
    assert tag_strata(queries, ["department", "style", "style"]) == ["style", "noise"]
    assert tag_strata(queries, "style") == ["style", "noise"]  # one name, not its letters
    assert tag_strata([q("x")]) == []
    run = [RunRecord(query_id=x.query_id, results=[{"doc_id": "d1"}]) for x in queries]
    out = score(queries, run, bootstrap=False)
    assert {v: g["n"] for v, g in out["strata"]["noise"].items()} == {"typo": 1, "unknown": 2}
    assert {v: g["n"] for v, g in out["strata"]["style"].items()} == {"code": 1, "name": 1, "unknown": 1}
    assert "phrasing" not in out["strata"]
    with pytest.raises(UnknownTagError, match=r"no query of the eval set has that tag; the eval set's tags: noise, st"):
        score(queries, run, by=["phrasing"])


@pytest.mark.parametrize(("n", "small"), [(1, True), (4, True), (5, False), (6, False)])
def test_small_is_below_five(n: int, small: bool, mkr: Callable[..., RunRecord]) -> None:
    queries = [q(f"q{i}", phrasing="vague") for i in range(n)] + [q(f"z{i}", phrasing="literal") for i in range(5)]
    out = score(queries, [mkr(x.query_id, ["d1"]) for x in queries], bootstrap=False)
    assert out["strata"]["phrasing"]["vague"]["small"] is small
    assert out["strata"]["phrasing"]["literal"]["small"] is False


def test_an_older_metrics_json_without_flags_is_judged_by_n() -> None:
    """A metrics.json written before groups carried ``small``: the reports still mark n<5."""
    queries = [q(f"q{i}", phrasing="vague" if i < 2 else "literal") for i in range(8)]
    out = score(queries, [RunRecord(query_id=x.query_id, results=[]) for x in queries], bootstrap=False)
    for groups in out["strata"].values():
        for g in groups.values():
            del g["small"]
    md = render_markdown(out)
    assert _md_row(md, "vague").endswith(f"| {c.SMALL_MARK} |")
    assert not _md_row(md, "literal").endswith(f"| {c.SMALL_MARK} |")
    assert '<tr class="small"><td class="text">vague</td><td>2</td>' in render_html(out)


def test_no_small_group_no_note_column() -> None:
    queries = [q(f"q{i}", phrasing="literal") for i in range(6)]
    out = score(queries, [RunRecord(query_id=x.query_id, results=[{"doc_id": "d1"}]) for x in queries])
    assert not c.has_small(out)
    assert "Note" not in c.strata_header(out)
    assert c.SMALL_NOTE not in render_markdown(out) and 'class="small"' not in render_html(out)
