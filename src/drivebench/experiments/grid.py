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
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import itertools
import json
import math
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from drivebench.errors import DrivebenchError
from drivebench.simulator.backend import SimConfig

#: SimConfig fields that decide how the index is built: configurations equal on these share one simulator.
INDEX_FIELDS = (
    "embedder",
    "extract",
    "chunking",
    "index",
    "vector_store",
    "vector_store_dir",
    "cache_dir",
    "use_cache",
)
#: Keys of a configuration that are not SimConfig fields.
RUN_KEYS = ("top_k", "answers", "url", "token_env")
DEFAULT_TOKEN_ENV = "DRIVEBENCH_TOKEN"
LABEL_KEYS = ("name", "lever")
EXPERIMENT_KEYS = (
    "name",
    "corpus",
    "corpora",
    "evalset",
    "evalsets",
    "answers",
    "ks",
    "top_k",
    "seed",
    "concurrency",
    "metrics",
    "results",
)
TOP_LEVEL_KEYS = ("experiment", "baseline", "variant", "grid")
DEFAULT_TOP_K = 10

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

EXIT_OK = 0
EXIT_FAILED = 1  # a configuration's run failed (errors, empty results) or leaked
EXIT_BAD_FILE = 2
EXIT_INTERRUPTED = 130


class SpecError(DrivebenchError):
    """A bad experiment file (exit 2)."""


# ---------------------------------------------------------------------------------------------------- the file


@dataclass(frozen=True)
class ConfigSpec:
    """One configuration of the grid: its SimConfig, recall depth, answer mode, label and what it changes."""

    name: str
    sim: SimConfig
    top_k: int
    answers: bool
    lever: str
    changes: dict[str, Any]  # the flat keys (``chunking.max_chars``) that differ from the baseline's table
    baseline: bool = False
    url: str | None = None  # an endpoint over HTTP instead of an in-process simulator
    token_env: str = DEFAULT_TOKEN_ENV  # the environment variable holding the endpoint's evaluation token

    def index_key(self) -> tuple[Any, ...]:
        if self.url is not None:
            return ("url", self.url)
        return tuple(repr(getattr(self.sim, f)) for f in INDEX_FIELDS if hasattr(self.sim, f))

    def settings(self) -> dict[str, Any]:
        """What decides this configuration's run (stored in its run directory: a change re-runs it; never a token)."""
        what: dict[str, Any] = (
            {"url": self.url} if self.url is not None else {"sim": _jsonable(dataclasses.asdict(self.sim))}
        )
        return {**what, "top_k": self.top_k, "answers": self.answers}


@dataclass(frozen=True)
class Dataset:
    corpus: str
    evalset: Path | None  # None: the corpus's own evalset.jsonl

    @property
    def id(self) -> str:
        name = self.corpus if not Path(self.corpus).is_dir() else Path(self.corpus).name
        slug = name if self.evalset is None else f"{name}--{self.evalset.stem}"
        return "".join(c if c.isalnum() or c in "@.-_" else "_" for c in slug)


@dataclass(frozen=True)
class ExperimentSpec:
    name: str
    path: Path | None
    configs: list[ConfigSpec]
    datasets: list[Dataset]
    ks: tuple[int, ...] = (1, 3, 5, 10)
    seed: int = 0
    concurrency: int = 8
    metrics: tuple[str, ...] = ()
    results: Path | None = None

    @property
    def baseline(self) -> ConfigSpec:
        return self.configs[0]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _sim_fields() -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(SimConfig)}


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def known_keys() -> list[str]:
    """Every key a configuration table accepts (nested ones as ``extract.pdf``)."""
    out = []
    for name, f in _sim_fields().items():
        default = _default_of(f)
        if dataclasses.is_dataclass(default):
            out += [f"{name}.{g.name}" for g in dataclasses.fields(default)]
        else:
            out.append(name)
    return out + list(RUN_KEYS) + list(LABEL_KEYS)


def _flatten(table: Mapping[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    """``{"chunking": {"max_chars": 300}}`` and ``{"chunking.max_chars": 300}`` both as ``{"chunking.max_chars": 300}``."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, where, f"{full}."))
        else:
            out[full] = value
    return out


def _unknown(key: str, where: str, path: Path | None) -> SpecError:
    return SpecError(
        f"[{where}] unknown key {key!r}",
        hint=f"known keys: {', '.join(known_keys())}",
        path=path,
    )


def _check_value(key: str, value: Any, default: Any, where: str, path: Path | None) -> Any:
    """The value, converted where the field wants it (a path), or a SpecError when its type is not the field's."""
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and (default is None or isinstance(default, bool))
    elif isinstance(default, int | float):
        ok = isinstance(value, int | float)
        if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float):
            ok = False
    elif isinstance(default, str):
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, str | int | float | list)
    if not ok:
        raise SpecError(
            f"[{where}] {key} = {value!r}: expected a {type(default).__name__}",
            path=path,
        )
    return value


def build_sim_config(flat: Mapping[str, Any], where: str, path: Path | None = None) -> SimConfig:
    """A SimConfig from flat keys (``pipeline``, ``chunking.max_chars``): unknown keys and bad values are SpecErrors."""
    fields = _sim_fields()
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in flat.items():
        head, _, rest = key.partition(".")
        if head not in fields:
            raise _unknown(key, where, path)
        default = _default_of(fields[head])
        if dataclasses.is_dataclass(default):
            sub = {g.name: g for g in dataclasses.fields(default)}
            if not rest or rest not in sub:
                raise _unknown(key, where, path)
            nested.setdefault(head, {})[rest] = _check_value(key, value, getattr(default, rest), where, path)
        elif rest:
            raise _unknown(key, where, path)
        else:
            value = _check_value(key, value, default, where, path)
            if head.endswith("_dir") and isinstance(value, str):
                value = Path(value)
            top[head] = value
    try:
        for head, values in nested.items():
            top[head] = dataclasses.replace(_default_of(fields[head]), **values)
        config = SimConfig(**top)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"[{where}] {exc}", path=path) from exc
    _check_names(config, where, path)
    return config


def _check_names(config: SimConfig, where: str, path: Path | None) -> None:
    """The pipeline and embedder must exist (read from the search layer: a pipeline added there works here)."""
    from drivebench.search.index.embedders import canonical_name
    from drivebench.search.retrieval.pipelines import PIPELINES

    if config.pipeline not in PIPELINES:
        raise SpecError(
            f"[{where}] unknown pipeline {config.pipeline!r}", hint=f"known: {', '.join(PIPELINES)}", path=path
        )
    try:
        canonical_name(config.embedder)
    except ValueError as exc:
        raise SpecError(f"[{where}] {exc}", path=path) from exc


def _config_spec(
    where: str,
    base_flat: dict[str, Any],
    own: dict[str, Any],
    defaults: dict[str, Any],
    path: Path | None,
    *,
    baseline: bool = False,
) -> ConfigSpec:
    merged = {**base_flat, **own}
    name = str(merged.pop("name", "") or "")
    lever = merged.pop("lever", None)
    top_k = merged.pop("top_k", defaults["top_k"])
    answers = merged.pop("answers", defaults["answers"])
    url = merged.pop("url", None)
    token_env = merged.pop("token_env", DEFAULT_TOKEN_ENV)
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise SpecError(f"[{where}] url = {url!r}: expected an http:// or https:// URL", path=path)
    if not isinstance(token_env, str) or not token_env:
        raise SpecError(f"[{where}] token_env: expected the name of an environment variable", path=path)
    if url is not None:
        own_sim = [k for k in own if k not in (*RUN_KEYS, *LABEL_KEYS)]
        if own_sim:
            raise SpecError(
                f"[{where}] {own_sim[0]}: a configuration with a url is an endpoint; simulator keys do not apply to it",
                path=path,
            )
        merged = {}  # the endpoint is what it is: the baseline's simulator keys do not describe it
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 100:
        raise SpecError(f"[{where}] top_k = {top_k!r}: expected a whole number from 1 to 100", path=path)
    if not isinstance(answers, bool):
        raise SpecError(f"[{where}] answers = {answers!r}: expected true or false", path=path)
    sim = build_sim_config(merged, where, path)
    changes = {k: v for k, v in own.items() if k not in LABEL_KEYS and base_flat.get(k, _MISSING) != v}
    label = lever if isinstance(lever, str) and lever else ", ".join(f"{k}={v}" for k, v in changes.items())
    if not name:
        name = "baseline" if baseline else (label or "variant")
    return ConfigSpec(
        name=name,
        sim=sim,
        top_k=top_k,
        answers=answers,
        lever=label or ("baseline" if baseline else "same as baseline"),
        changes=changes,
        baseline=baseline,
        url=url,
        token_env=token_env,
    )


_MISSING = object()


def _str_list(value: Any, key: str, path: Path | None) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SpecError(f"[experiment] {key}: expected a string or a list of strings", path=path)


def parse_spec(data: Mapping[str, Any], path: Path | None = None) -> ExperimentSpec:
    """An ``ExperimentSpec`` from the parsed TOML (``path``: where relative eval-set paths start)."""
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise SpecError(f"unknown table or key {key!r}", hint=f"known: {', '.join(TOP_LEVEL_KEYS)}", path=path)
    exp = data.get("experiment", {})
    if not isinstance(exp, dict):
        raise SpecError("[experiment] must be a table", path=path)
    for key in exp:
        if key not in EXPERIMENT_KEYS:
            raise SpecError(
                f"[experiment] unknown key {key!r}", hint=f"known keys: {', '.join(EXPERIMENT_KEYS)}", path=path
            )
    base_dir = path.parent if path is not None else Path.cwd()
    corpora = _str_list(exp.get("corpora", exp.get("corpus", "acme-zh@3")), "corpora", path)
    evalsets = _str_list(exp.get("evalsets", exp.get("evalset", [])), "evalsets", path)
    if not corpora:
        raise SpecError("[experiment] corpora: give at least one corpus", path=path)
    resolved_sets: list[Path | None] = [(base_dir / e).resolve() for e in evalsets] or [None]
    for e in resolved_sets:
        if e is not None and not e.is_file():
            raise SpecError(f"[experiment] eval set {e} does not exist", path=path)
    ks = exp.get("ks", [1, 3, 5, 10])
    if not (isinstance(ks, list) and ks and all(isinstance(k, int) and not isinstance(k, bool) and k > 0 for k in ks)):
        raise SpecError("[experiment] ks: expected a list of positive whole numbers", path=path)
    defaults = {"top_k": exp.get("top_k", max(DEFAULT_TOP_K, *ks)), "answers": exp.get("answers", False)}
    base_table = data.get("baseline", {})
    if not isinstance(base_table, dict):
        raise SpecError("[baseline] must be a table", path=path)
    base_flat = _flatten(base_table, "baseline")
    baseline = _config_spec("baseline", {}, base_flat, defaults, path, baseline=True)
    base_flat.pop("name", None)
    base_flat.pop("lever", None)
    configs = [baseline]
    variants = data.get("variant", [])
    if not isinstance(variants, list):
        raise SpecError("[[variant]] must be an array of tables (write [[variant]], not [variant])", path=path)
    for i, v in enumerate(variants, 1):
        configs.append(_config_spec(f"variant {i}", base_flat, _flatten(v, f"variant {i}"), defaults, path))
    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError("[grid] must be a table of axes", path=path)
    axes = _flatten(grid, "grid")
    for key, values in axes.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"[grid] {key}: expected a non-empty list of values", path=path)
    for combo in itertools.product(*axes.values()) if axes else []:
        own = dict(zip(axes, combo, strict=True))
        configs.append(_config_spec(f"grid {own}", base_flat, own, defaults, path))
    if len(configs) < 2:
        raise SpecError("nothing to compare: add a [[variant]] or a [grid] axis besides the [baseline]", path=path)
    names = [c.name for c in configs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SpecError(f"two configurations share the name {dupes[0]!r}", hint="give each a distinct name", path=path)
    metrics = exp.get("metrics", [])
    results = exp.get("results")
    return ExperimentSpec(
        name=str(exp.get("name") or (path.stem if path is not None else "experiment")),
        path=path,
        configs=configs,
        datasets=[Dataset(c, e) for c in corpora for e in resolved_sets],
        ks=tuple(sorted(set(ks))),
        seed=int(exp.get("seed", 0)),
        concurrency=int(exp.get("concurrency", 8)),
        metrics=tuple(_str_list(metrics, "metrics", path)),
        results=(base_dir / results) if isinstance(results, str) else None,
    )


def load_spec(path: Path) -> ExperimentSpec:
    """Read and check an experiment file; any problem is a ``SpecError`` (or the TOML parser's error)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SpecError(f"no experiment file {path}", path=path) from exc
    return parse_spec(data, path)


# ---------------------------------------------------------------------------------------------------- running


@dataclass
class ConfigRun:
    config: str
    dataset: str
    dir: Path
    result: dict[str, Any] | None = None
    state: str = "pending"  # complete | partial | failed
    ran: bool = False  # False: a complete run found in the results dir was reused
    resumed: int = 0  # records carried over from a partial run
    elapsed_s: float = 0.0
    index_s: float = 0.0


@dataclass
class ExperimentRun:
    spec: ExperimentSpec
    results_dir: Path
    runs: dict[tuple[str, str], ConfigRun] = field(default_factory=dict)  # (dataset id, config name)
    interrupted: bool = False
    elapsed_s: float = 0.0
    index_builds: int = 0

    @property
    def ran(self) -> list[ConfigRun]:
        return [r for r in self.runs.values() if r.ran]


def _answer_target(sim: Any) -> Any:
    """The in-process target plus ``answer``: recall and the simulator's extractive answer, the same code as
    ``POST /api/mcp/answer`` (``server.api.answer.answer_for``)."""
    from drivebench.drive.errors import DriveError, PermissionCheckFailed
    from drivebench.formats.evalset import EvalQuery, RunHit
    from drivebench.formats.target import TargetError, TargetResponse
    from drivebench.server.api.answer import answer_for
    from drivebench.server.api.schemas import AnswerRequest
    from drivebench.simulator.target import InProcessTarget

    class InProcessAnswerTarget(InProcessTarget):
        def _answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
            assert self._token is not None
            req = AnswerRequest(
                query=query.query,
                top_k=top_k,
                user_id=query.user_id,
                user_role=query.user_role,
                department=query.department,
                as_of=query.as_of,
            )
            try:
                resp = answer_for(self.sim, self._token, req)
            except PermissionCheckFailed as exc:
                raise TargetError(f"503 permission check failed: {exc}", retryable=False) from exc
            except DriveError as exc:
                raise TargetError(f"{exc.code}: {exc}", retryable=False) from exc
            hits = [RunHit(doc_id=h.doc_id, version_id=h.version_id, score=h.score, rank=h.rank) for h in resp.results]
            return TargetResponse(
                hits=hits,
                answer=resp.answer,
                as_of=resp.as_of.isoformat() if resp.as_of is not None else None,
                snapshot=resp.snapshot,
                faults=self.sim.faults.header_value(),
            )

        async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
            return await asyncio.to_thread(self._answer, query, top_k)

    return InProcessAnswerTarget(sim)


def _token_for(config: ConfigSpec) -> str:
    """The endpoint's evaluation token, from the environment variable ``token_env`` (never from the file)."""
    import os

    token = os.environ.get(config.token_env)
    if not token:
        raise SpecError(
            f"configuration {config.name!r}: ${config.token_env} is empty",
            hint=f"set {config.token_env} to the endpoint's evaluation token (or name another variable: token_env)",
        )
    return token


def _http_target(config: ConfigSpec) -> Any:
    """The evaluator's HTTP target for a configuration's ``url``."""
    from drivebench.evaluator.targets.http import HttpTarget

    return HttpTarget(config.url, _token_for(config))


def apply_query_config(sim: Any, config: SimConfig) -> None:
    """Point a loaded simulator at ``config``'s query-time options (its index-time fields must be the same)."""
    reconfigure = getattr(sim, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(config)
        return
    sim.config = config
    sim.retriever = sim.retriever_for(config.pipeline)


def _complete(run_dir: Path, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The metrics of a complete run in ``run_dir`` made with ``settings``, else None."""
    from drivebench.evaluator.journal import read_run_config

    try:
        recorded = read_run_config(run_dir)
    except (ValueError, OSError):
        return None
    metrics = run_dir / "metrics.json"
    if not recorded or recorded.get("state") != "complete" or recorded.get("settings") != settings:
        return None
    if not metrics.is_file():
        return None
    loaded = json.loads(metrics.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) and not loaded.get("partial") else None


def run_experiment(
    spec: ExperimentSpec,
    results_dir: Path,
    *,
    progress: Callable[[int, int, str], None] | None = None,
    loading: Callable[[str], Any] | None = None,
    interrupt: Any = None,
) -> ExperimentRun:
    """Run every configuration on every dataset (skipping complete runs, resuming partial ones).
    ``progress(done, total, what)`` counts queries answered over configs x queries; ``loading(what)`` wraps an index
    build (a context manager, the CLI's spinner); ``interrupt`` (``evaluator.runner.Interrupt``) stops early."""
    from contextlib import nullcontext

    from drivebench.corpora.builtin import corpus_version, resolve_corpus
    from drivebench.corpora.evalset_fit import check_evalset_fits
    from drivebench.evaluator.catalog import Catalog
    from drivebench.evaluator.evaluate import evalset_hash, write_outputs
    from drivebench.evaluator.evaluate import evaluate as run_evaluation
    from drivebench.evaluator.idmap import id_mapper_for
    from drivebench.evaluator.journal import RunJournal, read_records, write_run_config
    from drivebench.evaluator.oracle import corpus_oracle
    from drivebench.evaluator.runner import RunConfig
    from drivebench.formats.corpus import load_manifest
    from drivebench.formats.evalset import load_evalset
    from drivebench.simulator.backend import Simulator

    started = time.monotonic()
    for c in spec.configs:  # a missing token is found before anything runs
        if c.url is not None:
            _token_for(c)
    out = ExperimentRun(spec, Path(results_dir))
    prepared = []
    for ds in spec.datasets:
        try:
            corpus_dir = resolve_corpus(ds.corpus)
        except KeyError as exc:
            raise SpecError(f"[experiment] unknown corpus {ds.corpus!r}", path=spec.path) from exc
        evalset = ds.evalset or corpus_dir / "evalset.jsonl"
        queries = load_evalset(evalset)
        try:
            check_evalset_fits(queries, corpus_dir, ds.corpus)
        except ValueError as exc:
            raise SpecError(f"[experiment] {exc}", path=spec.path) from exc
        prepared.append((ds, corpus_dir, evalset, queries))
    total = sum(len(q) for *_, q in prepared) * len(spec.configs)
    done = [0]

    def tick(what: str) -> Callable[[], None]:
        def step() -> None:
            done[0] += 1
            if progress is not None:
                progress(done[0], total, what)

        return step

    if progress is not None:
        progress(0, total, "")
    for ds, corpus_dir, evalset, queries in prepared:
        oracle = catalog = None
        info_base = {
            "evalset": str(evalset),
            "evalset_hash": evalset_hash(evalset),
            "corpus": ds.corpus,
            "corpus_version": corpus_version(corpus_dir),
            "experiment": spec.name,
        }
        # a run is reused only on the same eval set (its hash), corpus version, cutoffs and seed
        same_data = {
            "evalset_hash": info_base["evalset_hash"],
            "corpus_version": info_base["corpus_version"],
            "ks": list(spec.ks),
            "seed": spec.seed,
        }
        pending: list[ConfigSpec] = []
        for c in spec.configs:
            run_dir = out.results_dir / ds.id / c.name
            run = out.runs[(ds.id, c.name)] = ConfigRun(c.name, ds.id, run_dir)
            found = _complete(run_dir, {**c.settings(), **same_data})
            if found is not None:
                run.result, run.state = found, "complete"
                done[0] += len(queries)
                if progress is not None:
                    progress(done[0], total, f"{c.name}: already complete")
            else:
                pending.append(c)
        # configurations sharing an index run one after the other; one simulator is alive at a time
        groups: dict[tuple[Any, ...], list[ConfigSpec]] = {}
        for c in pending:
            groups.setdefault(c.index_key(), []).append(c)
        for members in groups.values():
            if interrupt is not None and interrupt.requested:
                break
            t0 = time.monotonic()
            first = members[0]
            remote = first.url is not None
            label = f"loading {ds.corpus}'s oracle" if remote else f"indexing {ds.corpus} for {first.name}"
            with loading(label) if loading else nullcontext():
                sim = None if remote else Simulator.from_corpus(corpus_dir, first.sim)
                if oracle is None:
                    oracle = corpus_oracle(corpus_dir)
                    catalog = Catalog.from_manifest(load_manifest(corpus_dir))
            out.index_builds += 0 if remote else 1
            index_s = time.monotonic() - t0
            for c in members:
                if interrupt is not None and interrupt.requested:
                    break
                run = out.runs[(ds.id, c.name)]
                if sim is not None:
                    apply_query_config(sim, c.sim)
                target = _answer_target(sim) if sim is not None else _http_target(c)
                journal_path = run.dir / "run.jsonl"
                settings = {**c.settings(), **same_data}
                prior = []
                recorded = None
                try:
                    from drivebench.evaluator.journal import read_run_config

                    recorded = read_run_config(run.dir)
                except (ValueError, OSError):
                    recorded = None
                if recorded and recorded.get("settings") == settings and journal_path.is_file():
                    prior = read_records(journal_path)
                run.resumed = len(prior)
                done[0] += len(prior)
                write_run_config(run.dir, {"state": "running", "config": c.name, "settings": settings})
                journal = RunJournal(journal_path, resume=bool(prior))
                t1 = time.monotonic()
                try:
                    evaluation = run_evaluation(
                        target,
                        queries,
                        ks=spec.ks,
                        run_config=RunConfig(
                            top_k=c.top_k,
                            concurrency=spec.concurrency,
                            mode="answer" if c.answers else "recall",
                            seed=spec.seed,
                        ),
                        oracle=oracle,
                        catalog=catalog,
                        progress=tick(c.name),
                        run_info={
                            **info_base,
                            "label": c.name,
                            "lever": c.lever,
                            "target": c.url or f"inprocess:{c.name}",
                        },
                        id_mapper=id_mapper_for("doc_id", corpus_dir, None),
                        done=prior,
                        interrupt=interrupt,
                        on_record=journal.append,
                    )
                finally:
                    journal.close()
                write_outputs(evaluation, run.dir)
                run.result = evaluation.result
                run.ran = True
                run.elapsed_s = time.monotonic() - t1
                run.index_s = index_s if c is first else 0.0
                run.state = "partial" if evaluation.partial else ("failed" if evaluation.failed else "complete")
                write_run_config(
                    run.dir,
                    {"state": "partial" if evaluation.partial else "complete", "config": c.name, "settings": settings},
                )
                if evaluation.partial:
                    out.interrupted = True
            del sim
        if interrupt is not None and interrupt.requested:
            out.interrupted = True
            break
    out.elapsed_s = time.monotonic() - started
    return out


# ---------------------------------------------------------------------------------------------------- comparing


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
            results = [r.result for r in runs]  # type: ignore[union-attr]
            info = results[0].get("run_info") or {}  # type: ignore[union-attr]
            entry.update(corpus_version=info.get("corpus_version"), evalset=info.get("evalset"))
            entry["queries"] = len(results[0].get("per_query") or [])  # type: ignore[union-attr]
            tables = metric_table(results, spec.configs, spec.seed)  # type: ignore[arg-type]
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
                "changes": _jsonable(c.changes),
                "top_k": c.top_k,
                "answers": c.answers,
                "sim": _jsonable(dataclasses.asdict(c.sim)),
            }
            for c in spec.configs
        ],
        "datasets": datasets,
        "exit_code": exit_code,
    }
