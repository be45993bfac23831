"""``drivebench serve --fault`` parsing and ``drivebench demo --fault`` (clean vs faulted table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.cli.serve import _parse_faults


def test_serve_fault_option_parses_and_refuses_unknown_faults() -> None:
    faults = _parse_faults(["leaky-acl,latency:delay_ms=5"])
    assert [f.name for f in faults] == ["leaky-acl", "latency"]
    with pytest.raises(typer.BadParameter, match="unknown fault"):
        _parse_faults(["leaky"])


def test_serve_help_lists_the_fault_option() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--fault" in result.output


@pytest.mark.slow
@pytest.mark.e2e
def test_demo_reports_the_damage_beside_the_clean_run(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    history = tmp_path / "history.sqlite3"
    args = ["demo", "--corpus", "seed", "--fault", "citation-drop:share=0.8", "--history", str(history), "--k", "1,10"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "clean vs --fault citation-drop" in result.output and "source_coverage" in result.output
    summary = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert summary["mode"] == "answer" and summary["injected"]["citation-drop"] > 0
    rows = {r["metric"]: r for r in summary["headline"]}
    assert rows["source_coverage"]["faulted"] < rows["source_coverage"]["clean"]
    assert rows["leak_rate@10"]["faulted"] == rows["leak_rate@10"]["clean"] == 0.0
    for side in ("clean", "faulted"):
        assert (out / side / "metrics.json").is_file() and (out / side / "run.jsonl").is_file()
        # the fault demo writes its reports like the clean demo, faults in every header
        md = (out / side / "report.md").read_text(encoding="utf-8")
        html = (out / side / "report.html").read_text(encoding="utf-8")
        metrics = json.loads((out / side / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["run_info"]["corpus_version"] == "seed@1"
        if side == "faulted":
            assert metrics["run_info"]["faults"] == ["citation-drop:seed=0:share=0.8"]
            assert "FAULTS INJECTED: citation-drop:seed=0:share=0.8" in md and 'id="run-faults"' in html
        else:
            assert metrics["run_info"]["faults"] == [] and "Faults: none" in md and "FAULTS INJECTED" not in html
    from drivebench.evaluator.history import HistoryStore

    runs = HistoryStore(history).runs()
    assert len(runs) == 2 and {r.corpus_version for r in runs} == {"seed@1"}
