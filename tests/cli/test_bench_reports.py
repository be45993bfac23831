"""benchmarks/report.py: every benchmark writes its result as JSON and as a Markdown report, the committed reports
match their JSON, and the docs' benchmarks page links each one. Synthetic results stand in for real runs (the
benchmarks themselves take minutes to hours)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks import report
from tests.support.docs import REPO, page_text


def test_write_report_writes_the_json_with_meta_and_its_markdown(tmp_path: Path) -> None:
    result = {
        "quick": False,
        "target_ms": 5.0,
        "rows": [
            {"chunks": 10_000, "allowed_share": 0.1, "flat_p50_ms": 1.16, "ivf_recall@10": 0.9931},
            {"chunks": 250_000, "allowed_share": 1.0, "flat_p50_ms": 42.5, "ivf_recall@10": 0.996},
        ],
        "checks": {"exact everywhere": True, "fast enough | everywhere": False},
    }
    written = report.write_report("bench_ann", result, tmp_path)
    data = json.loads((tmp_path / "bench_ann.json").read_text(encoding="utf-8"))
    assert data == written and next(iter(data)) == "meta" and data["rows"] == result["rows"]
    assert re.match(r"\d{4}-\d\d-\d\dT", data["meta"]["measured_at"]) and data["meta"]["cpus"]
    md = (tmp_path / "bench_ann.md").read_text(encoding="utf-8")
    assert md.startswith("# bench_ann\n\nWhere exact filtered search stops meeting the latency target")
    assert "* **measured**: " + data["meta"]["measured_at"] in md
    assert "* met: exact everywhere\n* **MISSED**: fast enough \\| everywhere\n" in md
    assert "| chunks | allowed_share | flat_p50_ms | ivf_recall@10 |\n|---|---:|---:|---:|\n" in md
    assert "| 10,000 | 0.1 | 1.16 | 0.993 |\n| 250,000 | 1 | 42.5 | 0.996 |\n" in md
    assert "| quick | no |" in md and "| target_ms | 5 |" in md
    assert "`python -m benchmarks ann`" in md and "`python -m benchmarks.report ann`" in md
    assert md == report.render("bench_ann", data)  # the page is the JSON's, and only the JSON's


def test_report_checks_writes_the_checks_and_exits_1_on_a_missed_target(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as missed:
        report.report_checks("bench_probe", {"n": 3}, {"fast": False}, tmp_path)
    assert missed.value.code == 1
    assert json.loads((tmp_path / "bench_probe.json").read_text())["checks"] == {"fast": False}
    with pytest.raises(SystemExit) as met:
        report.report_checks("bench_probe", {"n": 3}, {"fast": True}, tmp_path)
    assert met.value.code == 0


def test_figures_are_formatted_for_a_table() -> None:
    assert [report.fmt(v) for v in (1234567, 0.5, 2.08, 1.0, 21.344, 224.56, 4495.2, 0.00017, None, True)] == [
        "1,234,567",
        "0.5",
        "2.08",
        "1",
        "21.34",
        "224.6",
        "4,495",
        "0.00017",
        "–",
        "yes",
    ]


def test_wide_records_are_transposed_and_groups_with_the_same_keys_share_a_table() -> None:
    sizes = [{"documents": n, **{f"figure_{i}": i * n for i in range(14)}} for n in (1000, 100_000)]
    (section,) = report.generic({"sizes": sizes})
    assert section.startswith("## sizes\n\n| documents | 1,000 | 100,000 |\n")
    assert "| figure_13 | 13,000 | 1,300,000 |" in section
    sections = report.generic({"wall_s": {"pytrec": 1.5, "ours": 0.9}, "cpu_s": {"pytrec": 1.4, "ours": 0.8}})
    assert sections == [
        "## wall_s, cpu_s\n\n| figure | pytrec | ours |\n|---|---:|---:|\n| wall_s | 1.5 | 0.9 |\n| cpu_s | 1.4 | 0.8 |"
    ]
    nested = report.generic({"ingest": {"ratio": 0.82, "runs": [{"ingest_s": 3.2}]}, "runs": {"probe": [{"n": 1}]}})
    assert nested[0].startswith("## ingest\n\n| figure | value |") and "| ratio | 0.82 |" in nested[0]
    assert nested[1].startswith("### ingest: runs\n\n| ingest_s |") and nested[2].startswith("## runs: probe")


def test_the_pipelines_report_has_a_table_per_corpus() -> None:
    metrics = {"hit_rate@1": 0.47, "hit_rate@10": 0.9, "mrr@10": 0.62, "recall@10": 0.8, "leak_rate@10": 0.0}
    data = {
        "quick": False,
        "embedders": ["e5"],
        "default": {"pipeline": "hybrid", "embedder": "e5"},
        "corpora": {
            "acme-zh@2": {
                "queries": 252,
                "chunks": 1581,
                "results": {
                    "e5": {"bm25": {**metrics, "ms_per_query": 8.9}, "hybrid": {**metrics, "ms_per_query": 70.1}}
                },
                "chunks_per_s": {"e5": 3.7},
            }
        },
    }
    md = report.render("bench_pipelines", data)
    assert "## acme-zh@2\n\n252 queries, 1,581 chunks." in md
    assert "| e5 | hybrid (default) | 0.47 | 0.9 | 0.62 | 0.8 | 0 | 70.1 | 1 | 3.7 |" in md


def test_the_fusion_report_has_each_direction_and_the_best_settings() -> None:
    default = {"k": 60.0, "w_dense": 1.0, "w_bm25": 1.0, "depth": 50}
    chosen = {"k": 1.0, "w_dense": 1.0, "w_bm25": 2.0, "depth": 50}
    means = {"hit_rate@1": 0.4, "hit_rate@10": 0.9, "mrr@10": 0.6}
    paired = {m: {"n": 252, "diff": 0.1, "ci": [0.05, 0.14], "p_value": 0.0002} for m in means}
    grid = [{**chosen, **means}, {**default, **means, "mrr@10": 0.5}]
    data = {
        "quick": False,
        "embedder": "e5",
        "top_k": 10,
        "default": default,
        "grid": {"k": [1, 60], "w_bm25 (w_dense=1)": [1.0, 2.0], "depth": [50]},
        "criterion": "max MRR@10",
        "corpora": {"acme-en@2": {"queries": 252, "chunks": 1400, "grid": grid}},
        "directions": [
            {
                "tuned_on": "acme-en@2",
                "held_out": "acme-zh@2",
                "chosen": chosen,
                "tuning_set": {"default": means, "chosen": means},
                "held_out_set": {"default": means, "chosen": means},
                "held_out_paired": paired,
            }
        ],
        "rule": "change the default only when ...",
        "change_default": True,
    }
    md = report.render("bench_fusion", data)
    assert "## Tuned on acme-en@2, tested on acme-zh@2\n\nChosen: k = 1, w_dense = 1, w_bm25 = 2, depth = 50." in md
    assert "| mrr@10 | 0.6 | 0.6 | 0.6 | 0.6 | +0.100 | +0.050 – +0.140 | 0.0002 |" in md
    assert "## Best settings on acme-en@2 by MRR@10" in md and "| default setting | k = 60," in md


@pytest.mark.parametrize("name", ["bench_growth", "bench_recall_http", "bench_workers"])
def test_the_committed_results_render_every_figure_group(name: str) -> None:
    data = json.loads((report.RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    md = report.render(name, data)
    headings = {
        "bench_growth": ["## By scale"],
        "bench_recall_http": ["## Latency, one request in flight", "## Throughput of one server process"],
        "bench_workers": ["## Throughput", "## CPU per request, one worker", "## Dense recall in process"],
    }[name]
    assert all(h in md for h in headings) and "## Targets" in md and "(rows)" not in md


def test_every_benchmark_writes_its_report() -> None:
    for name in report.benchmark_names():
        source = (REPO / "benchmarks" / f"{name}.py").read_text(encoding="utf-8")
        assert f'write_report("{name}"' in source or f'report_checks("{name}"' in source, name
        assert "results/" not in source.replace(f"benchmarks/results/{name}.json", ""), name  # no writer of its own


def test_the_committed_reports_match_their_results() -> None:
    """A report is what its JSON renders to (or, without a JSON, the page that says how to measure it)."""
    stale = []
    for name in report.benchmark_names():
        md = report.RESULTS / f"{name}.md"
        source = report.RESULTS / f"{name}.json"
        want = (
            report.render(name, json.loads(source.read_text(encoding="utf-8")))
            if source.exists()
            else report.render_missing(name)
        )
        if not md.exists() or md.read_text(encoding="utf-8") != want:
            stale.append(name)
    assert not stale, f"stale reports {stale}: run python -m benchmarks.report {' '.join(stale)}"


def test_the_benchmarks_page_links_every_report_and_copies_no_figure() -> None:
    page = page_text("benchmarks.md")
    for name in report.benchmark_names():
        assert f"| `{name}` |" in page and f"(../benchmarks/results/{name}.md)" in page, name


def test_rerendering_names_benchmarks_and_refuses_unknown_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bench_scoring.json").write_text(json.dumps({"queries": 10, "wall_s": {"score": 0.5}}))
    [written] = report.rerender(["bench_scoring"], tmp_path)
    assert "| queries | 10 |" in written.read_text(encoding="utf-8")
    [missing] = report.rerender(["bench_ann"], tmp_path)
    assert "**Not measured yet**" in missing.read_text(encoding="utf-8")
    assert (
        report.main(["no_such_bench"]) == 2 and "unknown benchmark(s): bench_no_such_bench" in capsys.readouterr().err
    )
