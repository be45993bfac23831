"""The experiment file: its keys, checked, parsed into an ``ExperimentSpec`` (``load_spec``, ``parse_spec``)."""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
            {"url": self.url} if self.url is not None else {"sim": jsonable(dataclasses.asdict(self.sim))}
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


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
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
