"""What a manager reads first, and one design for every HTML report.

* the one-line verdict (report.md, report.html, terminal): pass/fail, the main figure against the previous run with
  the same target, corpus version and label (stored in metrics.json when the run is recorded), the worst stratum
  large enough to read;
* the eval, probe and audit pages share one skeleton (stylesheet, header with the verdict line, CSP, no script);
* leaked documents are named (name and path; the id with a note when the corpus is unknown), hostile names escaped;
* the missed-or-leaked table comes in several orders switched without script.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from drivebench.cli.reports import finish_run
from drivebench.evaluator.audit.report import write_html as write_audit_html
from drivebench.evaluator.evaluate import write_metrics
from drivebench.evaluator.failed_queries import attach
from drivebench.evaluator.gates import apply_verdict, parse_gate
from drivebench.evaluator.history import HistoryStore, compare_with_previous
from drivebench.evaluator.probe.report import write_html as write_probe_html
from drivebench.evaluator.report import _common as c
from drivebench.evaluator.report import page
from drivebench.evaluator.report.html import render_html
from drivebench.evaluator.report.markdown import render_markdown
from drivebench.evaluator.report.outputs import load_metrics
from drivebench.evaluator.report.sample import sample_inputs, sample_result
from drivebench.evaluator.report.terminal import print_summary
from drivebench.evaluator.report.verdict import summary_line, worst_stratum_text
from drivebench.evaluator.scoring import score
from tests.support.report_samples import audit_result, probe_result

HOSTILE = '<img src=x onerror=alert(1)>"&.pdf'


def run(started: str, hit: float | None, label: str | None = "nightly", gates: tuple[str, ...] = ()) -> dict[str, Any]:
    """A scored sample run on one target and corpus version, started at ``started``, its hit_rate@10 set to ``hit``."""
    r = sample_result(seed=0, n_queries=24, resamples=20, started_at=started, corpus_version="synthetic@1")
    if label is not None:
        r["run_info"]["label"] = label
    r["metrics"]["hit_rate@10"] = hit
    apply_verdict(r, [parse_gate(g) for g in gates], allow_leaks=True)
    return r


def missing_and_leaking(seed: int = 1) -> dict[str, Any]:
    """The sample run with the missed and leaking queries attached, and a few more misses: queries q001-q004 (none
    of them leaks) lose their gold documents from their results."""
    queries, records, catalog = sample_inputs(seed)
    gold = {q.query_id: set(q.gold_ids) for q in queries}
    for rec in records:
        if rec.query_id in ("q001", "q002", "q003", "q004"):
            rec.results = [h for h in rec.results if h.doc_id not in gold[rec.query_id]]
    result = score(queries, records, oracle="evalset", catalog=catalog, resamples=20)
    result["run_info"] = {"target": "sample:synthetic", "started_at": "2026-12-04T09:00:00+00:00"}
    return attach(result, queries, records, [1, 3, 5, 10], catalog)


# --- the one-line verdict -------------------------------------------------------------------------------------


def test_verdict_line_gives_the_change_against_the_previous_run_with_the_same_label(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    first = store.record(run("2026-12-03T14:02:00+00:00", 0.913))
    store.record(run("2026-12-03T15:00:00+00:00", 0.5, label="bge trial"))  # another label: another line
    failed = run("2026-12-03T16:00:00+00:00", 0.1)
    failed["status"] = {"state": "failed", "reason": "preflight failed"}
    store.record(failed)  # a failed run's figures are not a baseline
    store.record(run("2026-12-05T09:00:00+00:00", 0.2))  # later than the run being judged

    up = run("2026-12-04T09:00:00+00:00", 0.925)
    up["previous_run"] = compare_with_previous(up, store)
    assert up["previous_run"]["state"] == "compared" and up["previous_run"]["previous"]["run_id"] == first
    line = summary_line(up)
    leaks = f"LEAKS in {up['leaks']['queries_with_leak']} queries"  # --allow-leaks let it pass; the line still says
    assert line.startswith(f"PASSED · {leaks} · hit_rate@10 0.925 (+0.012 vs run #{first}, 2026-12-03 14:02) · worst")

    down = run("2026-12-04T09:00:00+00:00", 0.9, gates=("hit_rate@10<0.95",))
    down["previous_run"] = compare_with_previous(down, store)
    assert summary_line(down).startswith(
        f"FAILED (1 of 1 gate failed) · {leaks} · hit_rate@10 0.900 (-0.013 vs run #{first}, 2026-12-03 14:02)"
    )

    # stored in metrics.json: a report re-rendered from the file shows the same line, in all three places
    write_metrics(up, tmp_path / "run" / "metrics.json")
    again = load_metrics(tmp_path / "run")
    assert again["previous_run"] == up["previous_run"]
    expected = f"(+0.012 vs run #{first}, 2026-12-03 14:02)"
    assert expected in render_markdown(again).splitlines()[2]
    header = re.search(r'<header class="report-header".*?</header>', render_html(again), re.S)
    assert header is not None and expected in header.group(0)
    console = Console(record=True, width=300)
    print_summary(again, console)
    assert expected in console.export_text().splitlines()[0]


def test_first_run_with_a_label_says_so_and_never_a_zero_delta(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    store.record(run("2026-12-01T00:00:00+00:00", 0.8, label="other"))
    result = run("2026-12-04T09:00:00+00:00", 0.925)
    result["previous_run"] = compare_with_previous(result, store)
    line = summary_line(result)
    assert result["previous_run"]["state"] == "first"
    assert "hit_rate@10 0.925 (first run with this label)" in line
    assert "vs run" not in line and "+0.000" not in line and "-0.000" not in line
    # an empty history file, or none at all: the same
    empty = run("2026-12-04T09:00:00+00:00", 0.925)
    empty["previous_run"] = compare_with_previous(empty, HistoryStore(tmp_path / "absent.sqlite3"))
    assert "(first run with this label)" in summary_line(empty)


def test_a_figure_not_measured_gives_no_delta(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    store.record(run("2026-12-03T14:02:00+00:00", None))
    result = run("2026-12-04T09:00:00+00:00", 0.9)
    result["previous_run"] = compare_with_previous(result, store)
    assert result["previous_run"]["delta"] is None
    line = summary_line(result)
    assert "no change can be computed" in line and "+0." not in line


def test_finish_run_stores_the_comparison_in_metrics_json(tmp_path: Path) -> None:
    """The comparison is computed when the run is recorded, and written into the run's metrics.json."""
    history = tmp_path / "history.sqlite3"
    ids = []
    for i, (started, hit) in enumerate((("2026-12-03T14:02:00+00:00", 0.9), ("2026-12-04T09:00:00+00:00", 0.95))):
        out = tmp_path / f"run{i}"
        result = run(started, hit)
        write_metrics(result, out / "metrics.json")
        ids.append(finish_run(result, out, history, Console(file=io.StringIO()), details=False))
    stored = [json.loads((tmp_path / f"run{i}" / "metrics.json").read_text(encoding="utf-8")) for i in (0, 1)]
    assert stored[0]["previous_run"]["state"] == "first"
    assert stored[1]["previous_run"]["state"] == "compared"
    assert stored[1]["previous_run"]["previous"]["run_id"] == ids[0]
    assert stored[1]["previous_run"]["delta"] == pytest.approx(0.05)
    assert "(+0.050 vs run #" in (tmp_path / "run1" / "report.md").read_text(encoding="utf-8")


def test_worst_stratum_ignores_groups_too_small_to_read() -> None:
    result: dict[str, Any] = {
        "config": {"ks": [1, 10]},
        "metrics": {"hit_rate@10": 0.9},
        "strata": {
            "phrasing": {
                "typo": {"n": 3, "small": True, "hit_rate@10": 0.1},  # the lowest, but an anecdote
                "paraphrase": {"n": 21, "small": False, "hit_rate@10": 0.61},
            },
            "role": {"intern": {"n": 4, "hit_rate@10": 0.0}, "manager": {"n": 30, "hit_rate@10": 0.95}},  # older file
            "department": {"hr": {"n": 12, "small": False, "hit_rate@10": None}},  # not measured: not a candidate
        },
    }
    assert worst_stratum_text(result) == "worst stratum: phrasing=paraphrase hit_rate@10 0.610 (n=21)"
    result["strata"]["phrasing"]["paraphrase"]["small"] = True
    result["strata"]["role"]["manager"]["n"] = 2
    assert worst_stratum_text(result) == "worst stratum: not measured"


# --- one design for the eval, probe and audit pages --------------------------------------------------------


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("pages")
    eval_result = missing_and_leaking()
    apply_verdict(eval_result, [], allow_leaks=True)
    return {
        "eval": render_html(eval_result),
        "probe": write_probe_html(probe_result(), tmp / "probe.html").read_text(encoding="utf-8"),
        "audit": write_audit_html(audit_result(), tmp / "oversharing.html").read_text(encoding="utf-8"),
    }


def test_the_three_reports_share_one_skeleton_and_carry_no_script(pages: dict[str, str]) -> None:
    styles = {}
    for kind, html in pages.items():
        assert not re.search(r"<\s*script\b", html, re.I), kind
        assert not re.search(r"""(?:src|href)\s*=""", html, re.I), kind
        assert f'<meta http-equiv="Content-Security-Policy" content="{page.e(page.CSP)}">' in html, kind
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html, kind
        style = re.search(rf'<style id="{page.STYLE_ID}">(.*?)</style>', html, re.S)
        assert style is not None and len(re.findall(r"<style\b", html)) == 1, kind
        styles[kind] = style.group(1)
        header = re.search(
            rf'<header class="report-header" data-report="{kind}"><h1>.*?</h1>(.*?)</header>', html, re.S
        )
        assert header is not None, kind
        assert re.search(rf'<p class="verdict state-(failed|passed|warn|none)" id="{page.VERDICT_ID}"', header.group(1))
        assert "<table" not in header.group(1)
        assert re.findall(r"<table\b", html) and len(re.findall(r"<table\b", html)) == html.count(
            '<div class="table-wrap"><table'
        ), f"{kind}: a table outside its scrolling box"
    assert styles["eval"] == styles["probe"] == styles["audit"]


def test_verdict_states_colour_the_header(tmp_path: Path) -> None:
    def state(html: str) -> str:
        m = re.search(rf'id="{page.VERDICT_ID}" data-state="(\w+)"', html)
        assert m is not None
        return m.group(1)

    leaky = write_probe_html(probe_result(), tmp_path / "a.html").read_text(encoding="utf-8")
    clean = write_probe_html(probe_result(leaks=False), tmp_path / "b.html").read_text(encoding="utf-8")
    assert state(leaky) == "failed" and "FAILED · 2 leak(s)" in leaky
    assert state(clean) == "passed" and "PASSED · no leak in 2 pairs" in clean
    flagged = audit_result()
    assert state(write_audit_html(flagged, tmp_path / "c.html").read_text(encoding="utf-8")) == "failed"
    flagged["counts"] = {"documents": 2, "flagged": 0, "by_flag": {}}
    quiet = write_audit_html(flagged, tmp_path / "d.html").read_text(encoding="utf-8")
    assert state(quiet) == "passed" and "PASSED · nothing flagged in 2 documents" in quiet


# --- leaked documents by name ------------------------------------------------------------------------------


def test_eval_reports_name_leaked_documents_and_escape_hostile_names() -> None:
    result = sample_result(seed=1)
    top = result["leaks"]["documents"][0]
    assert top.get("name") and top.get("path"), "the catalog names a leaked document"
    top["name"], top["path"] = HOSTILE, f"/legal/{HOSTILE}"
    html = render_html(result)
    table = re.search(r'<table id="table-leaked-documents"[^>]*>.*?</table>', html, re.S)
    assert table is not None
    first = re.search(r"<tbody><tr[^>]*><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td>", table.group(0))
    assert first is not None and first.group(1) == page.e(HOSTILE) and first.group(2) == page.e(f"/legal/{HOSTILE}")
    assert "<img" not in html and "onerror=alert(1)>" not in html
    assert c.LEAK_ID_NOTE not in html
    md = render_markdown(result)
    assert f"| {HOSTILE} | /legal/{HOSTILE} |" in md
    # without a catalog: ids, and the note says how to get names
    queries, records, _ = sample_inputs(1)
    bare = score(queries, records, oracle="evalset", resamples=20)
    bare_html = render_html(bare)
    assert c.LEAK_ID_NOTE in bare_html and c.LEAK_ID_NOTE in render_markdown(bare)
    assert re.search(
        r'<table id="table-leaked-documents"[^>]*><thead>.*?</thead><tbody><tr[^>]*><td class="text"[^>]*>d\d{3}</td>',
        bare_html,
    )


def test_probe_and_audit_pages_name_documents_and_escape_hostile_names(tmp_path: Path) -> None:
    probe = write_probe_html(probe_result(HOSTILE), tmp_path / "probe.html").read_text(encoding="utf-8")
    audit = write_audit_html(audit_result(HOSTILE), tmp_path / "audit.html").read_text(encoding="utf-8")
    for html in (probe, audit):
        assert "<img" not in html and "onerror=alert(1)>" not in html and page.e(HOSTILE) in html
    docs = re.search(r'<table id="table-leaked-documents"[^>]*>.*?<tbody>(.*?)</tbody>', probe, re.S)
    assert docs is not None
    cells = re.findall(r"<tr[^>]*><td[^>]*>(.*?)</td>", docs.group(1))
    assert cells == [page.e(HOSTILE), "x-999"]  # by name; an id the corpus does not know stays an id, with a note
    assert "shown by id" in probe
    leaks = re.search(
        r'<table id="table-leaks"[^>]*>.*?<tbody><tr><td[^>]*>target</td><td[^>]*>u012</td><td[^>]*>(.*?)</td>',
        probe,
        re.S,
    )
    assert leaks is not None and leaks.group(1) == page.e(HOSTILE)
    row = re.search(
        r'<table id="table-documents"[^>]*>.*?<tbody><tr class="row-failed"><td[^>]*>384</td><td[^>]*>(.*?)</td>',
        audit,
        re.S,
    )
    assert row is not None and row.group(1) == page.e(HOSTILE)


# --- the missed-or-leaked table, sortable without script ------------------------------------------------------


def _first_column(table_html: str) -> list[str]:
    body = re.search(r"<tbody>(.*?)</tbody>", table_html, re.S)
    assert body is not None
    return re.findall(r"<tr[^>]*><td[^>]*>(.*?)</td>", body.group(1))


def _column(table_html: str, index: int) -> list[str]:
    body = re.search(r"<tbody>(.*?)</tbody>", table_html, re.S)
    assert body is not None
    return [re.findall(r"<td[^>]*>(.*?)</td>", row)[index] for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1))]


def test_failed_queries_table_has_one_view_per_order(pages: dict[str, str]) -> None:
    html = pages["eval"]
    block = re.search(r'<div class="sortable" id="sortable-failed">(.*?)</div></div></div>', html, re.S)
    assert block is not None
    radios = re.findall(
        r'<input type="radio" class="sort-key sort-key-(\d)" name="sort-failed" id="sort-failed-\d"( checked)?>', html
    )
    assert [r[0] for r in radios] == ["0", "1", "2"] and [bool(r[1]) for r in radios] == [True, False, False]
    for k in range(3):  # each radio shows its view, by CSS alone
        assert f".sortable > input.sort-key-{k}:checked ~ .sort-view-{k} {{ display:block; }}" in html
    tables = {
        key: re.search(rf'<table id="{tid}"[^>]*>.*?</table>', html, re.S)
        for key, tid in (
            ("query", "table-failed"),
            ("leaks", "table-failed-by-leaks"),
            ("asker", "table-failed-by-asker"),
        )
    }
    assert all(tables.values())
    by_query = _first_column(tables["query"].group(0))  # type: ignore[union-attr]
    by_leak = _first_column(tables["leaks"].group(0))  # type: ignore[union-attr]
    by_asker = _first_column(tables["asker"].group(0))  # type: ignore[union-attr]
    assert len(by_query) >= 5 and sorted(by_query) == sorted(by_leak) == sorted(by_asker)  # the same rows
    assert by_query == sorted(by_query, key=c.natural_key)
    leaked = _column(tables["leaks"].group(0), 6)  # type: ignore[union-attr]
    assert any(leaked) and not all(leaked)
    n = sum(1 for x in leaked if x)
    assert all(leaked[:n]) and not any(leaked[n:]), "every leaking query before the misses"
    assert by_leak[n:] == sorted(by_leak[n:], key=c.natural_key)
    askers = _column(tables["asker"].group(0), 1)  # type: ignore[union-attr]
    assert askers == sorted(askers, key=c.natural_key) and len(set(askers)) > 1
    assert by_leak != by_query and by_asker != by_query
    assert "failed_queries.jsonl" in html


def test_leaks_first_puts_the_highest_ranked_leak_first() -> None:
    def row(qid: str, leak_rank: int | None, problems: list[str]) -> dict[str, Any]:
        top = [
            {"rank": r, "doc_id": f"{qid}-leak" if r == leak_rank else f"{qid}-{r}", "score": 1.0} for r in (1, 2, 3)
        ]
        leaked = [{"doc_id": f"{qid}-leak"}] if "leak" in problems else []
        return {"query_id": qid, "asker": "u1", "problems": problems, "k": 10, "gold": [], "top": top, "leaked": leaked}

    rows = [
        row("q10", None, ["miss"]),
        row("q9", 3, ["leak"]),
        row("q2", 1, ["miss", "leak"]),
        row("q1", None, ["miss"]),
    ]
    result = {"failed_queries": {"k": 10, "total": 4, "catalog": False, "rows": rows}}
    orders = {key: [r[0] for r in rows] for key, _, rows in c.failed_orders(result)}
    assert orders["query"] == ["q1", "q2", "q9", "q10"]
    assert orders["leaks"] == ["q2", "q9", "q1", "q10"]
    assert sorted(["q10", "q9", "q100"], key=c.natural_key) == ["q9", "q10", "q100"]


def test_a_leaking_run_without_gates_is_never_shown_neutral() -> None:
    result = sample_result(seed=1, resamples=20)  # no verdict: e.g. the demo, which checks no gate
    assert result["leaks"]["queries_with_leak"] > 0
    header = re.search(rf'id="{page.VERDICT_ID}" data-state="(\w+)">(.*?)</p>', render_html(result))
    assert header is not None and header.group(1) == "failed"
    assert header.group(2).startswith(f"LEAKS in {result['leaks']['queries_with_leak']} queries · hit_rate@10 ")
    result["leaks"]["queries_with_leak"] = 0
    result["counts"]["queries_with_leak"] = 0
    clean = re.search(rf'id="{page.VERDICT_ID}" data-state="(\w+)">', render_html(result))
    assert clean is not None and clean.group(1) == "none"
