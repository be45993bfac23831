"""``drivebench probe``: adversarial leak probes against the simulator or any recall endpoint.

Exit codes: 0 no leak in every measured pair; 1 at least one leak; 2 usage or configuration error;
3 the probe failed (preflight, more requests failed than ``--max-error-rate`` allows, every answer
empty, or no result mapped to the corpus): leaks were not measured.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from drivebench.cli.common import err_console, progress_bar, quiet_libraries, status
from drivebench.cli.evaluate import MatchOpt, _corpus_dir, _id_mapper, default_out_dir, resolve_target, usage_error

EXIT_OK, EXIT_LEAK, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


def _english_titles(corpus: str | None) -> dict[str, str]:
    if corpus is None:
        return {}
    from drivebench.formats.corpus import load_manifest

    manifest = load_manifest(_corpus_dir(corpus))
    return {d.doc_id: d.title or Path(d.name).stem for d in manifest.documents}


def probe(
    target: str | None = typer.Option(None, "--target", help="Recall URL (as for eval run)."),
    target_profile: Path | None = typer.Option(None, "--target-profile", dir_okay=False, help="TOML target profile."),
    token: str | None = typer.Option(
        None, "--token", help="Bearer token; default: the profile's [auth], else $DRIVEBENCH_TOKEN."
    ),
    corpus: str = typer.Option(..., "--corpus", help="Corpus (name or dir): the ground truth of who may preview what."),
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
    json_out: str | None = typer.Option(None, "--json", help="Also write the result JSON here ('-' = stdout)."),
) -> None:
    """Ask for documents each sampled user may NOT preview, in the documents' own words; report every leak.

    Exit codes: 0 no leak; 1 a leak; 2 usage error; 3 the probe failed (leaks not measured).
    """
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
    corpus_dir = _corpus_dir(corpus)
    match = match or profile.ids.match
    id_mapper = _id_mapper(match, corpus_dir, profile.source)
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
    result["run_info"] = {
        "target": url,
        "target_profile": str(target_profile) if target_profile else None,
        "corpus": str(corpus),
        "seed": seed,
        "pairs_asked": pairs,
        "match": match,
    }
    result["population"] = population
    result["pairs"] = [p.as_dict() for p in chosen]
    out_dir = out or default_out_dir()
    write_json(result, out_dir / "probe.json")
    write_html(result, out_dir / "probe.html")
    cls, text = verdict(result)
    code = (
        EXIT_LEAK if result["counts"]["leaks"] else (EXIT_FAILED if result["status"]["state"] == "failed" else EXIT_OK)
    )
    result["exit_code"] = code
    style = {"bad": "red", "warn": "yellow", "ok": "green"}[cls]
    err_console.print(f"[{style}]{escape(text)}[/]", highlight=False, soft_wrap=True)
    for doc in result["leaked_documents"][:20]:
        err_console.print(f"  leaked {doc['doc_id']} {escape(str(doc['path']))} ({doc['leaks']}x)", highlight=False)
    err_console.print(f"wrote {out_dir / 'probe.json'} and {out_dir / 'probe.html'} (exit {code})")
    if json_out == "-":
        print(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    elif json_out is not None:
        write_json(result, Path(json_out))
    raise typer.Exit(code)
