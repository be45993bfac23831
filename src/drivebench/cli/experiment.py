"""``drivebench experiment FILE.toml``: a grid of simulator configurations against the same eval sets, each compared
with the baseline, and the article's diagnosis (``drivebench.experiments.grid``; docs/experiments.md).

Exit codes: 0 every configuration ran and none leaked; 1 a configuration's run failed (errors, every result list
empty) or returned a document its asker may not preview; 2 a bad experiment file (unknown key, bad value, unknown
corpus, pipeline or embedder, an eval set that does not fit its corpus); 130 stopped early (Ctrl-C): what is done is
kept in the results directory and the same command resumes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.markup import escape

from drivebench.cli.common import err_console, info, progress_bar, quiet_libraries


def experiment(
    file: Path = typer.Argument(..., help="The experiment file (TOML): [experiment], [baseline], [[variant]], [grid]."),
    results: Path | None = typer.Option(
        None,
        "--results",
        "-o",
        help="Results directory: one run per configuration and the reports (default: [experiment] results, else "
        "experiments/results/NAME beside the file). Re-running skips the configurations already complete there.",
    ),
) -> None:
    """Run a grid of simulator configurations (pipeline, embedder, extract/chunking, top_k, answers, and any other
    SimConfig field) against the same eval sets in process, and compare each with the baseline: per metric the
    value, its CI, the paired difference to the baseline with its CI and Holm-adjusted p-value; the article's
    diagnosis rules; and the lever that moved Hit Rate, Source Coverage and Multi-hop Completeness most.
    Writes experiment.json, experiment.md and experiment.html. Exit codes: 0 ok; 1 a configuration failed or
    leaked; 2 bad file; 130 interrupted (re-run to resume)."""
    from drivebench.cli import run_state as rs
    from drivebench.evaluator.runner import Interrupt
    from drivebench.experiments.grid import EXIT_INTERRUPTED, analyse, load_spec, run_experiment
    from drivebench.experiments.grid_report import write_reports

    quiet_libraries()
    spec = load_spec(file)
    out_dir = results or spec.results or (file.parent / "results" / spec.name)
    interrupt = Interrupt()
    with rs.stop_on_signals(interrupt.trigger, rs.announce), progress_bar() as bar:
        task = bar.add_task(f"{len(spec.configs)} configs x queries", total=None)

        def step(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what or "configs x queries")

        @contextlib.contextmanager
        def loading(what: str) -> Iterator[None]:  # one live display at a time: the bar says what is loading
            bar.update(task, description=what)
            yield

        run = run_experiment(spec, out_dir, progress=step, loading=loading, interrupt=interrupt)
    payload = analyse(run)
    paths = write_reports(payload, out_dir)
    for ds in payload["datasets"]:
        for d in ds.get("diagnosis", []):
            moved = ds["moved_most"]
            key = {"Hit Rate": "hit_rate", "Source Coverage": "source_coverage"}.get(
                d["metric"], "multi_hop_completeness"
            )
            said = f"moved most by {d['moved']}" if moved[key]["config"] else d["moved"]
            err_console.print(f"[bold]{escape(ds['corpus'])}[/] {d['metric']}: {escape(said)}", highlight=False)
    skipped = sum(1 for ds in payload["datasets"] for r in ds["runs"] if not r["ran"] and r["state"] == "complete")
    info(
        f"{len(run.ran)} runs, {skipped} reused, {run.index_builds} index builds in {run.elapsed_s:.1f} s; "
        f"reports: {paths['md']} {paths['html']} {paths['json']}"
    )
    if payload["exit_code"] == EXIT_INTERRUPTED:
        info("stopped early: re-run the same command to finish (complete configurations are kept)")
    raise typer.Exit(payload["exit_code"])
