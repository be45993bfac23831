"""``drivebench experiment FILE.toml``: the file is checked before anything runs, a grid of configurations on the
seed corpus gives a row per configuration per metric with paired differences to the baseline, the lever that moved a
metric most is the one with the largest significant improvement, and a re-run skips what is complete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.evaluator.options import EvalOptions
from drivebench.evaluator.runner import Interrupt
from drivebench.experiments.grid import diagnose, metric_table, moved_most, parse_spec, run_experiment

SEED_GRID = """
[experiment]
name = "seedgrid"
corpus = "seed"
answers = true

[baseline]
name = "bm25"
pipeline = "bm25"
embedder = "hash"

[[variant]]
name = "dense"
pipeline = "dense"

[[variant]]
name = "top1"
lever = "top_k=1"
top_k = 1
"""


def _write(tmp: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def _run(toml: Path, out: Path) -> Any:
    return CliRunner().invoke(app, ["experiment", str(toml), "--results", str(out)], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def seed_grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    tmp = tmp_path_factory.mktemp("experiment")
    toml = _write(tmp, SEED_GRID)
    out = tmp / "results"
    done = _run(toml, out)
    return toml, out, done


def _payload(out: Path) -> dict[str, Any]:
    return json.loads((out / "experiment.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("table", "bad"),
    [
        ('[[variant]]\npipelin = "bm25"\n', "pipelin"),
        ("[[variant]]\n[variant.chunking]\nmax_char = 300\n", "chunking.max_char"),
        ('[baseline]\nembeder = "hash"\n[[variant]]\npipeline = "bm25"\n', "embeder"),
    ],
)
def test_an_unknown_key_exits_2_naming_it_and_the_known_ones(tmp_path: Path, table: str, bad: str) -> None:
    toml = _write(tmp_path, '[experiment]\ncorpus = "seed"\n' + table)
    done = _run(toml, tmp_path / "out")
    assert done.exit_code == 2, done.output
    assert f"unknown key '{bad}'" in done.output
    assert "pipeline" in done.output and "chunking.max_chars" in done.output  # the known keys are listed
    assert not (tmp_path / "out").exists()  # nothing ran


def test_an_unknown_pipeline_and_a_bad_value_exit_2(tmp_path: Path) -> None:
    toml = _write(tmp_path, '[experiment]\ncorpus = "seed"\n[[variant]]\npipeline = "nope"\n')
    done = _run(toml, tmp_path / "out")
    assert done.exit_code == 2 and "unknown pipeline 'nope'" in done.output and "bm25" in done.output
    toml = _write(tmp_path, '[experiment]\ncorpus = "seed"\n[[variant]]\nchunking.max_chars = "big"\n')
    done = _run(toml, tmp_path / "out")
    assert done.exit_code == 2 and "chunking.max_chars" in done.output


def test_nested_and_dotted_keys_set_the_same_field_and_only_index_fields_split_the_index() -> None:
    spec = parse_spec(
        {
            "experiment": {"corpus": "seed"},
            "baseline": {"embedder": "hash"},
            "variant": [
                {"name": "a", "chunking": {"max_chars": 300}},
                {"name": "b", "chunking.max_chars": 300},
                {"name": "c", "pipeline": "dense", "top_k": 5},
            ],
        }
    )
    base, a, b, c = spec.configs
    assert a.sim.chunking.max_chars == b.sim.chunking.max_chars == 300
    assert a.sim.embedder == "hash"  # a variant is the baseline plus its own keys
    assert a.index_key() == b.index_key() != base.index_key()
    assert c.index_key() == base.index_key() and c.top_k == 5 and c.lever == "pipeline=dense, top_k=5"


def test_a_grid_of_three_on_seed_has_a_row_per_config_per_metric(seed_grid: tuple[Path, Path, Any]) -> None:
    _, out, done = seed_grid
    assert done.exit_code == 0, done.output
    payload = _payload(out)
    ds = payload["datasets"][0]
    assert [c["name"] for c in payload["configs"]] == ["bm25", "dense", "top1"]
    assert payload["experiment"]["index_builds"] == 1  # the three differ only in query-time options
    for metric in ("hit_rate@10", "mrr@10", "multi_hop_completeness", "multi_hop_completeness[2]",
                   "source_coverage_macro", "citation_precision", "leak_rate@10"):  # fmt: skip
        rows = ds["metrics"][metric]["rows"]
        assert [r["config"] for r in rows] == ["bm25", "dense", "top1"]
        base = rows[0]
        assert base["diff"] == 0 and base["diff_ci"] == [0.0, 0.0]
        assert base["p_holm"] == 1.0 and not base["significant"]
        assert all(r["value"] is not None and r["ci"] is not None for r in rows)
    assert [r["state"] for r in ds["runs"]] == ["complete"] * 3 and all(r["ran"] for r in ds["runs"])


def test_a_clearly_worse_variant_shows_a_negative_difference_with_its_ci(seed_grid: tuple[Path, Path, Any]) -> None:
    _, out, _ = seed_grid
    ds = _payload(out)["datasets"][0]
    worse = ds["metrics"]["recall@10"]["rows"][2]  # top_k=1: nine of the ten ranks are never returned
    assert worse["config"] == "top1"
    assert worse["diff"] < -0.1 and worse["diff_ci"][1] < 0 and worse["p_holm"] < 0.05
    assert worse["verdict"] == "worse"
    hit = ds["metrics"]["hit_rate@10"]["rows"][2]
    assert hit["diff"] < 0 and hit["diff_ci"][0] < hit["diff"] <= hit["diff_ci"][1] < 0
    assert ds["moved_most"]["hit_rate"]["config"] != "top1"


def test_reports_are_written_and_the_html_has_no_script(seed_grid: tuple[Path, Path, Any]) -> None:
    _, out, _ = seed_grid
    md = (out / "experiment.md").read_text(encoding="utf-8")
    html = (out / "experiment.html").read_text(encoding="utf-8")
    assert "### Hit Rate@10 (`hit_rate@10`)" in md and "| top1 | top_k=1 |" in md
    assert "Multi-hop Completeness" in md and "moved" in md
    assert "<script" not in html.lower() and "Content-Security-Policy" in html
    assert 'data-report="experiment"' in html and "top_k=1" in html
    for name in ("bm25", "dense", "top1"):
        assert (out / "seed" / name / "metrics.json").is_file()
        assert (out / "seed" / name / "run.jsonl").is_file()


def test_a_rerun_skips_complete_configs_and_runs_a_new_one(seed_grid: tuple[Path, Path, Any]) -> None:
    toml, out, _ = seed_grid
    again = _run(toml, out)
    assert again.exit_code == 0, again.output
    runs = _payload(out)["datasets"][0]["runs"]
    assert [r["ran"] for r in runs] == [False, False, False]
    assert _payload(out)["experiment"]["index_builds"] == 0
    more = _write(toml.parent, SEED_GRID + '\n[[variant]]\nname = "hybrid"\npipeline = "hybrid"\n', "more.toml")
    third = _run(more, out)
    assert third.exit_code == 0, third.output
    runs = _payload(out)["datasets"][0]["runs"]
    assert [(r["config"], r["ran"]) for r in runs] == [
        ("bm25", False),
        ("dense", False),
        ("top1", False),
        ("hybrid", True),
    ]


def test_an_interrupted_run_keeps_its_records_and_the_rerun_resumes_it(tmp_path: Path) -> None:
    spec = parse_spec(
        {
            "experiment": {"corpus": "seed", "concurrency": 1},
            "baseline": {"pipeline": "bm25", "embedder": "hash"},
            "variant": [{"name": "dense", "pipeline": "dense"}],
        }
    )
    stop = Interrupt(grace_s=1.0)

    def progress(done: int, total: int, what: str) -> None:
        if done >= 20:
            stop.trigger("test")

    first = run_experiment(spec, tmp_path, progress=progress, interrupt=stop)
    assert first.interrupted
    base = first.runs[("seed", "baseline")]
    assert base.state == "partial" and base.result["partial"]
    assert ("seed", "dense") not in first.runs or not first.runs[("seed", "dense")].ran
    second = run_experiment(spec, tmp_path)
    assert not second.interrupted
    resumed = second.runs[("seed", "baseline")]
    assert resumed.ran and resumed.resumed >= 20 and resumed.state == "complete"
    assert second.runs[("seed", "dense")].state == "complete"


def _result(hits: list[int], name: str) -> dict[str, Any]:
    return {
        "config": {"per_query_metrics": ["hit_rate@10"]},
        "run_info": {"label": name},
        "per_query": [{"query_id": f"q{i}", "hit_rate@10": float(h)} for i, h in enumerate(hits)],
    }


def test_moved_most_names_the_largest_significant_improvement() -> None:
    spec = parse_spec(
        {
            "experiment": {"corpus": "seed"},
            "variant": [
                {"name": "small-gain", "pipeline": "bm25"},
                {"name": "big-gain", "pipeline": "dense"},
                {"name": "loss", "top_k": 3},
            ],
        }
    )
    n = 60
    base = [1] * 20 + [0] * 40
    small = [1] * 28 + [0] * 32  # +8 queries
    big = [1] * 50 + [0] * 10  # +30 queries
    loss = [1] * 5 + [0] * 55
    tables = metric_table([_result(h, c.name) for h, c in zip([base, small, big, loss], spec.configs, strict=True)],
                          spec.configs)  # fmt: skip
    assert len(base) == n
    best = moved_most(tables["hit_rate@10"], "hit_rate@10")
    assert best["config"] == "big-gain" and best["diff"] == pytest.approx(0.5)
    lines, moved = diagnose(tables, (1, 10))
    assert moved["hit_rate"]["config"] == "big-gain"
    assert "big-gain" in lines[0]["moved"] and "is low" in lines[0]["finding"]
    assert moved["source_coverage"]["line"] == "not measured"
    flat = metric_table([_result(base, c.name) for c in spec.configs], spec.configs)
    assert moved_most(flat["hit_rate@10"], "hit_rate@10")["line"] == "no lever moved it significantly"
    few = [1] * 22 + [0] * 38  # +2 queries: a move, not a significant one
    weak = metric_table([_result(h, c.name) for h, c in zip([base, few, base, loss], spec.configs, strict=True)],
                        spec.configs)  # fmt: skip
    line = moved_most(weak["hit_rate@10"], "hit_rate@10")["line"]
    assert line.startswith("no lever moved it significantly (largest, not significant: small-gain +0.033")
    assert moved_most(weak["hit_rate@10"], "hit_rate@10")["config"] is None


def test_a_reused_index_answers_like_a_simulator_built_for_the_config(seed_grid: tuple[Path, Path, Any]) -> None:
    from drivebench.api import evaluate, load_simulator
    from drivebench.simulator.backend import SimConfig

    _, out, _ = seed_grid
    shared = json.loads((out / "seed" / "dense" / "metrics.json").read_text(encoding="utf-8"))
    sim = load_simulator("seed", config=SimConfig(pipeline="dense", embedder="hash"))
    own = evaluate(sim, sim.corpus_dir / "evalset.jsonl", EvalOptions(preflight=False)).result
    key = "recall@10"
    assert {r["query_id"]: r[key] for r in shared["per_query"]} == {r["query_id"]: r[key] for r in own["per_query"]}
    bm25 = json.loads((out / "seed" / "bm25" / "metrics.json").read_text(encoding="utf-8"))
    assert [r["mrr@10"] for r in bm25["per_query"]] != [r["mrr@10"] for r in shared["per_query"]]  # not one pipeline


def test_a_leaking_config_exits_1_and_a_changed_evalset_runs_again(tmp_path: Path) -> None:
    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.experiments.grid import EXIT_FAILED, analyse

    lines = (resolve_corpus("seed") / "evalset.jsonl").read_text(encoding="utf-8").splitlines()
    evalset = tmp_path / "evalset.jsonl"
    evalset.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    spec = parse_spec(
        {
            "experiment": {"corpus": "seed", "evalset": str(evalset)},
            "baseline": {"pipeline": "bm25", "embedder": "hash"},
            "variant": [{"name": "dense", "pipeline": "dense"}],
        },
        tmp_path / "exp.toml",
    )
    run = run_experiment(spec, tmp_path / "out")
    assert analyse(run)["exit_code"] == 0 and len(run.ran) == 2
    run.runs[("seed--evalset", "dense")].result["counts"]["queries_with_leak"] = 1  # as a leaking run reports it
    assert analyse(run)["exit_code"] == EXIT_FAILED
    assert len(run_experiment(spec, tmp_path / "out").ran) == 0
    evalset.write_text("\n".join(lines[:25]) + "\n", encoding="utf-8")  # another eval set: no run is reused
    again = run_experiment(spec, tmp_path / "out")
    assert len(again.ran) == 2 and len(again.runs[("seed--evalset", "baseline")].result["per_query"]) == 25


@pytest.mark.e2e
def test_a_config_over_http_scores_like_the_same_config_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drivebench.api import load_simulator, serve
    from drivebench.simulator.backend import SimConfig

    sim = load_simulator("seed", config=SimConfig(pipeline="bm25", embedder="hash"))
    server = serve(sim)
    try:
        monkeypatch.setenv("SEED_EVAL_TOKEN", sim.tokens.eval_token)
        toml = _write(
            tmp_path,
            '[experiment]\ncorpus = "seed"\nanswers = true\n[baseline]\npipeline = "bm25"\nembedder = "hash"\n'
            f'[[variant]]\nname = "served"\nurl = "{server.url}"\ntoken_env = "SEED_EVAL_TOKEN"\n',
        )
        done = _run(toml, tmp_path / "out")
    finally:
        server.stop()
    assert done.exit_code == 0, done.output
    ds = _payload(tmp_path / "out")["datasets"][0]
    for metric in ("hit_rate@10", "mrr@10", "multi_hop_completeness", "source_coverage_macro"):
        served = ds["metrics"][metric]["rows"][1]
        assert served["config"] == "served" and served["diff"] == 0 and served["n_paired"] > 0, metric
    recorded = (tmp_path / "out" / "seed" / "served" / "run_config.json").read_text(encoding="utf-8")
    assert sim.tokens.eval_token not in recorded  # the token is never written


def test_a_url_config_without_its_token_or_with_simulator_keys_exits_2(tmp_path: Path) -> None:
    toml = _write(
        tmp_path,
        '[experiment]\ncorpus = "seed"\n[[variant]]\nurl = "http://127.0.0.1:9"\ntoken_env = "NO_SUCH_TOKEN_VAR"\n',
    )
    done = _run(toml, tmp_path / "out")
    assert done.exit_code == 2 and "NO_SUCH_TOKEN_VAR" in done.output
    assert not (tmp_path / "out" / "seed").exists()
    toml = _write(tmp_path, '[experiment]\ncorpus = "seed"\n[[variant]]\nurl = "http://x"\npipeline = "bm25"\n')
    done = _run(toml, tmp_path / "out")
    assert done.exit_code == 2 and "pipeline" in done.output and "endpoint" in done.output


def test_query_time_options_switch_the_loaded_simulator_like_a_new_one() -> None:
    """The reranker and the pipeline follow a reconfigured simulator (its retriever is rebuilt, not the cached one
    of the same pipeline), and an index-time field cannot be switched."""
    from dataclasses import replace

    from drivebench.api import load_simulator
    from drivebench.experiments.grid import apply_query_config
    from drivebench.simulator.backend import SimConfig

    base = SimConfig(pipeline="hybrid", embedder="hash")
    sim = load_simulator("seed", config=base)
    apply_query_config(sim, replace(base, rerank="ltr"))
    assert sim.rerank_record() is not None and sim.config.rerank == "ltr"
    fresh = load_simulator("seed", config=replace(base, rerank="ltr"))
    principal = sim.engine.user_principal("u003")
    for query in ("项目X 技术方案", "预算", "员工手册 年假"):
        mine = [h.doc_id for h in sim.recall(principal, query, top_k=5).hits]
        theirs = [h.doc_id for h in fresh.recall(fresh.engine.user_principal("u003"), query, top_k=5).hits]
        assert mine == theirs, query
    apply_query_config(sim, base)
    assert sim.rerank_record() is None
    with pytest.raises(ValueError, match="embedder is fixed"):
        apply_query_config(sim, replace(base, embedder="e5"))


def test_the_shipped_article_experiment_parses_and_has_a_lever_for_each_of_the_articles_metrics() -> None:
    import tomllib

    path = Path(__file__).resolve().parents[2] / "experiments" / "article.toml"
    spec = parse_spec(tomllib.loads(path.read_text(encoding="utf-8")), path)
    configs = {c.name: c for c in spec.configs}
    assert configs["hybrid"].baseline and spec.datasets[0].corpus == "acme-zh@3"
    # each lever alone from one fused round without the reranker (the default has two of them on)
    assert (configs["hybrid"].sim.pipeline, configs["hybrid"].sim.rerank) == ("hybrid", None)
    assert all(c.sim.rerank is None for c in spec.configs if c.name != "rerank")
    assert all(c.answers for c in spec.configs)  # answer mode: Source Coverage is measured for every lever
    # Hit Rate: retrieval model, embedder, chunking, reranker; multi-hop: the pipelines; Source Coverage: the answer
    assert {c.sim.pipeline for c in spec.configs} >= {"hybrid", "bm25", "dense", "hierarchical", "deep", "prf"}
    assert configs["rerank"].sim.rerank == "ltr" and configs["hash-embedder"].sim.embedder == "hash"
    assert configs["cite-some"].sim.answer_citation == "some" and configs["read-6-passages"].sim.answer_passages == 6
    assert all(c.lever and c.changes for c in spec.configs if not c.baseline)  # each variant says what it changes
