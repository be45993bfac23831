"""Benchmark reports: each benchmark's result as JSON (the data) and as Markdown (what a reader looks at), side by
side in ``benchmarks/results/``.

Every ``bench_*.py`` ends with ``write_report(name, result)`` (or ``report_checks``, which also prints its targets
and sets the exit code): it adds ``meta`` (when, where and at which commit the result was measured) and writes
``<name>.json`` and ``<name>.md``. The Markdown is rendered from the JSON alone, so it can be regenerated without
measuring again::

    python -m benchmarks.report [NAME ...]      # every benchmark by default

A benchmark without a JSON result gets a page that says how to measure it, so that every benchmark has a
report to link to. ``tests/cli/test_docs_site.py`` fails when a committed report no longer matches its JSON.

Most results render with the generic layout (settings, then one table per list of rows or group of figures);
benchmarks whose JSON nests its figures by pipeline, scale or direction have a renderer of their own below
(``RENDERERS``), written against the shape their ``main()`` builds.
"""

from __future__ import annotations

import ast
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WIDE = 10  # a table with more value columns than this is printed transposed (one row per figure)

Scalar = str | int | float | bool | None


# ---------------------------------------------------------------------------------------------------- writing


def benchmark_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def environment() -> dict[str, Any]:
    """When, where and at which commit a benchmark ran: the ``meta`` of its result."""
    commit = _git("rev-parse", "--short=12", "HEAD")
    if commit and _git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    return {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "quick": os.environ.get("BENCH_QUICK") == "1",
    }


def write_report(name: str, result: Mapping[str, Any], results: Path = RESULTS) -> dict[str, Any]:
    """Write ``result`` as ``results/<name>.json`` (with ``meta`` first, unless it has one) and its Markdown
    rendering as ``results/<name>.md``; returns what was written."""
    data = dict(result) if "meta" in result else {"meta": environment(), **result}
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{name}.json").write_text(
        json.dumps(data, indent=1, ensure_ascii=False, default=list) + "\n", encoding="utf-8"
    )
    (results / f"{name}.md").write_text(render(name, data), encoding="utf-8")
    print(f"wrote {results / name}.json and .md")
    return data


def report_checks(name: str, result: dict[str, Any], checks: dict[str, bool], results: Path = RESULTS) -> None:
    """Print each target met/MISSED, write ``result`` (with the checks) as the benchmark's report, and exit 1 when
    a target was missed (``python -m benchmarks`` reads the exit code)."""
    for label, ok in checks.items():
        print(f"  {'met   ' if ok else 'MISSED'} {label}")
    result["checks"] = checks
    write_report(name, result, results)
    raise SystemExit(0 if all(checks.values()) else 1)


def rerender(names: Iterable[str], results: Path = RESULTS) -> list[Path]:
    """Render ``results/<name>.md`` again from ``results/<name>.json`` (or the page for a missing result)."""
    written = []
    for name in names:
        source = results / f"{name}.json"
        text = render(name, json.loads(source.read_text(encoding="utf-8"))) if source.exists() else render_missing(name)
        out = results / f"{name}.md"
        out.write_text(text, encoding="utf-8")
        written.append(out)
    return written


# ---------------------------------------------------------------------------------------------------- Markdown


def summary(name: str) -> str:
    """The first paragraph of the benchmark's docstring (read without importing it), on one line."""
    path = HERE / f"{name}.py"
    if not path.exists():
        return ""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _short(name: str) -> str:
    return name.removeprefix("bench_")


def _header(name: str) -> list[str]:
    lines = [f"# {name}", ""]
    if text := summary(name):
        lines += [text, ""]
    return lines


def _footer(name: str) -> list[str]:
    return [
        "",
        "---",
        "",
        f"Generated by `benchmarks/report.py` from `{name}.json`. Measure again with "
        f"`python -m benchmarks {_short(name)}` (or `make bench` for every benchmark); render this page again from "
        f"the JSON with `python -m benchmarks.report {_short(name)}`.",
        "",
    ]


def render_missing(name: str) -> str:
    """The page of a benchmark that has no result in ``benchmarks/results/`` yet."""
    lines = _header(name)
    lines += [
        f"**Not measured yet**: there is no `benchmarks/results/{name}.json`. Run `python -m benchmarks "
        f"{_short(name)}` (with `BENCH_QUICK=1` for its quick variant) to measure it: the benchmark writes its JSON "
        "and replaces this page with its figures.",
        "",
    ]
    return "\n".join(lines)


def render(name: str, data: Mapping[str, Any]) -> str:
    """The Markdown page of a benchmark's result."""
    data = dict(data)
    lines = _header(name)
    lines += _meta(data.pop("meta", None))
    checks = data.pop("checks", None)
    if isinstance(checks, dict) and checks:
        lines += ["## Targets", ""]
        lines += [f"* {'met' if ok else '**MISSED**'}: {_cell(label)}" for label, ok in checks.items()]
        lines.append("")
    renderer = RENDERERS.get(name)
    sections = renderer(data) if renderer else generic(data)
    for section in sections:
        lines += [section, ""]
    return "\n".join(lines).rstrip("\n") + "\n" + "\n".join(_footer(name))


def _meta(meta: Any) -> list[str]:
    if not isinstance(meta, dict):
        return ["*When and where: not recorded in the JSON.*", ""]
    labels = {
        "measured_at": "measured",
        "commit": "commit",
        "platform": "platform",
        "machine": "machine",
        "cpus": "CPUs",
        "python": "Python",
        "load_average_1min": "load average (1 min) at the end",
        "quick": "quick variant (`BENCH_QUICK=1`)",
    }
    out = []
    for key, value in meta.items():
        if value is None:
            continue
        out.append(f"* **{labels.get(key, key.replace('_', ' '))}**: {_cell(value)}")
    return [*out, ""]


def fmt(value: Any) -> str:
    """A figure as a table shows it: integers with thousands separators, floats to 3-4 significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN
            return "–"
        size = abs(value)
        if size >= 1000:
            return f"{value:,.0f}"
        if size >= 100:
            text = f"{value:.1f}"
        elif size >= 10:
            text = f"{value:.2f}"
        elif size >= 0.01 or value == 0:
            text = f"{value:.3f}"
        else:
            return f"{value:.2g}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    return str(value)


def paired_cells(comparison: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One console line per metric of a paired comparison (``evaluator.stats.paired_compare`` rows):
    ``metric +diff [lo, hi] p=p``."""
    cells = []
    for metric, row in comparison.items():
        ci = row["ci"] or [float("nan"), float("nan")]
        cells.append(f"{metric} {row['diff']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}] p={row['p_value']:.3f}")
    return cells


def _cell(value: Any) -> str:
    return fmt(value).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table; the first column left-aligned, the others right-aligned."""
    rows = [list(r) for r in rows]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join(["---", *["---:"] * (len(header) - 1)]) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_flat_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(_is_scalar(v) for v in value)


def flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys; lists of scalars stay (a table joins them); lists of mappings are counted."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        label = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(flatten(item, f"{label}."))
        elif _is_scalar(item) or _is_flat_list(item):
            out[label] = item
        else:
            out[label] = f"({len(item)} rows)"
    return out


def records(rows: Sequence[Mapping[str, Any]], first: str | None = None) -> str:
    """A table of one row per record (columns: the union of their keys), transposed when it is too wide."""
    flat = [flatten(r) for r in rows]
    columns: list[str] = []
    for row in flat:
        columns += [c for c in row if c not in columns]
    if len(columns) - 1 > WIDE:
        key = first or columns[0]
        header = [key, *[fmt(r.get(key)) for r in flat]]
        return table(header, [[c, *[r.get(c) for r in flat]] for c in columns if c != key])
    return table(columns, [[r.get(c) for c in columns] for r in flat])


def kv(values: Mapping[str, Any], header: tuple[str, str] = ("figure", "value")) -> str:
    return table(header, flatten(values).items())


def _matrix(title: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    """One row per group, one column per figure (transposed when too wide)."""
    return records([{title: key, **value} for key, value in groups.items()], first=title)


def generic(data: Mapping[str, Any], title: str | None = None, level: int = 2) -> list[str]:
    """Sections for a result of any shape: its scalar figures in a two-column table, each list of records in a
    table, groups of figures with the same keys side by side in one table, anything else in its own section
    (one heading level further down when this is a titled section with figures of its own)."""
    hashes = "#" * min(level, 4)
    scalars = {k: v for k, v in data.items() if _is_scalar(v) or _is_flat_list(v)}
    sub_level = level + 1 if title and scalars else level  # below this section's own heading, if it has one
    sub = "#" * min(sub_level, 4)
    nested = {k: v for k, v in data.items() if k not in scalars}
    out = []
    if scalars:
        out.append(f"{hashes} {title or 'Settings and summary'}\n\n{kv(scalars)}")
    groups = {k: v for k, v in nested.items() if isinstance(v, Mapping)}
    flat_groups = {k: flatten(v) for k, v in groups.items()}
    same_keys = len({tuple(v) for v in flat_groups.values()}) == 1 and len(groups) >= 2
    if same_keys and all(all(_is_scalar(x) or _is_flat_list(x) for x in v.values()) for v in flat_groups.values()):
        heading = f"{title}: {', '.join(groups)}" if title else ", ".join(groups)
        out.append(f"{sub} {heading}\n\n{_matrix('figure', groups)}")
        nested = {k: v for k, v in nested.items() if k not in groups}
    for key, value in nested.items():
        heading = f"{title}: {key}" if title else key
        if isinstance(value, Mapping):
            out += generic(value, heading, sub_level)
        elif isinstance(value, list | tuple) and all(isinstance(v, Mapping) for v in value):
            out.append(f"{sub} {heading}\n\n{records(value)}")
        else:
            out.append(f"{sub} {heading}\n\n{_cell(value)}")
    return out


def _without(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


# ---------------------------------------------------------------------------------------------------- renderers


def _growth(data: Mapping[str, Any]) -> list[str]:
    """bench_growth: ``scales`` maps a document count to that scale's figures; one column per scale."""
    scales: Mapping[str, Mapping[str, Any]] = data.get("scales", {})
    names = list(scales)

    def row(label: str, cell: Callable[[Mapping[str, Any]], str]) -> list[str]:
        cells = []
        for s in names:
            try:
                cells.append(cell(scales[s]))
            except (KeyError, TypeError):
                cells.append("–")
        return [label, *cells]

    def timed(key: str) -> Callable[[Mapping[str, Any]], str]:
        def cell(r: Mapping[str, Any]) -> str:
            pipe = key.split("_")[1]
            ratio = r.get(f"{key.split('_')[0]}_{pipe}_ratio")
            return f"{fmt(r[f'{key}_ms']['p50'])} / {fmt(r[f'{key}_ms']['p95'])}" + (
                f" ({fmt(ratio)}x)" if ratio is not None else ""
            )

        return cell

    rows = [
        row("documents / chunks", lambda r: f"{fmt(r['documents'])} / {fmt(r['chunks'])}"),
        row("load s", lambda r: fmt(r["load_s"])),
        row("resident memory grown MB", lambda r: fmt(r["rss_grown_mb"])),
        row("bytes/chunk beyond vectors", lambda r: fmt(r["bytes_per_chunk"])),
        row(
            "bytes/chunk beyond vectors and files (marginal)",
            lambda r: (
                fmt(r["bytes_per_chunk_beyond_files"])
                + (f" ({fmt(r['marginal_bytes_per_chunk'])})" if "marginal_bytes_per_chunk" in r else "")
            ),
        ),
        row("BM25 recall p50 / p95 ms (p50 over the smallest)", timed("recall_bm25")),
        row("BM25 search alone p50 / p95 ms (over the smallest)", timed("search_bm25")),
        row("dense recall p50 / p95 ms (over the smallest)", timed("recall_dense")),
        row("dense search alone p50 / p95 ms (over the smallest)", timed("search_dense")),
        row("query embedding p50 ms", lambda r: fmt(r["embed_ms"]["p50"])),
        row(
            "new version: ack + first recall ms",
            lambda r: f"{fmt(r['new_version']['ack_ms'])} + {fmt(r['new_version']['first_recall_ms'])}",
        ),
        row(
            "grant change: ack ms (a full engine compile ms)",
            lambda r: f"{fmt(r['grant_change']['ack_ms'])} ({fmt(r['grant_change']['full_compile_ms'])})",
        ),
        row("grant change: first recall ms", lambda r: fmt(r["grant_change"]["first_recall_ms"])),
    ]
    header = ["documents (scale)", *[fmt(int(s)) if s.isdigit() else s for s in names]]
    return [*generic(_without(data, "scales")), f"## By scale\n\n{table(header, rows)}"]


_HTTP_LABELS = {
    "floor": "floor: the query embedding alone, in-process",
    "http_floor": "HTTP floor: a bare FastAPI app on uvicorn",
    "bare_floor": "HTTP floor: a bare ASGI app on uvicorn",
    "bm25_httpx": "bm25, from an httpx client",
    "bm25_access_log": "bm25, uvicorn's access log on",
    "bm25_routed": "bm25, recall fast path off",
}


def _recall_http(data: Mapping[str, Any]) -> list[str]:
    """bench_recall_http: per request kind, dicts keyed by kind (``p50_ms`` names every kind)."""
    kinds = list(data.get("p50_ms", {}))

    def get(key: str, kind: str) -> Any:
        return data.get(key, {}).get(kind)

    latency = []
    for kind in kinds:
        paired = get("http_overhead_paired_median_ms", kind)
        latency.append(
            [
                _HTTP_LABELS.get(kind, kind),
                get("p50_ms", kind),
                get("p95_ms", kind),
                get("mean_ms", kind),
                get("inprocess_p50_ms", kind),
                get("inprocess_back_to_back_p50_ms", kind),
                get("http_overhead_p50_ms", kind),
                f"{fmt(paired[0])} ({fmt(paired[1])} – {fmt(paired[2])})" if paired else None,
                get("answers_equal_to_in_process", kind),
            ]
        )
    header = [
        "request",
        "HTTP p50 ms",
        "p95 ms",
        "mean ms",
        "in-process p50 ms",
        "in-process back to back p50 ms",
        "HTTP − in-process p50 ms",
        "paired median ms (95% CI)",
        "answers equal to in-process",
    ]
    rps = data.get("requests_per_s", {})
    scaling = data.get("throughput_4_over_1", {})
    throughput = table(
        ["pipeline", "requests/s at 1 in flight", "at 4 in flight", "4 over 1"],
        [[p, v.get("1"), v.get("4"), scaling.get(p)] for p, v in rps.items()],
    )
    used = (
        "p50_ms",
        "p95_ms",
        "mean_ms",
        "inprocess_p50_ms",
        "inprocess_back_to_back_p50_ms",
        "http_overhead_p50_ms",
        "http_overhead_paired_median_ms",
        "answers_equal_to_in_process",
        "requests_per_s",
        "throughput_4_over_1",
    )
    return [
        *generic(_without(data, *used)),
        f"## Latency, one request in flight\n\n{table(header, latency)}",
        f"## Throughput of one server process\n\n{throughput}",
    ]


def _workers(data: Mapping[str, Any]) -> list[str]:
    """bench_workers: figures keyed by pipeline, then by worker count, then by requests in flight."""
    rps = data.get("requests_per_s", {})
    busy1, busy4 = data.get("cores_busy_at_1_in_flight", {}), data.get("cores_busy_at_4_in_flight", {})
    ratios = data.get("ratios", {})
    rows = []
    for pipeline, by_workers in rps.items():
        for workers, r in by_workers.items():
            ratio = ratios.get(pipeline, {}).get(workers, {})
            rows.append(
                [
                    pipeline,
                    workers,
                    r.get("1"),
                    r.get("4"),
                    ratio.get("4_over_1_same_server"),
                    ratio.get("4_over_single_flight_of_1_worker"),
                    busy1.get(pipeline, {}).get(workers),
                    busy4.get(pipeline, {}).get(workers),
                ]
            )
    header = [
        "pipeline",
        "workers",
        "requests/s at 1 in flight",
        "at 4 in flight",
        "4 over 1, same server",
        "4 over one worker at 1",
        "cores busy at 1",
        "cores busy at 4",
    ]
    cpu, headroom, bound = (
        data.get("cpu_ms_per_request_one_worker", {}),
        data.get("headroom_4_over_1", {}),
        data.get("bound_4_over_1", {}),
    )
    per_request = table(
        ["pipeline", "CPU ms per request at 1 in flight", "at 4", "cores / busy at 1", "bound: 4 over 1 at most"],
        [[p, cpu[p].get("1"), cpu[p].get("4"), headroom.get(p), bound.get(p)] for p in cpu],
    )
    out = [
        f"## Throughput\n\n{table(header, rows)}",
        f"## CPU per request, one worker\n\n{per_request}",
    ]
    batcher = data.get("dense_batcher_in_process")
    if isinstance(batcher, Mapping):
        variants = {k: v for k, v in batcher.items() if isinstance(v, Mapping)}
        rest = {k: v for k, v in batcher.items() if k not in variants}
        out.append(
            f"## Dense recall in process: the encoder pool and one encoder thread\n\n{_matrix('variant', variants)}"
        )
        if rest:
            out.append(kv(rest))
    used = (
        "requests_per_s",
        "cores_busy_at_1_in_flight",
        "cores_busy_at_4_in_flight",
        "ratios",
        "cpu_ms_per_request_one_worker",
        "headroom_4_over_1",
        "bound_4_over_1",
        "dense_batcher_in_process",
    )
    return [*generic(_without(data, *used)), *out]


def _pipelines(data: Mapping[str, Any]) -> list[str]:
    """bench_pipelines: ``corpora[corpus]["results"][embedder][pipeline]`` -> metrics; ``chunks_per_s[embedder]``."""
    default = data.get("default", {})
    out = []
    for corpus, c in data.get("corpora", {}).items():
        rows = []
        for embedder, pipes in c.get("results", {}).items():
            base = pipes.get("bm25", {}).get("hit_rate@10")
            for pipe, m in pipes.items():
                mark = " (default)" if (embedder, pipe) == (default.get("embedder"), default.get("pipeline")) else ""
                rows.append(
                    [
                        embedder,
                        pipe + mark,
                        m.get("hit_rate@1"),
                        m.get("hit_rate@10"),
                        m.get("mrr@10"),
                        m.get("recall@10"),
                        m.get("leak_rate@10"),
                        m.get("ms_per_query"),
                        m["hit_rate@10"] / base if base else None,
                        c.get("chunks_per_s", {}).get(embedder),
                    ]
                )
        header = [
            "embedder",
            "pipeline",
            "Hit@1",
            "Hit@10",
            "MRR@10",
            "recall@10",
            "leak rate@10",
            "ms/query",
            "Hit@10 over bm25",
            "encode chunks/s",
        ]
        intro = f"{fmt(c.get('queries'))} queries, {fmt(c.get('chunks'))} chunks."
        section = f"## {corpus}\n\n{intro}\n\n{table(header, rows)}"
        bars = c.get("bar") or {}
        if bars:
            bar_rows = [
                [e, b.get("max_hit@10"), b.get("max_hit@1"), b.get("mrr_spread"), "met" if b.get("ok") else "NOT MET"]
                for e, b in bars.items()
            ]
            section += "\n\nThe bar (no pipeline at Hit@10 >= 0.95 or Hit@1 >= 0.85; MRR@10 spread >= 0.15):\n\n"
            section += table(["embedder", "max Hit@10", "max Hit@1", "MRR@10 spread", "bar"], bar_rows)
        hops = sorted(c.get("chains_by_hops") or {})
        if hops:
            comp_rows = [
                [e, p, *[(m.get("multi_hop_completeness") or {}).get(h) for h in hops]]
                for e, pipes in c.get("results", {}).items()
                for p, m in pipes.items()
            ]
            counts = ", ".join(f"{c['chains_by_hops'][h]} of {h} hops" for h in hops)
            section += f"\n\nMulti-hop completeness@10 per hop count ({counts}):\n\n"
            section += table(["embedder", "pipeline", *[f"{h} hops" for h in hops]], comp_rows)
        out.append(section)
    return [*generic(_without(data, "corpora", "readme_table")), *out]


def _fusion_label(f: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {fmt(v)}" for k, v in f.items())


def _fusion(data: Mapping[str, Any]) -> list[str]:
    """bench_fusion: a default setting, a grid per corpus, and per direction the choice and its held-out test."""
    out = []
    for d in data.get("directions", []):
        rows = []
        for m, paired in d.get("held_out_paired", {}).items():
            ci = paired.get("ci")
            rows.append(
                [
                    m,
                    d["tuning_set"]["default"].get(m),
                    d["tuning_set"]["chosen"].get(m),
                    d["held_out_set"]["default"].get(m),
                    d["held_out_set"]["chosen"].get(m),
                    f"{paired['diff']:+.3f}" if paired.get("diff") is not None else None,
                    f"{ci[0]:+.3f} – {ci[1]:+.3f}" if ci else None,
                    paired.get("p_value"),
                ]
            )
        header = [
            "metric",
            f"{d['tuned_on']}: default",
            "chosen",
            f"{d['held_out']} (held out): default",
            "chosen",
            "difference",
            "95% CI",
            "p",
        ]
        out.append(
            f"## Tuned on {d['tuned_on']}, tested on {d['held_out']}\n\n"
            f"Chosen: {_fusion_label(d['chosen'])}.\n\n{table(header, rows)}"
        )
    default = data.get("default", {})
    for corpus, c in data.get("corpora", {}).items():
        grid = sorted(c.get("grid", []), key=lambda r: -float(r.get("mrr@10") or 0))
        top = grid[:10] + [r for r in grid[10:] if all(r.get(k) == v for k, v in default.items())]
        out.append(
            f"## Best settings on {corpus} by MRR@10\n\n{fmt(c.get('queries'))} queries, {fmt(c.get('chunks'))} "
            f"chunks; {fmt(len(grid))} settings, the ten best and the default shown.\n\n{records(top)}"
        )
    summary_ = _without(data, "directions", "corpora", "default", "grid")
    summary_["default setting"] = _fusion_label(default)
    summary_["grid"] = "; ".join(f"{k}: {fmt(list(v))}" for k, v in data.get("grid", {}).items())
    return [*generic(summary_), *out]


RENDERERS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "bench_growth": _growth,
    "bench_recall_http": _recall_http,
    "bench_workers": _workers,
    "bench_pipelines": _pipelines,
    "bench_fusion": _fusion,
}


def main(argv: list[str]) -> int:
    known = benchmark_names()
    wanted = [a if a.startswith("bench_") else f"bench_{a}" for a in (s.removesuffix(".py") for s in argv)] or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    for path in rerender(wanted):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
