"""Train the shipped reranker (``search.retrieval.rerank``) on generated corpora only.

``python -m drivebench.experiments.train_reranker [--seeds 11,23] [--out DIR]`` builds acme-zh@3 and
acme-en@3 with each seed (never the default one: the default builds are what the model is checked on, by
``benchmarks/bench_rerank.py``), indexes them with the default embedder, and for every eval question asks
the default pipeline for its best ``DEFAULT_DEPTH`` documents as the question's user (the same masks as a
recall). Label of a candidate: its gold grade (0 when not gold). LightGBM ``lambdarank`` (Burges 2010)
with fixed seeds, ``deterministic=True`` and one thread; the number of trees is chosen by early stopping
on NDCG@10 of the last seed's questions, then the model is refit on every seed with that many trees.
Writes ``models/rerank-v1.json`` (the trees, scored with numpy at run time) and ``rerank-v1.meta.json``
(the training data's fingerprint: corpora, seeds, eval-set hashes, feature list, LightGBM version,
parameters, and the weights' SHA-256 the loader checks). Needs ``lightgbm`` (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.evaluator.evaluate import evalset_hash
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE, DocHit, Retriever
from drivebench.search.retrieval.rerank import (
    DEFAULT_DEPTH,
    FEATURES,
    MODEL_DIR,
    RERANKERS,
    RerankingRetriever,
    TreeEnsemble,
    sha256_file,
)
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

DEFAULT_SEEDS = (11, 23)  # the corpora's default seed is 7: never trained on
LANGUAGES = ("zh", "en")
PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [10],
    "lambdarank_truncation_level": 10,
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "seed": 0,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "verbosity": -1,
}
MAX_TREES = 400
EARLY_STOP = 30


class _Recorder(RerankingRetriever):
    """The base pipeline's candidates and features as a recall would see them; results in pipeline order."""

    def __init__(self, base: Retriever) -> None:
        self.base, self.depth, self.rerank = base, DEFAULT_DEPTH, "record"
        self.last: tuple[list[DocHit], np.ndarray] | None = None

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        hits, x = self.candidates(query, mask, top_k)
        self.last = (hits, x)
        return hits[:top_k]


def collect(sim: Simulator, queries: list[EvalQuery]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Feature rows, labels and group sizes (one group per question with a gold document among its candidates)."""
    recorder = _Recorder(sim.retriever)  # type: ignore[arg-type]
    sim.retriever = recorder  # type: ignore[assignment]
    target = InProcessTarget(sim)
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    groups: list[int] = []
    for q in queries:
        recorder.last = None
        asyncio.run(target.recall(q, DEFAULT_DEPTH))
        if recorder.last is None:
            continue
        hits, x = recorder.last
        grade = {g.doc_id: g.grade for g in q.gold}
        y = np.asarray([grade.get(h.doc_id, 0) for h in hits], dtype=np.int32)
        if not len(hits) or not y.any():
            continue
        xs.append(x)
        ys.append(y)
        groups.append(len(hits))
    sim.retriever = recorder.base
    return np.concatenate(xs), np.concatenate(ys), groups


def data_digest(parts: list[tuple[np.ndarray, np.ndarray, list[int]]]) -> str:
    h = hashlib.sha256()
    for x, y, groups in parts:
        h.update(np.ascontiguousarray(x, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(y, dtype=np.int32).tobytes())
        h.update(np.asarray(groups, dtype=np.int64).tobytes())
    return h.hexdigest()


def build(label: str, seed: int) -> tuple[Path, dict[str, Any], tuple[np.ndarray, np.ndarray, list[int]]]:
    corpus_dir = resolve_corpus(label, seed=seed)
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(pipeline=DEFAULT_PIPELINE))
    started = time.perf_counter()
    sim.ingest_all()
    # every question encoded ahead in fixed full batches: the same vectors on every run of the script
    sim.retriever.query_batcher.prime([q.query for q in queries])
    data = collect(sim, queries)
    print(
        f"  {label} seed {seed}: {len(queries)} questions, {len(data[2])} with gold among the candidates, "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    info = {
        "corpus": label,
        "seed": seed,
        "scale": "default",
        "corpus_dir": corpus_dir.name,
        "evalset_hash": evalset_hash(corpus_dir / EVALSET_NAME),
        "questions": len(queries),
        "groups": len(data[2]),
    }
    return corpus_dir, info, data


def train(seeds: tuple[int, ...], out: Path) -> dict[str, Any]:
    import lightgbm as lgb

    if 7 in seeds:
        raise SystemExit("seed 7 is the corpora's default: the reranker is checked on it, never trained on it")
    parts: list[tuple[int, tuple[np.ndarray, np.ndarray, list[int]]]] = []
    corpora = []
    for seed in seeds:
        for lang in LANGUAGES:
            _, info, data = build(f"acme-{lang}@3", seed)
            corpora.append(info)
            parts.append((seed, data))

    def stack(chosen: list[tuple[np.ndarray, np.ndarray, list[int]]]) -> Any:
        return lgb.Dataset(
            np.concatenate([d[0] for d in chosen]),
            np.concatenate([d[1] for d in chosen]),
            group=[g for d in chosen for g in d[2]],
            feature_name=list(FEATURES),
            free_raw_data=False,
        )

    held = seeds[-1]
    fit = [d for s, d in parts if s != held] or [d for _, d in parts]
    valid = [d for s, d in parts if s == held]
    probe = lgb.train(
        PARAMS,
        stack(fit),
        num_boost_round=MAX_TREES,
        valid_sets=[stack(valid)],
        callbacks=[lgb.early_stopping(EARLY_STOP, verbose=False)],
    )
    trees = max(1, probe.best_iteration)
    every = [d for _, d in parts]
    booster = lgb.train(PARAMS, stack(every), num_boost_round=trees)
    ensemble = TreeEnsemble.from_dump(booster.dump_model())
    x_all = np.concatenate([d[0] for d in every])
    gap = float(np.abs(ensemble.score(x_all) - booster.predict(x_all)).max())
    if gap > 1e-6:
        raise SystemExit(f"the numpy scorer disagrees with LightGBM by {gap}: not writing the model")
    stem = RERANKERS["ltr"]
    out.mkdir(parents=True, exist_ok=True)
    weights = out / f"{stem}.json"
    weights.write_text(json.dumps(ensemble.to_json(), separators=(",", ":")) + "\n", encoding="utf-8")
    meta = {
        "name": "ltr",
        "model": "LightGBM lambdarank (Burges 2010, LambdaMART)",
        "features": list(FEATURES),
        "depth": DEFAULT_DEPTH,
        "pipeline": DEFAULT_PIPELINE,
        "embedder": SimConfig().embedder,
        "corpora": corpora,
        "seeds": list(seeds),
        "held_out_for_tree_count": held,
        "trees": trees,
        "validation_ndcg@10": round(float(probe.best_score["valid_0"]["ndcg@10"]), 6),
        "rows": len(x_all),
        # the exact training matrix, labels and groups: two runs trained on the same data when these agree
        "data_sha256": data_digest(every),
        "lightgbm": lgb.__version__,
        "params": PARAMS,
        "numpy_vs_lightgbm_max_gap": gap,
        "weights_sha256": sha256_file(weights),
        "trained_with": "python -m drivebench.experiments.train_reranker",
    }
    (out / f"{stem}.meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)), help="corpus seeds (not 7)")
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="where the model files go")
    args = parser.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(",") if s)
    meta = train(seeds, args.out)
    print(f"{meta['trees']} trees, validation NDCG@10 {meta['validation_ndcg@10']}, {meta['rows']} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
