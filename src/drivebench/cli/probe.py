"""``drivebench probe``: adversarial leak probes against the simulator or any recall endpoint; with
``--fail-safe``, the check that the endpoint fails CLOSED (``evaluator.probe.failsafe``).

Exit codes: 0 no leak in every measured pair; 1 at least one leak; 2 usage or configuration error;
3 the probe failed (preflight, more requests failed than ``--max-error-rate`` allows, every answer
empty, or no result mapped to the corpus): leaks were not measured.

``--fail-safe``: 0 every case closed; 1 a case failed open; 2 usage; 3 not testable (the baseline returns nothing
to the real user, or fails) or a case could not reach the target. ``--fail-safe`` needs no ``--corpus``; options
of the other mode given on the command line are usage errors, never silently ignored.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from drivebench.cli.clickcompat import click
from drivebench.cli.common import (
    console,
    err_console,
    progress_bar,
    quiet_libraries,
    resolve_corpus_option,
    status,
)
from drivebench.cli.eval_common import MatchOpt, default_out_dir, resolve_target, usage_error
from drivebench.cli.eval_common import id_mapper as make_id_mapper
from drivebench.corpora.builtin import corpus_version

EXIT_OK, EXIT_LEAK, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


def _english_titles(corpus: str | None) -> dict[str, str]:
    if corpus is None:
        return {}
    from drivebench.formats.corpus import load_manifest

    manifest = load_manifest(resolve_corpus_option(corpus))
    return {d.doc_id: d.title or Path(d.name).stem for d in manifest.documents}


# parameters that only one mode reads: given on the command line in the other mode, a usage error
LEAK_ONLY = (
    "corpus",
    "out",
    "pairs",
    "per_pair",
    "budget",
    "seed",
    "concurrency",
    "match",
    "answers",
    "mcp",
    "english",
    "max_error_rate",
    "preflight_on",
    "leak_budget",
    "class_trials",
)
FAIL_SAFE_ONLY = ("user", "query", "drive_token", "junit")
FAIL_SAFE_PANEL = "Fail-safe probe (--fail-safe; no --corpus)"


def _given_here(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """The options among ``names`` given on the command line, as their flags."""
    given = []
    for param in ctx.command.params:
        if param.name in names and ctx.get_parameter_source(param.name) == click.core.ParameterSource.COMMANDLINE:
            given.append(param.opts[0])
    return given


def probe(
    ctx: typer.Context,
    target: str | None = typer.Option(None, "--target", help="Recall URL (as for eval run)."),
    target_profile: Path | None = typer.Option(None, "--target-profile", dir_okay=False, help="TOML target profile."),
    token: str | None = typer.Option(
        None, "--token", help="Bearer token; default: the profile's [auth], else $DRIVEBENCH_TOKEN."
    ),
    corpus: str | None = typer.Option(
        None, "--corpus", help="Corpus (name or dir): the ground truth of who may preview what (not with --fail-safe)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default reports/<timestamp>)."),
    pairs: int = typer.Option(200, "--pairs", min=1, max=1_000_000, help="(user, forbidden document) pairs to probe."),
    per_pair: int = typer.Option(2, "--queries-per-pair", min=1, max=6, help="Attack queries per pair."),
    budget: int | None = typer.Option(None, "--budget", min=1, help="Most requests to send (whole pairs)."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed: the same seed gives the same pairs and queries."),
    top_k: int = typer.Option(10, "--top-k", min=1, max=100),
    concurrency: int | None = typer.Option(None, min=1, max=256, help="Requests in flight (default 8)."),
    timeout: float | None = typer.Option(None, help="Per-request timeout in seconds (default 30)."),
    field: list[str] = typer.Option([], "--field", help="Response mapping FIELD=KEY (e.g. doc_id=file_id)."),
    match: str | None = MatchOpt,
    answers: bool = typer.Option(False, "--answers", help="Also ask the answer endpoint (surface 'answer')."),
    mcp: bool = typer.Option(False, "--mcp", help="--target is an MCP endpoint (surface 'recall' over MCP)."),
    english: str | None = typer.Option(None, "--english", help="An English rendering of the corpus (same doc ids)."),
    max_error_rate: float = typer.Option(0.0, "--max-error-rate", min=0.0, max=1.0),
    preflight_on: bool = typer.Option(True, "--preflight/--no-preflight", help="Send one request before the run."),
    class_trials: int = typer.Option(
        50,
        "--class-trials",
        min=1,
        max=1_000_000,
        help="Trials of each class beyond the result list (body-identity, shared-cache).",
    ),
    leak_budget: str | None = typer.Option(
        None,
        "--leak-budget",
        help="E.g. 0.1%: size every class to show this leak rate (95 % upper bound) and fail when a bound is above "
        "it, even with 0 leaks seen (not with --pairs or --class-trials).",
    ),
    json_out: str | None = typer.Option(None, "--json", help="Also write the result JSON here ('-' = stdout)."),
    fail_safe: bool = typer.Option(
        False,
        "--fail-safe",
        rich_help_panel=FAIL_SAFE_PANEL,
        help="Check the target fails CLOSED (no identity, bad tokens, unknown principals ...).",
    ),
    user: str | None = typer.Option(
        None,
        "--user",
        rich_help_panel=FAIL_SAFE_PANEL,
        help="The real user of the baseline (default: the profile's first, else u001).",
    ),
    query: str | None = typer.Option(
        None,
        "--query",
        rich_help_panel=FAIL_SAFE_PANEL,
        help="The baseline query (default: the first of a few that returns documents).",
    ),
    drive_token: str | None = typer.Option(
        None,
        "--drive-token",
        rich_help_panel=FAIL_SAFE_PANEL,
        help="The simulator's admin token (adds the permission-outage case).",
    ),
    junit: Path | None = typer.Option(
        None, "--junit", rich_help_panel=FAIL_SAFE_PANEL, help="Write JUnit XML: a test case per case."
    ),
) -> None:
    """Ask for documents each sampled user may NOT preview, in the documents' own words; report every leak.
    With --fail-safe: send hostile variants of a working request and check each fails closed.

    Exit codes: 0 no leak (--fail-safe: every case closed); 1 a leak (a case failed open); 2 usage error; 3 the
    probe failed (leaks not measured; --fail-safe: not testable, the baseline returns nothing or fails).
    """
    if fail_safe:
        wrong = _given_here(ctx, LEAK_ONLY)
        if wrong:
            usage_error(f"{', '.join(wrong)}: not with --fail-safe (it needs no corpus)")
        fail_safe_probe(target, target_profile, token, user, query, drive_token, top_k, timeout, field, json_out, junit)
    wrong = _given_here(ctx, FAIL_SAFE_ONLY)
    if wrong:
        usage_error(f"{', '.join(wrong)}: only with --fail-safe")
    if corpus is None:
        usage_error(
            "Missing option '--corpus' (the ground truth of who may preview what)",
            "pass --corpus NAME or DIR; `drivebench probe --fail-safe` checks failing closed without one",
        )
    from drivebench.evaluator.probe import bounds

    budget_rate = None
    if leak_budget is not None:
        sizing = _given_here(ctx, ("pairs", "class_trials"))
        if sizing:
            usage_error(f"{', '.join(sizing)}: not with --leak-budget (it sizes the probe)")
        try:
            budget_rate = bounds.parse_budget(leak_budget)
        except ValueError as exc:
            usage_error(str(exc))
        pairs = class_trials = bounds.sized(budget_rate)
    from drivebench.drive.state import Drive
    from drivebench.evaluator.preflight import preflight
    from drivebench.evaluator.probe.groundtruth import GroundTruth
    from drivebench.evaluator.probe.pairs import sample_pairs
    from drivebench.evaluator.probe.queries import QueryBuilder
    from drivebench.evaluator.probe.report import verdict, write_html, write_json
    from drivebench.evaluator.probe.run import ProbeConfig, plan, run_probe
    from drivebench.evaluator.targets.http import HttpTarget
    from drivebench.formats.corpus import load_manifest

    quiet_libraries()
    profile, url, single, per_principal = resolve_target(target_profile, target, token, mcp)
    try:
        mapping = profile.response.override(field)
    except ValueError as exc:
        usage_error(str(exc))
    if mcp and answers:
        usage_error("--answers is not available with --mcp")
    corpus_dir = resolve_corpus_option(corpus)  # a built-in name or a directory: read the files from here
    if target_profile is None:  # the simulator's shape: as eval run, refuse a server of another corpus first
        from drivebench.cli.preflight import check_served_corpus

        check_served_corpus(url, single, corpus)
    match = match or profile.ids.match
    id_mapper = make_id_mapper(match, corpus_dir, profile.source)
    manifest = load_manifest(corpus_dir)
    with status("ground truth: who may preview what …"):
        gt = GroundTruth(Drive.from_manifest(manifest, corpus_dir), manifest)
        chosen, population = sample_pairs(gt, pairs, seed)
        builder = QueryBuilder(gt.drive, [p.doc_id for p in chosen], _english_titles(english))
    if not chosen:
        usage_error(f"{corpus}: no user is forbidden any document: nothing to probe")
    cfg = ProbeConfig(
        per_pair=per_pair,
        top_k=top_k,
        budget=budget,
        concurrency=concurrency or profile.request.concurrency,
        surfaces=("recall", "answer") if answers else ("recall",),
        max_error_rate=max_error_rate,
        channel="mcp" if mcp else "http",
    )
    wait = timeout or profile.request.timeout_s

    def make_target() -> Any:
        if mcp:
            from drivebench.evaluator.targets.mcp import McpTarget

            return McpTarget(url, single, mapping=mapping, timeout=wait)
        return HttpTarget(
            url,
            single,
            mapping=mapping,
            timeout=wait,
            profile=profile if target_profile is not None else None,
            tokens=per_principal,
        )

    probes, _ = plan(chosen, builder, cfg)
    first = make_target()
    if isinstance(first, HttpTarget) and probes:
        missing = first.missing_tokens([p.query for p in probes])
        if missing:
            usage_error(f"[auth] tokens_file has no token for: {', '.join(missing[:10])}")
    pre = None
    if preflight_on and probes:

        async def _pre() -> Any:
            try:
                return await preflight(first, probes[0].query, top_k, "recall")
            finally:
                await first.aclose()

        pre = asyncio.run(_pre()).check_ids(id_mapper)
        style = "green" if pre.ok else ("red" if pre.fatal else "yellow")
        err_console.print(f"[{style}]preflight[/] {escape(pre.diagnosis)}", highlight=False, soft_wrap=True)
    else:
        asyncio.run(first.aclose())
    with progress_bar() as bar:
        task = bar.add_task(f"probe {len(chosen)} pairs", total=len(probes))
        outcome = run_probe(
            make_target(),
            gt,
            chosen,
            builder,
            cfg,
            id_mapper=id_mapper,
            preflight=pre.as_dict() if pre is not None else None,
            progress=lambda: bar.advance(task),
        )
    result = outcome.result
    result["population"] = population
    beyond_classes = _beyond(
        make_target, first, gt, cfg, class_trials, seed, _english_titles(english), id_mapper, result["status"], mcp
    )
    bounds.summarize(result, beyond_classes, budget_rate)
    result["run_info"] = {
        "target": url,
        "target_profile": str(target_profile) if target_profile else None,
        "corpus": str(corpus),
        "corpus_version": corpus_version(corpus_dir),  # a built-in's label (acme-zh@3), None for another corpus
        "seed": seed,
        "pairs_asked": pairs,
        "class_trials": class_trials,
        "leak_budget": leak_budget,
        "match": match,
    }
    result["pairs"] = [p.as_dict() for p in chosen]
    out_dir = out or default_out_dir()
    write_json(result, out_dir / "probe.json")
    write_html(result, out_dir / "probe.html")
    cls, text = verdict(result)
    code = exit_code(result)
    result["exit_code"] = code
    style = {"bad": "red", "warn": "yellow", "ok": "green"}[cls]
    err_console.print(f"[{style}]{escape(text)}[/]", highlight=False, soft_wrap=True)
    for doc in result["leaked_documents"][:20]:
        err_console.print(f"  leaked {doc['doc_id']} {escape(str(doc['path']))} ({doc['leaks']}x)", highlight=False)
    _print_classes(result)
    err_console.print(f"wrote {out_dir / 'probe.json'} and {out_dir / 'probe.html'} (exit {code})")
    if json_out == "-":
        print(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    elif json_out is not None:
        write_json(result, Path(json_out))
    raise typer.Exit(code)


def exit_code(result: dict[str, Any]) -> int:
    """1 a leak in any class; 3 the probe failed (leaks not measured); 1 a bound above ``--leak-budget`` (no leak
    seen, but too few trials to show the budget); else 0."""
    if any(s["leaked"] for s in result["classes"].values()):
        return EXIT_LEAK
    if result["status"]["state"] == "failed":
        return EXIT_FAILED
    gate = result.get("leak_budget")
    return EXIT_LEAK if gate is not None and not gate["met"] else EXIT_OK


def _beyond(
    make_target: Any,
    first: Any,
    gt: Any,
    cfg: Any,
    trials: int,
    seed: int,
    english: dict[str, str],
    id_mapper: Any,
    pair_status: dict[str, Any],
    mcp: bool,
) -> dict[str, dict[str, Any]]:
    """Plan, send and judge the classes beyond the result list (``evaluator.probe.beyond``); none is sent when
    the pair probe failed (a preflight, a target failing every request): they would fail the same way, slowly."""
    from drivebench.evaluator.probe import beyond
    from drivebench.evaluator.probe.queries import QueryBuilder

    access = beyond.Access({}, None, set(), "mcp") if mcp else beyond.Access.of(first, gt.users())
    run_cfg = cfg.run_config("recall")  # each class sets the surface it sends on
    out = {}
    for name, plan_class in ((beyond.BODY, beyond.plan_body), (beyond.CACHE, beyond.plan_cache)):
        plan = plan_class(gt, access, trials, seed)
        if pair_status["state"] == "failed" and not plan.not_measured:
            plan.not_measured, plan.trials = f"not sent: the pair probe failed ({pair_status['reason']})", []
        beyond.with_queries(plan, QueryBuilder(gt.drive, [t.doc_id for t in plan.trials], english))
        if plan.not_measured or not plan.trials:
            out[name] = beyond.judge_class(gt, plan, [], {}, {}, id_mapper)
            if not plan.not_measured:
                out[name]["state"], out[name]["reason"] = "not measured", "no such trial exists in this corpus"
            continue
        with progress_bar() as bar:
            per_trial = 2 * len(cfg.surfaces)
            task = bar.add_task(f"{name} {len(plan.trials)} trials", total=per_trial * len(plan.trials))
            out[name] = beyond.run_class(
                make_target(),
                gt,
                plan,
                access,
                run_cfg,
                cfg.surfaces,
                id_mapper=id_mapper,
                progress=partial(bar.advance, task),
            )
    return out


def _print_classes(result: dict[str, Any]) -> None:
    """A line per class (its figure and bound, or why not measured), the pooled figure, the budget's verdict, and
    the leaks beyond the result list."""
    for name, s in result["classes"].items():
        style = "red" if s["leaked"] else ("yellow" if s["state"] != "measured" else "green")
        said = s["figure"]["text"] if s["state"] == "measured" else f"not measured: {s['reason']}"
        err_console.print(f"  [{style}]{name}[/] ({s['title']}): {escape(said)}", highlight=False, soft_wrap=True)
    err_console.print(f"  overall: {escape(result['overall']['text'])}", highlight=False)
    gate = result.get("leak_budget")
    if gate is not None:
        style = "green" if gate["met"] else "red"
        err_console.print(f"  [{style}]{escape(gate['summary'])}[/]", highlight=False, soft_wrap=True)
    for name, s in result["classes"].items():
        for x in s.get("leaks", [])[:10]:
            how = f"claimed {x['field']}={x['claimed']}" if "field" in x else f"after {x['first_user']} asked"
            err_console.print(
                f"  [red]{name}[/]: {x['user_id']} {how}: {'+'.join(x['where'])} {x['doc_id']} "
                f"{escape(str(x['doc_path']))} ({x['surface']})",
                highlight=False,
                soft_wrap=True,
            )


# ---------------------------------------------------------------------------------------------- --fail-safe

VERDICT_STYLE = {"OPEN": "bold red", "error reaching target": "yellow", "closed": "green", "not applicable": "dim"}


def _baseline_principal(per_principal: dict[str, str], user: str | None) -> str:
    """``--user``, else the first user a profile's tokens_file names, else the seed corpus's first user."""
    from drivebench.evaluator.probe.failsafe_cases import DEFAULT_USER

    if user:
        return user
    named = [k for k in per_principal if k != "*" and not k.startswith("role:")]
    return named[0] if named else DEFAULT_USER


def fail_safe_probe(
    target: str | None,
    target_profile: Path | None,
    token: str | None,
    user: str | None,
    query: str | None,
    drive_token: str | None,
    top_k: int,
    timeout: float | None,
    field: list[str],
    json_out: str | None,
    junit: Path | None,
) -> None:
    """``probe --fail-safe``: resolve the target as ``eval run`` does, run the cases, print the table, write
    the JSON and JUnit, exit 0/1/3."""
    from drivebench.evaluator.probe.failsafe import run_failsafe, write_junit
    from drivebench.evaluator.probe.failsafe_cases import DEFAULT_QUERIES, FailSafeTarget
    from drivebench.evaluator.probe.report import write_json

    quiet_libraries()
    if query is not None and not query.strip():
        usage_error("--query: give a non-empty query")
    profile, url, single, per_principal = resolve_target(target_profile, target, token, False)
    try:
        mapping = profile.response.override(field)
    except ValueError as exc:
        usage_error(str(exc))
    principal = _baseline_principal(per_principal, user)
    real = single
    if per_principal:
        real = per_principal.get(principal) or per_principal.get("*")
        if real is None:
            usage_error(f"[auth] tokens_file has no token for {principal}", "give --user USER with a token in the file")
    spec = FailSafeTarget.from_profile(profile, url, real, mapping=mapping, timeout_s=timeout, top_k=top_k)
    with status(f"fail-safe probe of {url} …"):
        report = asyncio.run(
            run_failsafe(spec, principal, [query] if query else DEFAULT_QUERIES, drive_token=drive_token)
        )
    out = err_console if json_out == "-" else console
    _print_report(report, out)
    data = report.model_dump(mode="json")
    if junit is not None:
        write_junit(report, junit)
        err_console.print(f"wrote {junit}")
    if json_out == "-":
        print(json.dumps(data, ensure_ascii=False, indent=1))
    elif json_out is not None:
        write_json(data, Path(json_out))
        err_console.print(f"wrote {json_out}")
    raise typer.Exit(report.exit_code)


def _print_report(report: Any, out: Console) -> None:
    """The baseline line, the case table (OPEN first, in red) and the verdict."""
    base = report.baseline
    if base.ok:
        line = f"baseline: user {escape(base.user)}, query {escape(repr(base.query))}: HTTP {base.status}, "
        line += f"{base.results} document(s)"
    else:
        line = f"[yellow]baseline: user {escape(base.user)}: {escape(base.detail)}[/]"
    out.print(line, highlight=False, soft_wrap=True)
    if report.cases:
        table = Table(show_lines=False)
        for name in ("case", "verdict", "status", "results", "detail"):
            table.add_column(name, overflow="fold")
        for c in report.cases:
            style = VERDICT_STYLE[c.verdict]
            detail = f"returned {', '.join(c.doc_ids)}" if c.verdict == "OPEN" else c.detail
            results = "-" if c.verdict == "not applicable" else str(c.results if c.results is not None else "-")
            table.add_row(
                f"[{style}]{escape(c.case)}[/]",
                f"[{style}]{escape(c.verdict)}[/]",
                c.statuses,
                results,
                escape(detail[:300]),
            )
        from drivebench.evaluator.report.terminal import fit_table

        out.print(fit_table(table, out))  # a case per block when the columns do not fit the terminal
    style = {"closed": "green", "open": "bold red"}.get(report.verdict, "yellow")
    out.print(f"[{style}]{escape(report.summary())}[/] (exit {report.exit_code})", highlight=False, soft_wrap=True)
    for c in report.cases:
        if c.verdict == "OPEN":
            out.print(
                f"[red]  FAIL OPEN {escape(c.case)}: HTTP {c.status}, {c.results} document(s): "
                f"{escape(', '.join(c.doc_ids))}[/]",
                highlight=False,
                soft_wrap=True,
            )
