"""Comparing an experiment's configurations with the baseline and applying the article's diagnosis rules
(``analyse``, ``metric_table``, ``diagnose``)."""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from drivebench.experiments.grid.runs import ExperimentRun
from drivebench.experiments.grid.spec import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, ConfigSpec, jsonable

#: The article's three metrics: (key in the reports, display name, metric it is judged on).
ARTICLE_METRICS = (
    ("hit_rate", "Hit Rate", "hit_rate@{k}"),
    ("source_coverage", "Source Coverage", "source_coverage_macro"),
    ("multi_hop_completeness", "Multi-hop Completeness", "multi_hop_completeness"),
)
LOWER_IS_BETTER = ("leak_rate", "answer_leak_rate", "stale_version_hit_rate", "trashed_hit_rate", "latency_ms")
ALPHA = 0.05
HIT_RATE_LOW = 0.90  # below this the article's Hit Rate remedies apply
SOURCE_COVERAGE_LOW = 0.80  # below this the article's Source Coverage remedy applies
HOP_FALL = 0.05  # completeness lower at the deepest hop count than at the shallowest by this much: "falls with hops"


def _lower_is_better(metric: str) -> bool:
    return metric.startswith(LOWER_IS_BETTER)


def augment(result: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``result`` whose per-query rows also carry multi-hop completeness and full-chain rate (overall and
    per hop count, ``multi_hop_completeness[3]``) and, with answers, per-query citation precision; they join
    ``config.per_query_metrics`` so that ``compare_runs`` compares them."""
    out = copy.deepcopy(result)
    rows = out.get("per_query") or []
    extra: list[str] = []
    hop_counts = sorted({int(r["hops"]) for r in rows if r.get("hops")})
    if hop_counts:
        for r in rows:
            h = int(r["hops"]) if r.get("hops") else None
            mhc = r.get("multi_hop_completeness")
            fc = r.get("full_chain")
            r["full_chain_rate"] = None if fc is None else float(fc)
            for n in hop_counts:
                r[f"multi_hop_completeness[{n}]"] = mhc if h == n else None
                r[f"full_chain_rate[{n}]"] = (None if fc is None else float(fc)) if h == n else None
        extra += ["multi_hop_completeness", "full_chain_rate"]
        extra += [f"{m}[{n}]" for m in ("multi_hop_completeness", "full_chain_rate") for n in hop_counts]
    if any("citations" in r for r in rows) and (out.get("counts") or {}).get("with_answer"):
        for r in rows:
            c = r.get("citations") or {}
            gold = sum(len(c.get(k) or []) for k in ("retrieved_cited", "retrieved_not_cited", "cited_not_retrieved"))
            gold += len(c.get("neither") or [])
            cited_gold = len(c.get("retrieved_cited") or []) + len(c.get("cited_not_retrieved") or [])
            n_cited = len(c.get("cited") or []) + len(c.get("unresolvable") or [])
            r["citation_precision"] = (cited_gold / n_cited) if gold and n_cited else None
        extra.append("citation_precision")
    wanted = list((out.get("config") or {}).get("per_query_metrics") or [])
    out.setdefault("config", {})["per_query_metrics"] = wanted + [m for m in extra if m not in wanted]
    return out


def _value(result: dict[str, Any], metric: str, seed: int) -> tuple[float | None, list[float] | None, int]:
    """The per-query mean of ``metric`` (nulls excluded), its bootstrap 95% CI and n."""
    from drivebench.evaluator.stats import bootstrap_ci

    vals = np.array(
        [math.nan if r.get(metric) is None else float(r[metric]) for r in result.get("per_query") or []],
        dtype=np.float64,
    )
    vals = vals[~np.isnan(vals)]
    if not len(vals):
        return None, None, 0
    ci = bootstrap_ci(vals, seed=seed)
    return float(vals.mean()), (list(ci) if ci else None), len(vals)


def _significant(row: dict[str, Any]) -> bool:
    ci, p = row.get("diff_ci"), row.get("p_holm")
    return ci is not None and p is not None and p < ALPHA and (ci[0] > 0 or ci[1] < 0)


def _improved(row: dict[str, Any], metric: str) -> bool:
    if not _significant(row) or row.get("diff") is None:
        return False
    return row["diff"] < 0 if _lower_is_better(metric) else row["diff"] > 0


def _headline_metrics(names: Sequence[str], ks: Sequence[int], chosen: Sequence[str]) -> list[str]:
    if chosen:
        return [m for m in chosen if m in names]
    k = max(ks)
    wanted = [f"hit_rate@{x}" for x in ks] + [f"recall@{k}", f"mrr@{k}", f"ndcg@{k}"]
    wanted += ["multi_hop_completeness", *sorted(n for n in names if n.startswith("multi_hop_completeness["))]
    wanted += ["full_chain_rate", *sorted(n for n in names if n.startswith("full_chain_rate["))]
    wanted += ["source_coverage_macro", "citation_precision", f"leak_rate@{k}", f"stale_version_hit_rate@{k}"]
    return [m for m in wanted if m in names]


def metric_table(
    results: Sequence[dict[str, Any]], configs: Sequence[ConfigSpec], seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Per metric: a row per configuration (value, CI, n, paired difference to the baseline with its CI, p-value and
    Holm-adjusted p-value over the variants). The baseline's own row compares it with itself: diff 0, p 1."""
    from drivebench.evaluator.compare_runs import compare_runs
    from drivebench.evaluator.scoring import compare

    augmented = [augment(r) for r in results]
    comparisons = compare_runs(augmented, seed=seed)
    self_cmp = compare(augmented[0], augmented[0], seed=seed)["metrics"]
    names = list(dict.fromkeys([m for c in comparisons for m in c["metrics"]] + list(self_cmp)))
    tables: dict[str, dict[str, Any]] = {}
    for name in names:
        rows = []
        for i, (cfg, res) in enumerate(zip(configs, augmented, strict=True)):
            value, ci, n = _value(res, name, seed)
            cmp = self_cmp.get(name) if i == 0 else comparisons[i - 1]["metrics"].get(name)
            cmp = cmp or {}
            row = {
                "config": cfg.name,
                "lever": cfg.lever,
                "value": value,
                "ci": ci,
                "n": n,
                "diff": cmp.get("diff"),
                "diff_ci": cmp.get("ci"),
                "p_value": cmp.get("p_value"),
                "p_holm": (cmp.get("p_value") if i == 0 else cmp.get("p_holm")),
                "n_paired": cmp.get("n", 0),
            }
            row["significant"] = _significant(row) if i else False
            row["verdict"] = (
                ("better" if _improved(row, name) else "worse")
                if row["significant"]
                else ("baseline" if i == 0 else "")
            )
            rows.append(row)
        tables[name] = {"lower_is_better": _lower_is_better(name), "rows": rows}
    return tables


def moved_most(table: dict[str, Any] | None, metric: str) -> dict[str, Any]:
    """The configuration with the largest significant improvement on ``metric``, or why there is none."""
    if table is None or all(r["value"] is None for r in table["rows"]):
        return {"metric": metric, "config": None, "line": "not measured"}
    improved = [r for r in table["rows"][1:] if _improved(r, metric)]
    if not improved:
        line = "no lever moved it significantly"
        sign = -1.0 if _lower_is_better(metric) else 1.0
        ups = [r for r in table["rows"][1:] if r.get("diff") is not None and sign * r["diff"] > 0]
        if ups:  # the largest move in the good direction, for information: not a finding
            top = max(ups, key=lambda r: sign * r["diff"])
            line += (
                f" (largest, not significant: {top['config']} {_fmt_diff(top['diff'], top['diff_ci'])}, "
                f"p (Holm) {_p_text(top['p_holm'])})"
            )
        return {"metric": metric, "config": None, "line": line}
    best = max(improved, key=lambda r: abs(r["diff"]))
    return {
        "metric": metric,
        "config": best["config"],
        "lever": best["lever"],
        "diff": best["diff"],
        "diff_ci": best["diff_ci"],
        "p_holm": best["p_holm"],
        "line": f"{best['config']} ({best['lever']}) {_fmt_diff(best['diff'], best['diff_ci'])}, "
        f"p (Holm) {_p_text(best['p_holm'])}",
    }


def _fmt_diff(diff: float | None, ci: Sequence[float] | None) -> str:
    if diff is None:
        return "—"
    return f"{diff:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def _p_text(p: float | None) -> str:
    return "—" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def _base(tables: dict[str, Any], metric: str) -> float | None:
    t = tables.get(metric)
    return None if t is None else t["rows"][0]["value"]


def diagnose(tables: dict[str, Any], ks: Sequence[int]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The article's rules on the baseline, per metric, and for each of its three metrics the lever that moved it
    most. Returns (diagnosis lines ``{"metric", "finding", "remedy", "moved"}``, moved-most by metric key)."""
    k = max(ks)
    hr_metric = f"hit_rate@{k}"
    moved = {
        "hit_rate": moved_most(tables.get(hr_metric), hr_metric),
        "source_coverage": moved_most(tables.get("source_coverage_macro"), "source_coverage_macro"),
        "multi_hop_completeness": moved_most(tables.get("multi_hop_completeness"), "multi_hop_completeness"),
    }
    lines: list[dict[str, Any]] = []
    hr = _base(tables, hr_metric)
    if hr is None:
        lines.append(
            {"metric": "Hit Rate", "finding": "not measured", "remedy": "", "moved": moved["hit_rate"]["line"]}
        )
    else:
        low = hr < HIT_RATE_LOW
        lines.append(
            {
                "metric": "Hit Rate",
                "finding": f"Hit Rate@{k} {hr:.3f} " + (f"is low (< {HIT_RATE_LOW:.2f})" if low else "is not low"),
                "remedy": "a better embedder or chunking strategy, or deep search to widen the recall path"
                if low
                else "recall is not the bottleneck",
                "moved": moved["hit_rate"]["line"],
            }
        )
    sc = _base(tables, "source_coverage_macro")
    if sc is None:
        lines.append(
            {
                "metric": "Source Coverage",
                "finding": "not measured (run with answers = true)",
                "remedy": "",
                "moved": moved["source_coverage"]["line"],
            }
        )
    else:
        cp = _base(tables, "citation_precision")
        low = sc < SOURCE_COVERAGE_LOW
        layer = ""
        if low and hr is not None and hr >= HIT_RATE_LOW:
            layer = "; recalled but not cited: the generation layer"
        if cp is not None and cp < SOURCE_COVERAGE_LOW:
            layer += f"; citation precision {cp:.3f}: cited but wrong points at retrieval"
        lines.append(
            {
                "metric": "Source Coverage",
                "finding": f"Source Coverage {sc:.3f} "
                + (f"is low (< {SOURCE_COVERAGE_LOW:.2f})" if low else "is not low")
                + layer,
                "remedy": "check that the generation prompt requires citing the source text (answer citation knobs)"
                if low
                else "answers cite what they use",
                "moved": moved["source_coverage"]["line"],
            }
        )
    per_hop = sorted(
        (int(m[len("multi_hop_completeness[") : -1]), m) for m in tables if m.startswith("multi_hop_completeness[")
    )
    if not per_hop:
        lines.append(
            {
                "metric": "Multi-hop Completeness",
                "finding": "not measured (the eval set has no multi-hop questions)",
                "remedy": "",
                "moved": moved["multi_hop_completeness"]["line"],
            }
        )
    else:
        values = [(h, _base(tables, m)) for h, m in per_hop]
        shown = ", ".join(f"{h}-hop {v:.3f}" for h, v in values if v is not None)
        (_h0, v0), (hn, vn) = values[0], values[-1]
        falls = v0 is not None and vn is not None and len(values) > 1 and vn < v0 - HOP_FALL
        deepest = moved_most(tables.get(f"multi_hop_completeness[{hn}]"), f"multi_hop_completeness[{hn}]")
        deep_line = (
            f"{deepest['config']} moved {hn}-hop {_fmt_diff(deepest['diff'], deepest['diff_ci'])}"
            if deepest["config"]
            else f"no lever moved {hn}-hop significantly"
        )
        lines.append(
            {
                "metric": "Multi-hop Completeness",
                "finding": ("falls with hops" if falls else "does not fall with hops") + f" ({shown}): {deep_line}",
                "remedy": "hierarchical retrieval: locate the file or folder first, then recall passages inside it"
                if falls or (vn is not None and vn < HIT_RATE_LOW)
                else "multi-hop recall is not the bottleneck",
                "moved": moved["multi_hop_completeness"]["line"],
                "deepest": deepest,
            }
        )
    return lines, moved


def analyse(run: ExperimentRun) -> dict[str, Any]:
    """The experiment's report payload (what ``experiment.json`` holds)."""
    spec = run.spec
    datasets = []
    exit_code = EXIT_OK
    for ds in spec.datasets:
        runs = [run.runs.get((ds.id, c.name)) for c in spec.configs]
        status = []
        for c, r in zip(spec.configs, runs, strict=True):
            res = r.result if r is not None else None
            leaks = ((res or {}).get("counts") or {}).get("queries_with_leak") or 0
            state = r.state if r is not None else "not run"
            if state == "failed" or leaks:
                exit_code = EXIT_FAILED
            status.append(
                {
                    "config": c.name,
                    "lever": c.lever,
                    "state": state,
                    "reason": ((res or {}).get("status") or {}).get("reason"),
                    "ran": bool(r and r.ran),
                    "resumed_records": r.resumed if r else 0,
                    "queries_with_leak": leaks,
                    "elapsed_s": round(r.elapsed_s, 2) if r and r.ran else None,  # None: reused, not timed here
                    "index_s": round(r.index_s, 2) if r and r.ran else None,
                    "dir": str(r.dir) if r else None,
                }
            )
        entry: dict[str, Any] = {"id": ds.id, "corpus": ds.corpus, "evalset": str(ds.evalset or ""), "runs": status}
        complete = [r for r in runs if r is not None and r.result is not None and r.state != "partial"]
        if len(complete) == len(spec.configs):
            results = [r.result for r in complete if r.result is not None]  # every run, in order
            info = results[0].get("run_info") or {}
            entry.update(corpus_version=info.get("corpus_version"), evalset=info.get("evalset"))
            entry["queries"] = len(results[0].get("per_query") or [])
            tables = metric_table(results, spec.configs, spec.seed)
            entry["headline_metrics"] = _headline_metrics(list(tables), spec.ks, spec.metrics)
            entry["metrics"] = tables
            entry["diagnosis"], entry["moved_most"] = diagnose(tables, spec.ks)
        else:
            entry["incomplete"] = "not every configuration has a complete run: re-run the command to finish"
        datasets.append(entry)
    if run.interrupted:
        exit_code = EXIT_INTERRUPTED
    return {
        "experiment": {
            "name": spec.name,
            "file": str(spec.path) if spec.path else None,
            "results_dir": str(run.results_dir),
            "elapsed_s": round(run.elapsed_s, 2),
            "index_builds": run.index_builds,
            "interrupted": run.interrupted,
            "alpha": ALPHA,
            "method": "paired bootstrap 95% CI of the difference (1,000 resamples), two-sided sign-flip randomization "
            "p-value (10,000 permutations), Holm's adjustment over the variants, per metric",
        },
        "configs": [
            {
                "name": c.name,
                "lever": c.lever,
                "baseline": c.baseline,
                "changes": jsonable(c.changes),
                "top_k": c.top_k,
                "answers": c.answers,
                "sim": jsonable(dataclasses.asdict(c.sim)),
            }
            for c in spec.configs
        ],
        "datasets": datasets,
        "exit_code": exit_code,
    }
