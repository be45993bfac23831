"""``drivebench experiment FILE.toml``: a grid of simulator configurations run against the same eval sets in one
command, each compared with the baseline metric by metric, and the article's diagnosis rules applied.

The file (``load_spec``)::

    [experiment]
    name = "article"
    corpora = ["acme-zh@3"]          # or corpus = "..."; built-in names or corpus directories
    evalsets = []                    # default: each corpus's own evalset.jsonl; paths are relative to the file
    answers = true                   # answer mode: Source Coverage and citation precision are measured too
    ks = [1, 3, 5, 10]

    [baseline]                       # any SimConfig field by name; nested tables (or dotted keys) for extract/chunking
    name = "default"

    [[variant]]                      # each variant is the baseline plus its own keys
    name = "bm25"
    pipeline = "bm25"

    [grid]                           # or/and: the cartesian product of axes, each combination over the baseline
    "chunking.max_chars" = [300, 800]

Besides the ``SimConfig`` fields a configuration may set ``top_k`` (the recall depth sent), ``answers`` (answer mode
on or off), ``name`` and ``lever`` (a label for the reports; by default the keys that differ from the baseline), or
``url`` (an endpoint queried over HTTP instead of a simulator, with the evaluation token from the environment
variable ``token_env``, default ``DRIVEBENCH_TOKEN``).
An unknown key is a ``SpecError`` naming it and the known ones (exit 2), before anything is loaded.

Running (``run_experiment``): in process, one simulator per distinct (corpus, index-time fields: embedder, extract,
chunking, index, vector store, cache) built once; configurations that differ only in query-time fields (pipeline and
any other field not in ``INDEX_FIELDS``, top_k, answers) reuse it, the simulator's ``config`` and retriever swapped
(or its ``reconfigure(config)`` when it has one). Each configuration's run is a run directory under
``results/DATASET/CONFIG`` (``run_config.json``, ``run.jsonl`` as it goes, ``metrics.json``): a configuration whose
run is complete with the same settings is not run again; a partial one (Ctrl-C) is resumed.

Comparing (``analyse``): every configuration against the baseline by ``compare_runs`` (paired bootstrap CI of the
difference, sign-flip randomization p-value, Holm's adjustment over the variants), on the per-query metrics plus
multi-hop completeness and full-chain rate per hop count and, with answers, Source Coverage and citation precision.

The parts: ``spec`` (the file), ``runs`` (running it), ``analysis`` (comparing and diagnosing).
"""

from drivebench.experiments.grid.analysis import analyse, augment, diagnose, metric_table, moved_most
from drivebench.experiments.grid.runs import ConfigRun, ExperimentRun, apply_query_config, run_experiment
from drivebench.experiments.grid.spec import (
    EXIT_BAD_FILE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ConfigSpec,
    ExperimentSpec,
    SpecError,
    build_sim_config,
    known_keys,
    load_spec,
    parse_spec,
)

__all__ = [
    "EXIT_BAD_FILE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "ConfigRun",
    "ConfigSpec",
    "ExperimentRun",
    "ExperimentSpec",
    "SpecError",
    "analyse",
    "apply_query_config",
    "augment",
    "build_sim_config",
    "diagnose",
    "known_keys",
    "load_spec",
    "metric_table",
    "moved_most",
    "parse_spec",
    "run_experiment",
]
