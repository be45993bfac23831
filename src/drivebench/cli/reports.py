"""``drivebench eval report|trend|compare|history|export-trec``, and the report/history step that
``drivebench demo`` and ``drivebench eval run`` end with (``finish_run``).

Registered on the ``eval`` sub-app by ``register(app)``.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from drivebench.cli.common import console, err_console

HISTORY_ENV = "DRIVEBENCH_HISTORY"
CONFIG_META = "drivebench.cli.config"  # ctx.meta key: the config file the command loaded (set by the main callback)
_OFF = {"", "none", "off", "no", "-"}

HistoryOpt = typer.Option(
    None,
    "--history",
    envvar=HISTORY_ENV,
    help="History SQLite file (default: reports/history.sqlite3 beside the project's drivebench.toml, else under the "
    "current directory; 'none' to not record).",
    show_default=False,
)

LOWER_IS_BETTER = ("leak_rate", "answer_leak_rate", "stale_version_hit_rate", "trashed_hit_rate", "latency_ms")


def history_path(value: str | Path | None) -> Path | None:
    """The history file to use: ``value`` (``--history`` or ``$DRIVEBENCH_HISTORY``), else the default; ``None`` when
    recording is turned off.

    The default is one history per project: ``reports/history.sqlite3`` in the folder of the config file in force
    (the nearest drivebench.toml, or pyproject.toml with [tool.drivebench], from the current directory upwards, or
    ``--config``), so runs started from any subfolder land in one file; without a config file it is
    ``reports/history.sqlite3`` under the current directory."""
    if value is None:
        return default_history_path()
    if str(value).strip().lower() in _OFF:
        return None
    return Path(value)


def default_history_path() -> Path:
    """``reports/history.sqlite3`` in the folder of the config file in force, else under the current directory."""
    from drivebench.evaluator.history import DEFAULT_HISTORY

    config = project_config()
    return DEFAULT_HISTORY if config is None else config.parent / DEFAULT_HISTORY


def project_config() -> Path | None:
    """The config file in force: the one the running command loaded (``--config`` included; ``None`` for
    ``--config none``), else the nearest one from the current directory upwards."""
    import click

    from drivebench.cli.config import find_config

    ctx = click.get_current_context(silent=True)
    if ctx is not None and CONFIG_META in ctx.meta:
        loaded = ctx.meta[CONFIG_META]
        return None if loaded is None else Path(loaded).resolve()
    return find_config()


def attach_previous(result: dict[str, Any], history: str | Path | None = None) -> dict[str, Any]:
    """Store ``result["previous_run"]``: the main figure against the previous run with the same target, corpus
    version and label in the history (see ``history.compare_with_previous``). Called before metrics.json and the
    reports are written, so each of them (and a report re-rendered later) carries the comparison. A history that
    cannot be read gives ``no history``, never a failed run."""
    from drivebench.evaluator.history import HistoryStore, compare_with_previous

    path = history_path(history)
    try:
        result["previous_run"] = compare_with_previous(result, None if path is None else HistoryStore(path))
    except (OSError, sqlite3.Error) as exc:
        err_console.print(f"[yellow]could not read the history at {path}: {exc}[/]")
        result["previous_run"] = compare_with_previous(result, None)
    return result


def finish_run(
    result: dict[str, Any],
    out_dir: Path,
    history: str | Path | None = None,
    out: Any = None,
    *,
    details: bool = True,
) -> int | None:
    """Write report.md/report.html beside metrics.json, print the detail tables (unless ``details`` is
    False), record the run.

    Returns the history run id (``None`` when history is off). A history that cannot be written is
    reported on stderr and does not fail the run: the metrics and reports are already on disk.
    """
    from drivebench.evaluator.history import HistoryStore
    from drivebench.evaluator.report.outputs import write_reports
    from drivebench.evaluator.report.terminal import print_details

    if "previous_run" not in result:  # a caller that did not attach it before writing metrics.json
        attach_previous(result, history)
        if (Path(out_dir) / "metrics.json").exists():
            from drivebench.evaluator.evaluate import write_metrics

            write_metrics(result, Path(out_dir) / "metrics.json")
    if details:
        print_details(result, out or console)
    md, html = write_reports(result, out_dir)
    err_console.print(f"wrote {md} and {html}")
    path = history_path(history)
    if path is None:
        return None
    try:
        run_id = HistoryStore(path).record(result, run_dir=out_dir)
    except (OSError, sqlite3.Error, ValueError, TypeError) as exc:
        err_console.print(f"[yellow]could not record the run in {path}: {exc}[/]")
        return None
    failed = (result.get("status") or {}).get("state") == "failed"
    from drivebench.evaluator.history import run_scope

    scope = run_scope(result)
    mark = [m for m, on in (("FAILED", failed), ("PARTIAL", scope == "partial"), ("subset", scope == "subset")) if on]
    where = path.resolve()  # absolute: the default depends on where the project's config file is
    err_console.print(
        f"recorded as run {run_id} in {where}" + (f" (marked {', '.join(mark)})" if mark else ""), soft_wrap=True
    )
    return run_id


def _short(value: str | None, n: int = 12) -> str:
    if not value:
        return "—"
    return value.split(":", 1)[-1][:n]


def _load_ref(ref: str, history: Path | None, include_failed: bool = False) -> tuple[dict[str, Any], str]:
    """A metrics dict from a run directory, a metrics.json path, or a history reference.

    A failed run (``status.state == "failed"``) is refused unless ``include_failed``; ``latest`` and
    ``latest~N`` skip failed runs unless ``include_failed``."""
    from drivebench.evaluator.history import HistoryStore, run_status
    from drivebench.evaluator.report.outputs import load_metrics

    path = Path(ref)
    if path.exists():
        try:
            result, name = load_metrics(path), str(path)
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(str(exc)) from None
    else:
        store = HistoryStore(history or default_history_path())
        if not store.path.exists():
            raise typer.BadParameter(f"{ref!r} is not a run directory, and there is no history at {store.path}")
        try:
            run_id = store.resolve(ref, include_failed=include_failed)
            result, name = store.load(run_id), f"run {run_id}"
        except (KeyError, ValueError) as exc:
            raise typer.BadParameter(f"{ref!r} is neither a run directory nor a history run: {exc}") from None
    if run_status(result) == "failed" and not include_failed:
        reason = (result.get("status") or {}).get("reason", "")
        raise typer.BadParameter(f"{name} is a FAILED run ({reason}); pass --include-failed to use it anyway")
    return result, name


def report_cmd(
    run_dir: Path = typer.Argument(..., exists=True, help="A run directory (with metrics.json) or a metrics.json."),
    out: Path | None = typer.Option(None, "--out", help="Where to write report.md/report.html (default: beside it)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the tables."),
) -> None:
    """(Re)render report.md and report.html from a metrics.json, and print its tables."""
    from drivebench.evaluator.report.outputs import load_metrics, write_reports
    from drivebench.evaluator.report.terminal import print_details, print_summary

    try:
        result = load_metrics(run_dir)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    target = out or (run_dir if run_dir.is_dir() else run_dir.parent)
    md, html = write_reports(result, target)
    if not quiet:
        print_summary(result, console)
        print_details(result, console, strata=True)
    err_console.print(f"wrote {md} and {html}")


def trend_cmd(
    metric: str = typer.Option("hit_rate@10", "--metric", "-m", help="Metric name, e.g. hit_rate@10, leak_rate@5."),
    history: str | None = typer.Option(None, "--history", envvar=HISTORY_ENV, help="History SQLite file."),
    evalset_hash: str | None = typer.Option(None, "--evalset-hash", help="Only runs on this eval set."),
    target: str | None = typer.Option(None, "--target", help="Only runs of this target."),
    last: int | None = typer.Option(None, "--last", min=1, help="Only the last N runs of each line."),
    ascii_only: bool = typer.Option(False, "--ascii", help="ASCII sparkline instead of Unicode blocks."),
    include_failed: bool = typer.Option(False, "--include-failed", help="Also show failed runs (left out by default)."),
    json_out: str | None = typer.Option(None, "--json", help="Write the trend as JSON to this file ('-' = stdout)."),
    svg_out: Path | None = typer.Option(
        None, "--svg", help="Also write the trend as an SVG line chart (gates dashed, failed runs red) to this file."
    ),
) -> None:
    """A metric over the recorded runs: a table and one sparkline per line, a line being the runs of one target on
    one corpus version under one --label (the article recommends monthly runs). The gates recorded on the metric
    are stated as thresholds; runs that failed (the run, a gate, or a leak) are marked ✗."""
    from drivebench.evaluator.history import MONTHLY_DAYS, HistoryStore, parse_when, sparkline, trend_lines
    from drivebench.evaluator.report.terminal import fit_table
    from drivebench.evaluator.trends import (
        FAILED_MARK,
        FAILED_MARK_ASCII,
        metric_gates,
        trend_chart,
        trend_failures,
    )

    path = history_path(history) or default_history_path()
    assert path is not None
    if not path.exists():
        raise typer.BadParameter(f"no history at {path}: run `drivebench demo` or `drivebench eval run` first")
    store = HistoryStore(path)
    names = store.metric_names()
    if metric not in names:
        close = difflib.get_close_matches(metric, names, n=5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise typer.BadParameter(f"no metric {metric!r} in {path}.{hint}")
    lines = trend_lines(
        store.trend(metric, evalset_hash=evalset_hash, target=target, include_failed=include_failed), last
    )
    left_out = 0
    if not include_failed:
        left_out = len(store.trend(metric, evalset_hash=evalset_hash, target=target, include_failed=True)) - len(
            store.trend(metric, evalset_hash=evalset_hash, target=target)
        )
        if left_out:
            err_console.print(
                f"[yellow]{left_out} failed, partial or subset run(s) left out (--include-failed shows them)[/]"
            )
    points = sorted((p for line in lines for p in line.points), key=lambda p: (p.run.when, p.run.id))
    line_of = {p.run.id: i for i, line in enumerate(lines, 1) for p in line.points}
    failures = trend_failures(points, store.leak_counts([p.run.id for p in points]))
    gates = metric_gates(metric, [p.run for p in points])
    where = path.resolve()
    if svg_out is not None and points:
        svg_out.parent.mkdir(parents=True, exist_ok=True)
        chart = trend_chart("trend", metric, lines, gates, failures)  # inline SVG; a file names its namespace
        svg_out.write_text(chart.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1) + "\n", "utf-8")
        err_console.print(f"wrote {svg_out}")
    if json_out is not None:

        def point(p: Any) -> dict[str, Any]:
            return {
                **_run_dict(p.run),
                "value": p.value,
                "ci": list(p.ci) if p.ci else None,
                "failed": p.run.id in failures,
                "failure": failures.get(p.run.id),
            }

        payload = {
            "metric": metric,
            "history": str(where),
            "gates": [g.as_dict() for g in gates],
            "failed_runs_left_out": left_out,
            "points": [point(p) for p in points],
            "groups": [
                {
                    "target": line.target,
                    "corpus_version": line.corpus_version,
                    "label": line.label,
                    **_line_stats(line.points),
                    "points": [point(p) for p in line.points],
                }
                for line in lines
            ],
        }
        _write_json(payload, json_out)
        if json_out == "-":
            return
    if not points:
        err_console.print("no runs match")
        raise typer.Exit(1)
    lower_better = metric.startswith(LOWER_IS_BETTER)
    several = len(lines) > 1
    varied_evalset = len({p.run.evalset_hash for p in points}) > 1
    whens = {p.run.id: parse_when(p.run.when) for p in points}
    known = [w for w in whens.values() if w]
    same_day = len({w.date() for w in known}) < len(known)
    table = Table(title=f"{metric} over {len(points)} run(s)", show_edge=False)
    columns: list[tuple[str, JustifyMethod]] = [("Run", "right"), ("When", "left")]
    columns += [("Line", "left")] if several else []
    columns += [("Evalset", "left")] if varied_evalset else []
    columns += [("Snap", "left"), ("Value", "right"), ("95% CI", "right"), ("Δ", "right"), ("Gap", "right")]
    for col, justify in columns:
        table.add_column(col, justify=justify, overflow="fold")
    # Δ and Gap are against the previous run of the same line: another target, corpus or label is no baseline
    prev_value: dict[int, float] = {}
    prev_when: dict[int, datetime] = {}
    for p in points:
        n, when = line_of[p.run.id], whens[p.run.id]
        delta = "—"
        if p.value is not None and n in prev_value:
            d = p.value - prev_value[n]
            good = (d < 0) if lower_better else (d > 0)
            style = "" if abs(d) < 1e-12 else ("green" if good else "red")
            delta = f"[{style}]{d:+.3f}[/]" if style else f"{d:+.3f}"
        gap = "—"
        if when and n in prev_when:
            days = (when - prev_when[n]).total_seconds() / 86400
            gap = f"[yellow]{days:.0f}[/]" if days > MONTHLY_DAYS else f"{days:.0f}"
        failed_mark = (FAILED_MARK_ASCII if ascii_only else FAILED_MARK) if p.run.id in failures else ""
        cells = [
            str(p.run.id) + (f" [red]{failed_mark}[/]" if failed_mark else ""),
            when.strftime("%Y-%m-%d %H:%M" if same_day else "%Y-%m-%d") if when else p.run.when,
        ]
        cells += [f"L{n}"] if several else []
        cells += [_short(p.run.evalset_hash, 7)] if varied_evalset else []
        cells += [
            _short(p.run.snapshot, 6),
            "—" if p.value is None else f"{p.value:.3f}",
            f"{p.ci[0]:.2f}–{p.ci[1]:.2f}" if p.ci else "—",
            delta,
            gap,
        ]
        table.add_row(*cells)
        if p.value is not None:
            prev_value[n] = p.value
        if when:
            prev_when[n] = when
    if several:
        table.caption = "Lines below · Δ, Gap (days): since the line's previous run"
    else:
        table.caption = (
            _line_key(lines[0])
            + (f" · eval set {_short(points[0].run.evalset_hash)}" if not varied_evalset else "")
            + " · Gap: days since the previous run"
        )
    console.print(fit_table(table, console))
    mark = FAILED_MARK_ASCII if ascii_only else FAILED_MARK
    for g in gates:
        console.print(
            f"gate {g.expr}: threshold {g.threshold:g}, a run passes at {g.passes} (checked on {len(g.runs)} of "
            f"{len(points)} run(s))",
            highlight=False,
            markup=False,
        )
    for run_id, why in failures.items():
        console.print(f"{mark} run {run_id} failed: {why}", highlight=False, markup=False)
    for n, line in enumerate(lines, 1):
        values = [p.value for p in line.points]
        stats = _line_stats(line.points)
        text = (
            f"min {stats['min']:.3f} · max {stats['max']:.3f} · last {stats['last']:.3f}"
            if stats["last"] is not None
            else "no values"
        )
        head = f"L{n} {_line_key(line)}\n   " if several else ""
        console.print(
            f"{head}{metric}  {sparkline(values, ascii_only=ascii_only)}  ({text}, {len(values)} run(s))",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        failed_here = "".join(mark if p.run.id in failures else " " for p in line.points)
        if failed_here.strip():  # under the sparkline, the failed runs' columns
            pad = " " * (len(metric) + 2 + (3 if several else 0))
            console.print(f"{pad}{failed_here}  ({mark}: failed run)", highlight=False, markup=False, soft_wrap=True)
    console.print(f"history: {where}", highlight=False, markup=False)
    if varied_evalset:
        err_console.print("[yellow]runs on different eval sets are mixed here; --evalset-hash picks one[/]")
    last_when = max(known, default=None)
    if last_when:
        age = (datetime.now(UTC) - last_when).total_seconds() / 86400
        if age > MONTHLY_DAYS:
            err_console.print(
                f"[yellow]the last run is {age:.0f} days old: the article recommends re-running monthly[/]"
            )


def _line_key(line: Any) -> str:
    """``target T · corpus acme@3 · label nightly`` (``—`` for what a run did not record)."""
    return f"target {line.target or '—'} · corpus {line.corpus_version or '—'} · label {line.label or '—'}"


def _line_stats(points: list[Any]) -> dict[str, float | None]:
    present = [p.value for p in points if p.value is not None]
    if not present:
        return {"min": None, "max": None, "last": None}
    return {"min": min(present), "max": max(present), "last": present[-1]}


def compare_cmd(
    runs: list[str] = typer.Argument(
        ...,
        help="Two or more runs, the FIRST is the baseline: run directories, metrics.json files or history runs "
        "(12, latest, latest~1).",
    ),
    history: str | None = typer.Option(None, "--history", envvar=HISTORY_ENV, help="History SQLite file."),
    metric: list[str] = typer.Option([], "--metric", "-m", help="Only these metrics (repeatable)."),
    json_out: str | None = typer.Option(None, "--json", help="Also write the comparison as JSON here ('-' = stdout)."),
    markdown_out: str | None = typer.Option(
        None, "--markdown", help="Also write the comparison as Markdown here ('-' = stdout), a table per metric group."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and randomization test."),
    include_failed: bool = typer.Option(False, "--include-failed", help="Allow failed runs (refused by default)."),
    allow_mixed_corpus: bool = typer.Option(
        False, "--allow-mixed-corpus", help="Compare runs scored on different corpus versions (refused by default)."
    ),
) -> None:
    """Every run against the first (the baseline), per metric: paired difference run − baseline, 95% bootstrap
    CI, randomization p-value and its Holm adjustment over the runs compared. Rows are grouped by metric family:
    retrieval, multi-hop, answers, safety, cost and latency.

    Exit codes: 0 done; 2 usage error (fewer than two runs, unknown run, failed run without --include-failed,
    runs over different corpus versions without --allow-mixed-corpus)."""
    from drivebench.errors import DrivebenchError
    from drivebench.evaluator.compare_runs import (
        add_groups,
        compare_markdown,
        compare_runs,
        corpus_mismatch,
        corpus_versions,
    )

    if len(runs) < 2:
        raise DrivebenchError(
            f"eval compare needs at least two runs, got {len(runs)}",
            hint="give the baseline first, then one or more runs: drivebench eval compare latest~1 latest",
        )
    hist = history_path(history)
    loaded = [_load_ref(ref, hist, include_failed) for ref in runs]
    results, names = [r for r, _ in loaded], [n for _, n in loaded]
    versions = corpus_versions(results)
    if corpus_mismatch(results):
        listing = ", ".join(f"{n}: {v or 'unknown'}" for n, v in zip(names, versions, strict=True))
        if not allow_mixed_corpus:
            raise DrivebenchError(
                f"the runs were scored on different corpus versions ({listing}): their numbers do not compare",
                hint="re-run on one corpus version, or pass --allow-mixed-corpus to compare anyway",
            )
        err_console.print(f"[yellow]comparing runs over different corpus versions ({listing})[/]")
    hashes = [(r.get("run_info") or {}).get("evalset_hash") for r in results]
    for name, h in zip(names[1:], hashes[1:], strict=True):
        if hashes[0] and h and h != hashes[0]:
            err_console.print(
                f"[yellow]{name} ran another eval set than the baseline ({_short(h)} vs {_short(hashes[0])})[/]"
            )
    for name, r in zip(names, results, strict=True):
        if not r.get("per_query"):
            raise typer.BadParameter(f"{name} has no per-query values (per_query in metrics.json)")
    from drivebench.cli.common import counting_bar

    # ~0.1 s per run x metric (bootstrap + 10,000 sign flips): a counted bar with an ETA
    bar, step = counting_bar(f"comparing {len(results) - 1} run(s) with the baseline (bootstrap + randomization)")
    with bar:
        comparisons = compare_runs(results, seed=seed, progress=step)
    if metric:
        unknown = sorted({m for m in metric for c in comparisons if m not in c["metrics"]})
        if unknown:
            raise typer.BadParameter(f"not comparable here: {', '.join(unknown)}")
        for c in comparisons:
            c["metrics"] = {m: c["metrics"][m] for m in metric}
    n_base = len(results[0]["per_query"])
    for name, r, c in zip(names[1:], results[1:], comparisons, strict=True):
        if c["queries"] < max(n_base, len(r["per_query"])):
            err_console.print(
                f"[yellow]only {c['queries']} queries are in both {name} and the baseline "
                f"({len(r['per_query'])} vs {n_base})[/]"
            )
    payload = {
        "baseline": names[0],
        "runs": names,
        "corpus_versions": versions,
        "seed": seed,
        "comparisons": [{"run": n, **c} for n, c in zip(names[1:], comparisons, strict=True)],
    }
    add_groups(payload)
    if json_out == "-":
        print(json.dumps(payload, ensure_ascii=False, indent=1))
        return
    markdown = compare_markdown(payload, LOWER_IS_BETTER) if markdown_out else None
    if markdown_out == "-":
        print(markdown)
        return
    for i, table in enumerate(compare_tables(payload, console.width)):
        if i:
            console.print()
        console.print(table)
    console.print(
        "green/red: Holm-adjusted p < 0.05 and the CI excludes 0 (better/worse than the baseline)", style="dim"
    )
    if markdown_out and markdown is not None:
        Path(markdown_out).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_out).write_text(markdown + "\n", encoding="utf-8")
        err_console.print(f"wrote {markdown_out}")
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        err_console.print(f"wrote {json_out}")


def _p_text(p: float | None) -> str:
    return "—" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


COMPACT_BELOW = 110  # columns: a narrower terminal gets the compare table's compact layout


def compare_tables(payload: dict[str, Any], width: int = 200) -> list[Table]:
    """One table per metric group (``payload["families"]``, see ``compare_runs.add_groups``), titled by the group;
    a row per (metric, run): baseline mean, run mean, run − baseline, 95% CI, p, Holm p, n. Below
    ``COMPACT_BELOW`` columns the figures share cells (means, Δ over its CI, p over Holm p) so that nothing is cut;
    every column wraps."""
    comparisons = payload["comparisons"]
    compact = width < COMPACT_BELOW
    # in the compact layout long run names (directories) are numbered, the numbers listed under the last table
    numbered = compact and any(len(str(c["run"])) > 12 for c in comparisons)
    run_name = {c["run"]: (f"#{i}" if numbered else str(c["run"])) for i, c in enumerate(comparisons, 1)}
    if compact:
        columns = [("Metric", None), ("Run", None), ("baseline\n→ run", 7), ("Δ\n95% CI", 8), ("p\nHolm", 5)]
    else:
        columns = [("Metric", None), ("Run", None), ("baseline", 8), ("run", 5), ("Δ", 6), ("95% CI", 16)]
        columns += [("p", 6), ("p (Holm)", 8)]
    columns.append(("n", None))
    tables = []
    for i_fam, fam in enumerate(payload["families"]):
        title = fam["heading"]
        if i_fam == 0:
            title = f"baseline = {payload['baseline']}  ·  Δ = run − baseline\n\n{title}"
        table = Table(title=title, title_justify="left", show_edge=False)
        for col, min_width in columns:
            justify: JustifyMethod = "left" if col in ("Metric", "Run") else "right"
            table.add_column(col, justify=justify, overflow="fold", min_width=min_width)
        if numbered and i_fam == len(payload["families"]) - 1:
            table.caption = "  ".join(f"{run_name[c['run']]} = {c['run']}" for c in comparisons)
            table.caption_justify = "left"
        for name in fam["metrics"]:
            for i, c in enumerate(comparisons):
                r = c["metrics"].get(name) or {}
                last = i == len(comparisons) - 1
                label = name if i == 0 else ""
                if r.get("n", 0) == 0:
                    table.add_row(label, run_name[c["run"]], *["—"] * (len(columns) - 3), "0", end_section=last)
                    continue
                diff, ci, p = r["diff"], r.get("ci"), r.get("p_value")
                p_adj = r.get("p_holm", p)
                significant = ci is not None and p_adj is not None and p_adj < 0.05 and (ci[0] > 0 or ci[1] < 0)
                good = (diff < 0) if name.startswith(LOWER_IS_BETTER) else (diff > 0)
                style = ("green" if good else "red") if significant else ""
                d = f"{diff:+.3f}"
                d = f"[{style}]{d}[/]" if style else d
                ci_text = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "—"
                if compact:
                    figures = [
                        f"{r['mean_b']:.3f}\n→ {r['mean_a']:.3f}",
                        f"{d}\n{escape(ci_text)}",
                        f"{_p_text(p)}\n{_p_text(p_adj)}",
                    ]
                else:
                    figures = [f"{r['mean_b']:.3f}", f"{r['mean_a']:.3f}", d, escape(ci_text)]
                    figures += [_p_text(p), _p_text(p_adj)]
                table.add_row(label, run_name[c["run"]], *figures, str(r["n"]), end_section=last)
        tables.append(table)
    return tables


def history_cmd(
    history: str | None = typer.Option(None, "--history", envvar=HISTORY_ENV, help="History SQLite file."),
    metric: str = typer.Option("hit_rate@10", "--metric", "-m", help="Metric shown per run."),
    json_out: str | None = typer.Option(None, "--json", help="Write the runs as JSON to this file ('-' = stdout)."),
) -> None:
    """List the recorded runs (ids for `eval compare`), failed runs marked."""
    from rich.markup import escape

    from drivebench.evaluator.history import HistoryStore
    from drivebench.evaluator.report.terminal import fit_table

    path = history_path(history) or default_history_path()
    assert path is not None
    if not path.exists():
        raise typer.BadParameter(f"no history at {path}")
    points = HistoryStore(path).trend(metric, include_failed=True)
    if json_out is not None:
        _write_json(
            {"history": str(path), "metric": metric, "runs": [{**_run_dict(p.run), "value": p.value} for p in points]},
            json_out,
        )
        if json_out == "-":
            return
    table = Table(title=f"Runs in {path.resolve()}", show_edge=False)
    columns: tuple[str, ...] = ("Run", "Status", "Verdict", "When", "Target", "Label", "Corpus", "Eval set")
    columns += ("Snapshot", metric, "Directory")
    for col in columns:
        table.add_column(col, justify="right" if col in ("Run", metric) else "left", overflow="fold")
    for p in points:
        table.add_row(
            str(p.run.id),
            _status_cell(p.run),
            _verdict_cell(p.run),
            p.run.when[:16].replace("T", " "),
            p.run.target or "—",
            escape(p.run.label) if p.run.label else "—",
            p.run.corpus_version or p.run.corpus or "—",
            _short(p.run.evalset_hash, 8),
            _short(p.run.snapshot, 8),
            "—" if p.value is None else f"{p.value:.3f}",
            p.run.run_dir or "—",
        )
    console.print(fit_table(table, console))  # a run per block when the columns do not fit the terminal


def _status_cell(run: Any) -> str:
    """``FAILED``, ``PARTIAL`` (stopped early), ``subset`` (--only-failed) or ``ok``."""
    if run.failed:
        return "[red]FAILED[/]"
    scope = getattr(run, "scope", None)
    return "[red]PARTIAL[/]" if scope == "partial" else "[yellow]subset[/]" if scope == "subset" else "ok"


def _verdict_cell(run: Any) -> str:
    """``passed``, ``FAILED hit_rate@10<0.8`` (the failed gates), or ``—`` for a run recorded without a verdict."""
    from rich.markup import escape

    if run.verdict == "failed":
        return "[red]FAILED[/] " + escape(", ".join(str(g.get("expr")) for g in run.failed_gates))
    return run.verdict or "—"


def _run_dict(run: Any) -> dict[str, Any]:
    return {
        "id": run.id,
        "status": run.status,
        "scope": getattr(run, "scope", None),
        "verdict": run.verdict,
        "failed_gates": [g.get("expr") for g in run.failed_gates],
        "when": run.when,
        "target": run.target,
        "label": run.label,
        "corpus": run.corpus,
        "corpus_version": run.corpus_version,
        "evalset_hash": run.evalset_hash,
        "snapshot": run.snapshot,
        "run_dir": run.run_dir,
    }


def _write_json(payload: Any, json_out: str) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    if json_out == "-":
        print(text)
        return
    Path(json_out).parent.mkdir(parents=True, exist_ok=True)
    Path(json_out).write_text(text + "\n", encoding="utf-8")
    err_console.print(f"wrote {json_out}")


def export_trec_cmd(
    evalset: Path = typer.Option(..., "--evalset", exists=True, dir_okay=False, help="Eval set JSONL."),
    run: Path = typer.Option(..., "--run", exists=True, help="Run JSONL (or a run directory with run.jsonl)."),
    out: Path = typer.Option(..., "--out", help="Directory for run.trec and qrels.txt."),
    tag: str = typer.Option("drivebench", "--tag", help="Run tag (last column of run.trec)."),
) -> None:
    """Write run.trec and qrels.txt to cross-check with trec_eval (use `trec_eval -c`)."""
    from drivebench.evaluator.trec import export_trec
    from drivebench.formats.evalset import load_evalset, load_run

    run_file = run / "run.jsonl" if run.is_dir() else run
    try:
        run_path, qrels_path = export_trec(load_evalset(evalset), load_run(run_file), out, tag=tag)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    err_console.print(f"wrote {run_path} and {qrels_path}")
    console.print(f"trec_eval -c -m success.1,3,5,10 -m recall.1,3,5,10 -m ndcg_cut.1,3,5,10 {qrels_path} {run_path}")


def register(app: typer.Typer) -> None:
    """Add the report/trend/compare/history/export-trec commands to the ``eval`` sub-app."""
    app.command("report")(report_cmd)
    app.command("trend")(trend_cmd)
    app.command("compare")(compare_cmd)
    app.command("history")(history_cmd)
    app.command("export-trec")(export_trec_cmd)


__all__ = ["HISTORY_ENV", "HistoryOpt", "finish_run", "history_path", "register"]
